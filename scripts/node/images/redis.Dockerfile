# redis:7.4 as KubeRay's test support names it (test/support/redis.go), made from Debian's
# redis-server (7.0 in bookworm: the commands KubeRay's tests and Ray's GCS use are the same).
# Laid out as the official image where KubeRay's samples rely on it: /data is the working
# directory their redis.conf names (`dir /data`).
FROM localhost/debian:bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
VOLUME /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no", "--bind", "0.0.0.0"]
