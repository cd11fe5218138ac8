// The shared test harness: one embedded Postgres (throwaway data dir, migrated) and one
// Temporal time-skipping test server per `bun test` run, started by preload.ts.
import { randomBytes } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import pgDriver from 'pg';
import { createRateLimiter, createRateLimiterPool, type RateLimiter } from '../../services/rate-limit.ts';
import { createChangeFeed, type ChangeFeed } from '../../db/change-feed.ts';
import { createPostPageCache, type PostPageCache } from '../../domain/posts/page-cache.ts';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createOrm, migrate, type Orm } from '../../db/orm.ts';
import { findTemporalTestServer } from '../../lib/temporal-binaries.ts';
import { installRuntime, WORKFLOWS_PATH } from '../../worker/index.ts';
import { ensureSearchAttributes } from '../../worker/temporal.ts';
import { startTestPostgres, type TestPostgres } from './postgres.ts';

export interface Harness {
  pg: TestPostgres;
  databaseUrl: string;
  orm: Orm;
  /** A plain pg pool (the rate limiter's store). */
  pool: pgDriver.Pool;
  rateLimiter: RateLimiter;
  /** GET /v1/posts's pages kept as server/run.ts keeps them (testApp's by default), on the harness's change feed. */
  postPages: PostPageCache;
  feed: ChangeFeed;
  credentialsKey: Buffer;
  /** Started on first use: tests that need no Temporal do not pay for it. */
  temporal: () => Promise<TestWorkflowEnvironment>;
  workflowBundle: () => Promise<{ code: string }>;
}

const KEY = Symbol.for('postpilot.test.harness');
type Slot = { harness?: Promise<Harness>; env?: Promise<TestWorkflowEnvironment>; bundle?: Promise<{ code: string }> };
const slot: Slot = ((globalThis as Record<symbol, Slot>)[KEY] ??= {});

async function start(): Promise<Harness> {
  installRuntime('warn');
  const pg = await startTestPostgres();
  await pg.createDatabase('postpilot_test');
  const databaseUrl = pg.url('postpilot_test');
  const orm = await createOrm(databaseUrl);
  await migrate(orm);
  const pool = createRateLimiterPool(databaseUrl, () => {}); // dropped idle clients (test/outages.test.ts) are not fatal
  const feed = createChangeFeed({ connectionString: databaseUrl });
  const postPages = createPostPageCache(feed);
  await postPages.ready;
  return {
    pg,
    databaseUrl,
    orm,
    pool,
    rateLimiter: createRateLimiter(pool),
    postPages,
    feed,
    credentialsKey: randomBytes(32),
    temporal: () =>
      (slot.env ??= TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path: findTemporalTestServer() } },
      }).then(async (env) => {
        await ensureSearchAttributes(env.connection, env.namespace ?? 'default');
        return env;
      })),
    workflowBundle: () => (slot.bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger })),
  };
}

const quietLogger = {
  log() {},
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error: (m: string) => console.error(m),
};

export function harness(): Promise<Harness> {
  return (slot.harness ??= start());
}

export async function stopHarness(): Promise<void> {
  if (slot.env) await (await slot.env).teardown();
  if (slot.harness) {
    const h = await slot.harness;
    h.postPages.close();
    await h.feed.close();
    await h.pool.end();
    await h.orm.close(true);
    // pg's Pool.end() resolves before every client has hung up; stopping Postgres under them
    // makes their "terminating connection" (57P01) an unhandled error. Wait (bounded) until the
    // test database has no sessions left.
    const admin = new pgDriver.Client({ connectionString: h.pg.url('postgres') });
    await admin.connect();
    try {
      for (let i = 0; i < 100; i++) {
        const { rows } = await admin.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = 'postpilot_test'",
        );
        if (rows[0]!.n === 0) break;
        await Bun.sleep(100);
      }
    } finally {
      await admin.end();
    }
    await h.pg.stop();
  }
}
