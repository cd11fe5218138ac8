// Standalone API process (production / scale-out): `bun run api`. Needs DATABASE_URL.
import { createOrm, migrate } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import { createApp } from './app.ts';

const config = loadConfig(process.env, ['DATABASE_URL', 'CREDENTIALS_KEY']);
const orm = await createOrm(config.databaseUrl!, config.databasePoolMax);
await migrate(orm);
const app = createApp({ orm }).listen({ port: config.port, hostname: config.host });
console.log(`api: listening on http://${config.host}:${config.port}/v1`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await app.stop();
    await orm.close();
    process.exit(0);
  });
}
