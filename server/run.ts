// The HTTP part of a process (the API under /v1 and the web app), started and stopped the same way
// by `bun run api` (api/main.ts) and by the embedded stack (scripts/dev.ts): the app built from the
// configuration on PORT/HOST; stop() refuses new connections at once and lets the requests in
// flight finish (at most SHUTDOWN_GRACE_MS), then closes what it opened.
import { createConnectors } from '../platforms/index.ts';
import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { createRateLimiterPool } from '../services/rate-limit.ts';
import { createProcessCaches } from './caches.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { createStorage } from '../storage/index.ts';
import { useShortLinkBase } from '../domain/links/rewrite.ts';
import { webOptions } from '../web/options.ts';
import { createApp, MAX_REQUEST_BODY_BYTES } from './app.ts';

/** How long requests in flight may take to finish after stop() (orchestrators usually allow 30 s). */
export const SHUTDOWN_GRACE_MS = 25_000;

export interface RunningServer {
  port: number;
  pendingRequests: () => number;
  /**
   * Refuses new connections now; the requests in flight are answered (past SHUTDOWN_GRACE_MS
   * their connections are cut: drained false); then the admission counts are written and the
   * rate-limit pool closes. Once.
   */
  stop: () => Promise<{ drained: boolean }>;
  /** Cuts the open connections now (a second signal: do not wait for slow requests). */
  closeConnections: () => Promise<void>;
}

/** What the routes need of Temporal: the client and the configuration's queue and deadline. */
export function temporalDeps(config: Config, client: Client): TemporalDeps {
  return { client, taskQueue: config.temporal.taskQueue, requestTimeoutMs: config.temporal.requestTimeoutMs };
}

/**
 * Listens on config.port / config.host. The ORM and the Temporal client are the caller's, closed
 * by it after stop() (the embedded stack's worker still uses the ORM while it drains).
 */
export function startServer(config: Config, deps: { orm: Orm; temporal: TemporalDeps; logger: Logger }): RunningServer {
  const { logger } = deps;
  // The length checks count a link as the short link the worker will write on this base.
  useShortLinkBase(config.shortLinkBaseUrl);
  const pool = createRateLimiterPool(config.databaseUrl!, (err) =>
    logger.warn('rate-limit pool: a Postgres connection was dropped', { error: err }),
  );
  const caches = createProcessCaches({
    connectionString: config.databaseUrl!,
    pool,
    admission: config.admissionCache,
    pages: config.pageCache,
    onError: (message, err) => logger.warn(message, { error: err }),
  });
  const { rateLimiter, postPages } = caches;
  const app = createApp({
    orm: deps.orm,
    temporal: deps.temporal,
    storage: createStorage(config),
    rateLimiter,
    ...(postPages ? { postPages } : {}),
    log: logger.sink,
    ...(config.credentialsKey
      ? {
          webhooks: { credentialsKey: config.credentialsKey, outbound: config.outbound },
          platforms: { connectors: createConnectors(config.platforms, config.outbound), credentialsKey: config.credentialsKey },
        }
      : {}),
    // The generate scope's model endpoints and the policy for media fetched by URL (MCP).
    generate: config.generate,
    vision: config.vision,
    outbound: config.outbound,
    trustProxyHops: config.trustProxyHops,
    // The web app's settings come from the same configuration (web/options.ts).
    web: webOptions(config),
  }).listen({ port: config.port, hostname: config.host, maxRequestBodySize: MAX_REQUEST_BODY_BYTES });
  const server = app.server!;
  let stopped: Promise<{ drained: boolean }> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      // stop(false): the listener closes now; the promise resolves once the requests in flight are answered.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const drained = await Promise.race([
        app.stop(false).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (!drained) {
        logger.warn('grace period over: closing the remaining connections', {
          pendingRequests: server.pendingRequests,
          graceMs: SHUTDOWN_GRACE_MS,
        });
        await server.stop(true);
      }
      // The last requests' log lines are written from a setImmediate after their response: let them run.
      await new Promise((resolve) => setTimeout(resolve, 25));
      await caches.close().catch((err) => logger.warn('error while writing the admission counts', { error: err }));
      await pool.end().catch((err) => logger.warn('error while closing a connection', { error: err }));
      return { drained };
    })());
  return {
    port: server.port!,
    pendingRequests: () => server.pendingRequests,
    stop,
    closeConnections: () => server.stop(true),
  };
}
