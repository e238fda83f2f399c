# rayproject/ray:2.60.0 as KubeRay's tests and samples rely on it, made from Debian bookworm and
# Ray's wheel from PyPI (no image registry is reachable here): Python 3.11 with ray[default] on
# the default PATH (the operator starts Ray with `bash -lc`, and Debian's /etc/profile resets PATH,
# so no virtualenv), wget for KubeRay's probes, user ray (uid 1000) in /home/ray.
FROM localhost/debian:bookworm
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      python3 python3-pip python-is-python3 wget curl ca-certificates procps sudo \
    && rm -rf /var/lib/apt/lists/*
ARG RAY_VERSION=2.60.0
# scripts/node/build-images.sh mounts the host's pip cache (the wheels the control-plane build
# already downloaded are not fetched again) and the host's CA bundle (a machine whose egress
# goes through a TLS-inspecting proxy trusts its CA there); neither stays in the image.
RUN if [ -s /run/host-ca.crt ]; then export PIP_CERT=/run/host-ca.crt; fi \
    && pip install --break-system-packages --disable-pip-version-check -q \
      "ray[default]==${RAY_VERSION}" \
    && ray --version
# Pods have no way out of the node: pip (Ray's `runtime_env: pip`) installs from the node's
# package mirror (scripts/node/nodeconfig.py, MIRROR_PORT), as in an air-gapped cluster.
ARG NODE_MIRROR=http://172.29.0.1:3141/
RUN printf '[global]\nno-index = true\nfind-links = %s\ntrusted-host = %s\n' "$NODE_MIRROR" \
      "$(echo "$NODE_MIRROR" | cut -d/ -f3 | cut -d: -f1)" >/etc/pip.conf
RUN useradd --uid 1000 --gid 100 --create-home --shell /bin/bash ray \
    && echo 'ray ALL=NOPASSWD: ALL' >/etc/sudoers.d/ray
USER 1000:100
WORKDIR /home/ray
ENV HOME=/home/ray
