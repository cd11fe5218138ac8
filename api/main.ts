// Standalone API process (production / scale-out): `bun run api`. Needs DATABASE_URL.
// Logs are JSON lines on stdout (lib/log.ts) at LOG_LEVEL. On SIGTERM or SIGINT the server stops
// accepting connections at once, lets the requests in flight finish (at most
// SHUTDOWN_GRACE_MS), then closes the Temporal connection and the Postgres pools and exits 0.
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import type { Connection } from '@temporalio/client';
import { createApp, MAX_REQUEST_BODY_BYTES } from './app.ts';
import { createStorage } from '../storage/index.ts';
import { createRateLimiter, createRateLimiterPool } from '../services/rate-limit.ts';
import { ensureSearchAttributes, lazyClient } from '../worker/temporal.ts';
import { withTemporalDeadline } from '../services/temporal-calls.ts';
import { createLogger } from '../lib/log.ts';

/** How long requests in flight may take to finish after SIGTERM (orchestrators usually allow 30 s). */
const SHUTDOWN_GRACE_MS = 25_000;

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const logger = createLogger({ level: config.logLevel, base: { service: 'api' } });
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
await migrate(orm);
// Lazy: the API starts and serves reads while Temporal is down (docs/decisions.md "Outages").
const client = lazyClient(config.temporal);
const temporal = { client, taskQueue: config.temporal.taskQueue, requestTimeoutMs: config.temporal.requestTimeoutMs };
await withTemporalDeadline(temporal, () => ensureSearchAttributes(client.connection as Connection, config.temporal.namespace))
  .catch((err) => {
    logger.warn('could not register search attributes (Temporal unreachable, or no permission); the workers register them when they start, or an operator creates PostId and OrganizationId (Keyword)', { error: err });
  });
const storage = createStorage(config);
const pool = createRateLimiterPool(config.databaseUrl!, (err) => logger.warn('rate-limit pool: a Postgres connection was dropped', { error: err }));
const app = createApp({
  orm,
  temporal,
  storage,
  rateLimiter: createRateLimiter(pool),
  log: logger.sink,
}).listen({
  port: config.port,
  hostname: config.host,
  maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
});
const server = app.server!;
logger.info('listening', { url: `http://${config.host}:${server.port}/v1`, port: server.port, pid: process.pid });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    // A second signal: do not wait any longer for slow requests.
    logger.warn('second signal: closing the open connections now', { signal, pendingRequests: server.pendingRequests });
    void server.stop(true);
    return;
  }
  stopping = true;
  logger.info('shutting down: refusing new connections, finishing requests in flight', { signal, pendingRequests: server.pendingRequests });
  // stop(false): the listener closes now; the promise resolves once the requests in flight are answered.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([
    app.stop(false).then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), SHUTDOWN_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (!drained) {
    logger.warn('grace period over: closing the remaining connections', { pendingRequests: server.pendingRequests, graceMs: SHUTDOWN_GRACE_MS });
    await server.stop(true);
  }
  // The last requests' log lines are written from a setImmediate after their response: let them run.
  await new Promise((resolve) => setTimeout(resolve, 25));
  const closed = await Promise.allSettled([client.connection.close(), pool.end(), orm.close()]);
  for (const c of closed) if (c.status === 'rejected') logger.warn('error while closing a connection', { error: c.reason });
  logger.info('stopped', { drained });
  process.exit(drained ? 0 : 1);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal));
