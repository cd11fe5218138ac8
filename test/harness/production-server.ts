// The app on a real socket with the production server options (api/main.ts: maxRequestBodySize
// MAX_REQUEST_BODY_BYTES) and the web app, in a process of its own, so a test can watch the
// memory of the process that receives the requests. Prints `ready <port>`.
import { randomBytes } from 'node:crypto';
import { createApp, MAX_REQUEST_BODY_BYTES } from '../../server/app.ts';
import { createOrm } from '../../db/orm.ts';
import { createRateLimiter, createRateLimiterPool } from '../../services/rate-limit.ts';

const orm = await createOrm(process.env.DATABASE_URL!, 5);
const pool = createRateLimiterPool(process.env.DATABASE_URL!, () => {});
const app = createApp({
  orm,
  rateLimiter: createRateLimiter(pool),
  log: () => {},
  web: { publicBaseUrl: 'http://127.0.0.1', credentialsKey: randomBytes(32), platforms: {} },
}).listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: MAX_REQUEST_BODY_BYTES });
console.log(`ready ${app.server!.port}`);
process.on('SIGTERM', async () => {
  await app.stop(true);
  await pool.end();
  await orm.close();
  process.exit(0);
});
