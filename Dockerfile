# mediaflow's production image: the install of docs/deploy.md (`npm ci --omit=dev`, which builds dist/ with
# sucrase) on Debian's ffmpeg and fonts. Build: `docker build -t mediaflow .`; run:
# `docker run -p 8000:8000 -v mediaflow-data:/data mediaflow`. Not built where it was written (no Docker engine
# there): docs/deploy.md#docker says what was checked instead.
FROM node:20-bookworm-slim

# ffmpeg and ffprobe on PATH are the ones mediaflow uses (before the optional ffmpeg-ffprobe-static package).
# fonts-noto-core draws captions in Latin, Greek, Cyrillic, Arabic, Hebrew, Devanagari, Thai and more;
# fontconfig (fc-list, for GET /fonts and the `font` fields) comes with ffmpeg's libraries. Chinese, Japanese and
# Korean need fonts-noto-cjk as well (91 MB more): add it to this line if your captions have them.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg fonts-noto-core \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The workspaces the lock file names (integrations/n8n, examples/plugin-thumbnail), so that npm ci installs what
# it installs in the fresh clone of scripts/check-production-install.sh; the example plugin is then loadable
# (MEDIAFLOW_PLUGINS=mediaflow-plugin-thumbnail). The n8n node's own files are not needed: n8n loads it, not this.
COPY package.json package-lock.json ./
COPY integrations/n8n/package.json integrations/n8n/
COPY examples/plugin-thumbnail/ examples/plugin-thumbnail/
# What the build (the prepare script: scripts/build.js and the module it imports) compiles and what the server
# reads: its pipelines and its render templates.
COPY scripts/build.js scripts/one-file-package.js scripts/
COPY bin/ bin/
COPY src/ src/
COPY pipelines/ pipelines/
COPY templates/ templates/
# The production install, as scripts/check-production-install.sh runs it. ffmpeg-ffprobe-static, an optional
# dependency, downloads its own ffmpeg at install; Debian's comes first on PATH, so that copy is removed
# (--omit=optional would also drop the whisper.cpp binding transcription uses).
RUN npm ci --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/ffmpeg-ffprobe-static \
  && npm cache clean --force

# Jobs, outputs and fetched whisper models live in /data: mount a volume there to keep them.
RUN mkdir /data && chown node:node /data
VOLUME /data
USER node
# 0.0.0.0: reachable from other containers and through -p (the default 127.0.0.1 is the container itself).
ENV HOST=0.0.0.0 PORT=8000 MEDIAFLOW_DATA_DIR=/data
EXPOSE 8000
# Exec form: node is PID 1 and gets docker stop's SIGTERM itself. Running jobs then get 25 s to finish and the
# process exits within 30 s; docker stop waits 10 s by default, so give it more (docker stop -t 60, or
# stop_grace_period: 60s in Compose, as the systemd unit of docs/deploy.md has TimeoutStopSec=60).
CMD ["node", "bin/mediaflow.js", "serve"]
