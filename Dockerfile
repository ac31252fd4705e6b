# Sluice: the server, the client library's build and the web app's build, on Node.js 24.
# Build: docker build -t sluice .   Run: see docker-compose.yml and docs/operations.md ("Container").

# The base image, pinned by the digest of node:24-bookworm-slim's multi-platform index, so a rebuild
# uses the same bytes; to update, take the tag's current digest (docker buildx imagetools inspect).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:235600a8101ab264e117b1768e925532262668dc9b581ef1dd7d96ced463b8e7

# --- build: install every workspace (the install script builds the server and the web app), build the rest, then
# drop the development dependencies so only what runs is copied on.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
RUN npm install --no-audit --no-fund \
 && npm run build --workspaces --if-present \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf bench packages/*/test .ci

# --- runtime: the pruned tree, owned by root and read-only to the unprivileged user that runs it.
# The root file system may be mounted read-only (docker-compose.yml does): only /data is written.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    SLUICE_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Node.js exits with the process; SIGTERM is Sluice's graceful shutdown (drain, release, exit 0).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "packages/server/dist/cli/main.js"]
CMD ["start"]
