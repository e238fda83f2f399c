# The node's pod sandbox image: scripts/node/pause.c, static, alone in the image.
FROM localhost/debian:bookworm AS build
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/node/pause.c /pause.c
RUN gcc -static -Os -Wall -Werror -o /pause /pause.c && strip /pause

FROM scratch
COPY --from=build /pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
