# rancher/curl as KubeRay's test support names it: curl from Debian, as the entry point.
FROM localhost/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
ENTRYPOINT ["curl"]
