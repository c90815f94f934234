# One image for every Metronome service; the compose file picks the command.
FROM node:20.19.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY infra/build.mjs infra/swc-options.mjs infra/
COPY libs libs
COPY services services
COPY console console
# the services, then the operator console the API serves at / (console/dist)
RUN npm ci --no-audit --no-fund && node infra/build.mjs && npm run build --workspace console --silent && npm prune --omit=dev

FROM node:20.19.0-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app /app
COPY migrations migrations
USER node
# Exec form, node itself: SIGTERM from `docker stop` goes straight to node, which drains and
# exits 0 (a shell or npm in between would either swallow it or die without passing it on).
CMD ["node", "services/control-api/dist/server.js"]
