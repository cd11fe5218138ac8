// Standalone worker process: `bun run worker` (any number of them against one Temporal cluster).
// Logs are JSON lines on stdout (lib/log.ts) at LOG_LEVEL. On SIGTERM or SIGINT the worker stops
// polling, lets running activities finish (a publish in progress is completed, not cut off) for up
// to SHUTDOWN_GRACE_TIME (worker/run.ts), then closes its connections and exits 0. A second signal
// exits at once (an activity cut off that way is retried elsewhere once its heartbeat times out).
import { loadConfig } from '../lib/config.ts';
import { createOrm } from '../db/orm.ts';
import { createLogger } from '../lib/log.ts';
import { SHUTDOWN_GRACE_TIME, startWorker } from './run.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const logger = createLogger({ level: config.logLevel, base: { service: 'worker' } });
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
const worker = await startWorker(config, { orm, logger });

let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals === 1) {
      logger.info('shutting down: no new tasks, waiting for running activities', { signal, graceTime: SHUTDOWN_GRACE_TIME });
      void worker.stop();
    } else {
      logger.warn('second signal: exiting without waiting for running activities', { signal });
      process.exit(1);
    }
  });
}

logger.info('polling', {
  taskQueue: config.temporal.taskQueue,
  address: config.temporal.address,
  namespace: config.temporal.namespace,
  pid: process.pid,
});
let exitCode = 0;
try {
  await worker.done;
} catch (err) {
  logger.error('worker stopped with an error', { error: err });
  exitCode = 1;
}
await worker.stop();
await orm.close().catch((err) => logger.warn('error while closing a connection', { error: err }));
logger.info('stopped', { exitCode });
process.exit(exitCode);
