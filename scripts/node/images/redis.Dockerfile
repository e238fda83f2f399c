# redis:7.4 as KubeRay's test support names it (test/support/redis.go), made from Debian's
# redis-server (7.0 in bookworm: the commands KubeRay's tests and Ray's GCS use are the same).
FROM localhost/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/*
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no", "--bind", "0.0.0.0"]
