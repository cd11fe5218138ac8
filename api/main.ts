// Standalone API process (production / scale-out): `bun run api`. Needs DATABASE_URL.
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import type { Connection } from '@temporalio/client';
import { createApp, MAX_REQUEST_BODY_BYTES } from './app.ts';
import { createStorage } from '../storage/index.ts';
import pgDriver from 'pg';
import { createRateLimiter } from '../services/rate-limit.ts';
import { connectClient, ensureSearchAttributes } from '../worker/temporal.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
await migrate(orm);
const client = await connectClient(config.temporal);
await ensureSearchAttributes(client.connection as Connection, config.temporal.namespace).catch((err) => {
  console.warn(`api: could not register search attributes (${(err as Error).message}); posts will fail to schedule until an operator creates PostId and OrganizationId (Keyword)`);
});
const storage = createStorage(config);
const pool = new pgDriver.Pool({ connectionString: config.databaseUrl, max: 5 });
const app = createApp({ orm, temporal: { client, taskQueue: config.temporal.taskQueue }, storage, rateLimiter: createRateLimiter(pool) }).listen({
  port: config.port,
  hostname: config.host,
  maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
});
console.log(`api: listening on http://${config.host}:${config.port}/v1`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await app.stop();
    await orm.close();
    process.exit(0);
  });
}
