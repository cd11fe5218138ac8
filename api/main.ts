// Standalone API process (production / scale-out): `bun run api`. Needs DATABASE_URL.
// Logs are JSON lines on stdout (lib/log.ts) at LOG_LEVEL. On SIGTERM or SIGINT the server stops
// accepting connections at once, lets the requests in flight finish (at most
// SHUTDOWN_GRACE_MS, server/run.ts), then closes the Temporal connection and the Postgres pools and exits 0.
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import type { Connection } from '@temporalio/client';
import { startServer, temporalDeps } from '../server/run.ts';
import { ensureSearchAttributes, lazyClient } from '../worker/temporal.ts';
import { withTemporalDeadline } from '../domain/temporal-calls.ts';
import { createLogger } from '../lib/log.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const logger = createLogger({ level: config.logLevel, base: { service: 'api' } });
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
await migrate(orm);
// Lazy: the API starts and serves reads while Temporal is down (docs/decisions.md "Outages").
const client = lazyClient(config.temporal);
const temporal = temporalDeps(config, client);
await withTemporalDeadline(temporal, () => ensureSearchAttributes(client.connection as Connection, config.temporal.namespace)).catch(
  (err) => {
    logger.warn(
      'could not register search attributes (Temporal unreachable, or no permission); the workers register them when they start, or an operator creates PostId and OrganizationId (Keyword)',
      { error: err },
    );
  },
);
const server = startServer(config, { orm, temporal, logger });
logger.info('listening', { url: `http://${config.host}:${server.port}/v1`, port: server.port, pid: process.pid });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    // A second signal: do not wait any longer for slow requests.
    logger.warn('second signal: closing the open connections now', { signal, pendingRequests: server.pendingRequests() });
    void server.closeConnections();
    return;
  }
  stopping = true;
  logger.info('shutting down: refusing new connections, finishing requests in flight', {
    signal,
    pendingRequests: server.pendingRequests(),
  });
  const { drained } = await server.stop();
  const closed = await Promise.allSettled([client.connection.close(), orm.close()]);
  for (const c of closed) if (c.status === 'rejected') logger.warn('error while closing a connection', { error: c.reason });
  logger.info('stopped', { drained });
  process.exit(drained ? 0 : 1);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void shutdown(signal));
