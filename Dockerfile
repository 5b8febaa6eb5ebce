# syntax=docker/dockerfile:1
# booking-calendar-api: built with tsc, run with production dependencies only,
# as the unprivileged `node` user. The same image runs the compose stack's
# one-shot `seed` job (node dist/scripts/seed.js).

# Build: all dependencies, TypeScript to JavaScript in dist/.
FROM node:20-alpine AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY server ./server
COPY db ./db
COPY scripts/seed.ts ./scripts/seed.ts
RUN npm run build

# Production dependencies only: no TypeScript, no test tools.
FROM node:20-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:20-alpine
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 8080
# /healthz makes no database call: "the process serves", not "the database answers" (that is /readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM reaches node itself (exec form, PID 1): the cluster's primary, which stops every worker
# gracefully within SHUTDOWN_GRACE_MS (WORKERS sets how many; one per core by default).
CMD ["node", "dist/server/main.js"]
