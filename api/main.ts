// Standalone API process (production / scale-out): `bun run api`. Needs DATABASE_URL.
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import type { Connection } from '@temporalio/client';
import { createApp } from './app.ts';
import { connectClient, ensureSearchAttributes } from '../worker/temporal.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
await migrate(orm);
const client = await connectClient(config.temporal);
await ensureSearchAttributes(client.connection as Connection, config.temporal.namespace).catch((err) => {
  console.warn(`api: could not register search attributes (${(err as Error).message}); posts will fail to schedule until an operator creates PostId and OrganizationId (Keyword)`);
});
const app = createApp({ orm, temporal: { client, taskQueue: config.temporal.taskQueue } }).listen({ port: config.port, hostname: config.host });
console.log(`api: listening on http://${config.host}:${config.port}/v1`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await app.stop();
    await orm.close();
    process.exit(0);
  });
}
