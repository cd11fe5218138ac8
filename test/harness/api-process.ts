// A standalone API process for multi-process tests: the real app on a real socket, sharing the
// test Postgres (and so the rate-limit and quota counters) with other processes.
import { createApp } from '../../server/app.ts';
import { createOrm } from '../../db/orm.ts';
import { createRateLimiter, createRateLimiterPool } from '../../services/rate-limit.ts';
import { Client, Connection } from '@temporalio/client';

const orm = await createOrm(process.env.DATABASE_URL!, 10);
const pool = createRateLimiterPool(process.env.DATABASE_URL!, () => {}, 10);
// With TEMPORAL_ADDRESS (and TEMPORAL_TASK_QUEUE): posts can be created too.
const temporal = process.env.TEMPORAL_ADDRESS
  ? {
      client: new Client({ connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS }) }),
      taskQueue: process.env.TEMPORAL_TASK_QUEUE ?? 'postpilot',
    }
  : undefined;
const app = createApp({ orm, rateLimiter: createRateLimiter(pool), log: () => {}, ...(temporal ? { temporal } : {}) }).listen({
  port: 0,
  hostname: '127.0.0.1',
});
console.log(`ready ${app.server!.port}`);
process.on('SIGTERM', async () => {
  await app.stop();
  await pool.end();
  await orm.close();
  process.exit(0);
});
