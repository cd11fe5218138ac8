# One image for both processes of the service (docker-compose.yml runs it twice):
#   API:    bun api/main.ts      (the default command)
#   worker: bun worker/main.ts
# Bun is pinned to the version scripts/setup.sh installs for development.
ARG BUN_VERSION=1.4.4

# --- dependencies: production only, exactly as locked -------------------------------------------
FROM oven/bun:${BUN_VERSION} AS deps
WORKDIR /app
COPY package.json bun.lock bunfig.toml ./
# Nothing at run time needs a devDependency (typescript, @temporalio/testing, fast-check, the
# type packages are for the tests and the typecheck). The trustedDependencies' install scripts
# run here (ffmpeg/ffprobe binaries, protobufjs, @swc/core for the workflow bundler).
RUN bun install --frozen-lockfile --production

# --- runtime ------------------------------------------------------------------------------------
FROM oven/bun:${BUN_VERSION}
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/app/.data
COPY --from=deps /app/node_modules ./node_modules
# The source, minus what .dockerignore leaves out (tests, benchmarks, local state, tools).
# Owned by root and read-only for the service user: the code cannot be changed at run time.
COPY . .
# DATA_DIR: the only place the service writes (the disk store, when STORAGE_DRIVER=disk).
RUN mkdir -p /app/.data && chown bun:bun /app/.data
# The `bun` user (uid 1000) comes with the base image.
USER bun
EXPOSE 3000
CMD ["bun", "api/main.ts"]
