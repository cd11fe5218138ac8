// Standalone worker process: `bun run worker` (any number of them against one Temporal cluster).
// Logs are JSON lines on stdout (lib/log.ts) at LOG_LEVEL. On SIGTERM or SIGINT the worker stops
// polling, lets running activities finish (a publish in progress is completed, not cut off) for up
// to SHUTDOWN_GRACE_TIME, then closes its connections and exits 0. A second signal exits at once
// (an activity cut off that way is retried elsewhere once its heartbeat times out).
import { loadConfig } from '../lib/config.ts';
import { createOrm } from '../db/orm.ts';
import { createConnectors } from '../platforms/index.ts';
import { createStorage } from '../storage/index.ts';
import { connectWorker, ensureSearchAttributes } from './temporal.ts';
import { createWorker, installRuntime } from './index.ts';
import { createLogger } from '../lib/log.ts';

/** Running activities may take this long to finish after SIGTERM (orchestrators usually allow 30 s). */
const SHUTDOWN_GRACE_TIME = '25 seconds';
/** Past this, the worker gives up draining (GracefulShutdownPeriodExpiredError) and exits 1. */
const SHUTDOWN_FORCE_TIME = '28 seconds';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const logger = createLogger({ level: config.logLevel, base: { service: 'worker' } });
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
installRuntime(config.logLevel);
const connection = await connectWorker(config.temporal);
// Also here, not only in the API: an API started while Temporal was down could not register them.
await ensureSearchAttributes(connection, config.temporal.namespace).catch((err) => {
  logger.warn('could not register search attributes; an operator must create PostId and OrganizationId (Keyword)', { error: err });
});
const worker = await createWorker({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  deps: { orm, connectors: createConnectors(config.platforms, config.outbound), credentialsKey: config.credentialsKey, storage: createStorage(config), vision: config.vision },
  shutdownGraceTime: SHUTDOWN_GRACE_TIME,
  shutdownForceTime: SHUTDOWN_FORCE_TIME,
});

let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals === 1) {
      logger.info('shutting down: no new tasks, waiting for running activities', { signal, graceTime: SHUTDOWN_GRACE_TIME });
      worker.shutdown();
    } else {
      logger.warn('second signal: exiting without waiting for running activities', { signal });
      process.exit(1);
    }
  });
}

logger.info('polling', { taskQueue: config.temporal.taskQueue, address: config.temporal.address, namespace: config.temporal.namespace, pid: process.pid });
let exitCode = 0;
try {
  await worker.run();
} catch (err) {
  logger.error('worker stopped with an error', { error: err });
  exitCode = 1;
}
const closed = await Promise.allSettled([connection.close(), orm.close()]);
for (const c of closed) if (c.status === 'rejected') logger.warn('error while closing a connection', { error: c.reason });
logger.info('stopped', { exitCode });
process.exit(exitCode);
