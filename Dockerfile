# Rostra in a container. Build: docker build -t rostra .
# Run:   docker run --rm -it --env-file .env -v rostra-data:/data rostra discord
#        docker run --rm -it rostra demo "Should cities ban cars?" --duration 60
# Exit codes: 0 stopped cleanly, 1 a store or runtime failure, 2 a configuration error (a missing or
# rejected token, a bad config key): fix the configuration rather than restart (docker-compose.yml
# restarts on failure a few times only).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    ROSTRA_CONFIG=/app/config.yaml \
    ROSTRA_STORAGE__URL=sqlite:////data/rostra.db \
    ROSTRA_METRICS__PORT=9100 \
    ROSTRA_METRICS__HOST=0.0.0.0

WORKDIR /app
# Dependencies first, exactly as locked (versions and hashes, the wheel builder included): this layer
# is rebuilt only when requirements.lock changes, never for a code change.
COPY requirements.lock ./
RUN pip install --require-hashes --only-binary=:all: -r requirements.lock

# Then Rostra itself, without touching the dependencies installed above.
COPY pyproject.toml README.md LICENSE config.yaml ./
COPY core ./core
COPY adapters ./adapters
COPY bot ./bot
RUN pip install --no-deps --no-build-isolation . \
    && useradd --create-home --uid 10001 rostra \
    && mkdir -p /data && chown rostra /data

USER rostra
VOLUME ["/data"]
# Slack's HTTP mode listens here (slack.http_port); Discord and Socket Mode need no port.
EXPOSE 3000
# /metrics (Prometheus), /healthz (the store is writable), /readyz (and the platform is connected).
EXPOSE 9100
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9100/healthz', timeout=4)"]
ENTRYPOINT ["rostra"]
CMD ["--help"]
