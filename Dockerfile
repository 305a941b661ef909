# The chronolog image: one image for every fleet service and the CLI tools.
#   docker build -t chronolog .
#   docker run --rm chronolog topology /opt/chronolog/examples/traffic.lars
# docker-compose.yml runs the fleet from it (see ops/README.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# An unprivileged user owning the state directory (a volume in compose).
RUN groupadd --system --gid 10001 chronolog \
 && useradd --system --uid 10001 --gid chronolog --home-dir /var/lib/chronolog --shell /usr/sbin/nologin chronolog \
 && mkdir -p /var/lib/chronolog \
 && chown 10001:10001 /var/lib/chronolog

# Only what the package build needs (.dockerignore keeps the rest out); the
# build tree is dropped after the install, the examples stay in the image.
WORKDIR /opt/chronolog
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . \
 && mv src/chronolog/examples examples \
 && rm -rf src build pyproject.toml README.md

# The fleet interface's environment fallbacks: state under the volume,
# Prometheus metrics on 9400.
ENV CHRONOLOG_STATE_DIR=/var/lib/chronolog \
    CHRONOLOG_METRICS_PORT=9400
EXPOSE 9400
VOLUME ["/var/lib/chronolog"]

USER 10001:10001
WORKDIR /var/lib/chronolog
ENTRYPOINT ["chronolog"]
CMD ["--help"]
