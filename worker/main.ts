// Standalone worker process: `bun run worker` (any number of them against one Temporal cluster).
import { loadConfig } from '../lib/config.ts';
import { createOrm } from '../db/orm.ts';
import { createConnectors } from '../platforms/index.ts';
import { createStorage } from '../storage/index.ts';
import { connectWorker } from './temporal.ts';
import { createWorker, installRuntime } from './index.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
installRuntime(config.logLevel);
const connection = await connectWorker(config.temporal);
const worker = await createWorker({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  deps: { orm, connectors: createConnectors(config.platforms), credentialsKey: config.credentialsKey, storage: createStorage(config), vision: config.vision },
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
console.log(`worker: polling task queue "${config.temporal.taskQueue}" on ${config.temporal.address}`);
await worker.run();
await connection.close();
await orm.close();
