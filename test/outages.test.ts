// Outages (docs/decisions.md "Outages"): Postgres dropping every connection, Temporal down, and
// no worker polling must neither kill the API or the worker nor hang requests. The real entry
// points (api/main.ts, worker/main.ts) run as child processes against the run's Postgres and a
// Temporal dev server of their own, which the tests stop.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../server/app.ts';
import { mapError } from '../http/errors.ts';
import { Post } from '../db/entities/index.ts';
import { createOrm, type Orm } from '../db/orm.ts';
import { createRateLimiter, createRateLimiterPool } from '../services/rate-limit.ts';
import { lazyClient } from '../worker/temporal.ts';
import { loadConfig } from '../lib/config.ts';
import { newId } from '../lib/ids.ts';
import { POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflow, type PostWorkflowState } from '../workflows/post-types.ts';
import { harness } from './harness/index.ts';
import { makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { startKillableTemporal, startService, type KillableTemporal, type ServiceProcess } from './harness/processes.ts';
import { signedInUser } from './harness/web-browser.ts';
import { freePort } from './harness/ports.ts';

/** The API processes' Temporal deadline (TEMPORAL_REQUEST_TIMEOUT_MS). */
const DEADLINE_MS = 3000;
/** Scheduling noise on a busy machine; without the deadline these requests took 20–30 s. */
const MARGIN_MS = 3000;

async function http(port: number, method: string, path: string, key: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON: the assertions say so */
  }
  return { status: res.status, headers: res.headers, body: json, text, ms: performance.now() - started, doneAt: performance.now() };
}

/** A 503 with the spec's error body, a Retry-After, and nothing of gRPC or of the addresses involved. */
function expectCleanOutage(r: { status: number; headers: Headers; body: any; text: string }) {
  expect(r.status).toBe(503);
  expect(r.body?.error?.code).toBe('internal_error');
  expect(typeof r.body.error.message).toBe('string');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  for (const leak of [/grpc/i, /UNAVAILABLE/, /DEADLINE_EXCEEDED/, /\b14 /, /ECONNREFUSED/, /127\.0\.0\.1/, /did not answer/])
    expect(r.text).not.toMatch(leak);
}

/** Ends sessions of the test database (all but the caller's, or the given ones), as a Postgres restart does. */
async function terminateBackends(pids?: number[]): Promise<number> {
  const h = await harness();
  const { rows } = await h.pool.query<{ n: number }>(
    `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and ($1::int[] is null or pid = any($1::int[]))`,
    [pids ?? null],
  );
  return rows[0]!.n;
}

const later = () => new Date(Date.now() + 3600_000).toISOString();

describe('pooled connections that Postgres ended (in process)', () => {
  let orm: Orm;

  beforeAll(async () => {
    orm = await createOrm((await harness()).databaseUrl, 3);
  });
  afterAll(async () => {
    await orm?.close(true);
  });

  /** Opens `n` pooled connections, leaves them idle, and returns their server processes. */
  async function warm(n: number): Promise<number[]> {
    const rows = await Promise.all(
      Array.from({ length: n }, () =>
        orm.em.fork().getConnection().execute<{ pid: number }[]>('select pg_backend_pid() as pid, pg_sleep(0.05)'),
      ),
    );
    return [...new Set(rows.map((r) => r[0]!.pid))];
  }

  // Whether a client has read its "terminating connection" before the next statement is a race;
  // several rounds make meeting a dead client all but certain.
  const ROUNDS = 5;

  test('a read on a dead idle connection is sent again on a live one', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const pids = await warm(3);
      expect(pids).toHaveLength(3);
      expect(await terminateBackends(pids)).toBe(3);
      const rows = await orm.em.fork().getConnection().execute<{ one: number }[]>('select 1 as one');
      expect(rows[0]!.one).toBe(1);
      expect(await orm.em.fork().count(Post, { id: 'post_none' })).toBe(0);
    }
  });

  test('transactions begun on dead connections neither fail nor leak the pool', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const pids = await warm(3);
      expect(await terminateBackends(pids)).toBe(3);
      // A BEGIN that meets a dead client and leaked its checkout would leave the 3-slot pool empty.
      const all = Promise.all(
        Array.from({ length: 3 }, () =>
          orm.em
            .fork()
            .transactional(
              async (tx) =>
                (await tx.getConnection().execute<{ n: number }[]>('select 2 as n', [], 'all', tx.getTransactionContext()))[0]!.n,
            ),
        ),
      );
      const exhausted = () => Bun.sleep(10_000).then(() => 'pool exhausted');
      expect(await Promise.race([all, exhausted()])).toEqual([2, 2, 2]);
      const more = Promise.all(Array.from({ length: 4 }, () => orm.em.fork().transactional(async () => 'ok')));
      expect(await Promise.race([more, exhausted()])).toEqual(['ok', 'ok', 'ok', 'ok']);
    }
  });

  /** A limiter on a 2-client pool whose two clients are idle, with their server processes. */
  async function idleLimiterPool(errors: Error[]) {
    const pool = createRateLimiterPool((await harness()).databaseUrl, (e) => errors.push(e), 2);
    const pids = await Promise.all(
      [0, 1].map(async () => (await pool.query<{ pid: number }>('select pg_backend_pid() as pid, pg_sleep(0.05)')).rows[0]!.pid),
    );
    expect(new Set(pids).size).toBe(2);
    return { pool, pids, limiter: createRateLimiter(pool) };
  }

  test("the rate limiter's pool takes idle clients ended by Postgres (no crash) and counts on", async () => {
    const errors: Error[] = [];
    const { pool, pids, limiter } = await idleLimiterPool(errors);
    try {
      expect(await terminateBackends(pids)).toBe(2);
      // Both idle clients report their end to the pool's listener (without one, the process exits).
      for (let i = 0; i < 100 && errors.length < 2; i++) await Bun.sleep(20);
      expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['57P01', '57P01']);
      expect(await limiter.consume(`key_${crypto.randomUUID()}`, 'PRO')).toMatchObject({ allowed: true, limit: 60, remaining: 59 });
    } finally {
      await pool.end();
    }
  });

  test('a rate-limit check that meets a dead client is sent again', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { pool, pids, limiter } = await idleLimiterPool([]);
      try {
        expect(await terminateBackends(pids)).toBe(2);
        expect(await limiter.consume(`key_${crypto.randomUUID()}`, 'PRO')).toMatchObject({ allowed: true, limit: 60 });
      } finally {
        await pool.end();
      }
    }
  });
});

describe('the answer while Postgres is away', () => {
  test("a dropped or refused database connection is a 503 with Retry-After and none of the driver's text", () => {
    const dropped = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:5432'), { code: 'ECONNREFUSED' });
    for (const error of [dropped, refused, new Error('Connection terminated unexpectedly')]) {
      const mapped = mapError('UNKNOWN', error);
      expect(mapped.status).toBe(503);
      expect(mapped.body.error.code).toBe('internal_error');
      expect(Number(mapped.headers?.['retry-after'])).toBeGreaterThan(0);
      expect(JSON.stringify(mapped.body)).not.toMatch(/terminat|ECONNREFUSED|10\.0\.0\.9/);
      expect(mapped.unexpected).toBe(true); // still logged with the request id
    }
    // Any other failure stays the plain 500.
    expect(mapError('UNKNOWN', Object.assign(new Error('syntax error'), { code: '42601' })).status).toBe(500);
  });
});

describe('outages of the real processes', () => {
  let temporal: KillableTemporal;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let env: Record<string, string>;
  let key: string;
  let orgId: string;
  let channelId: string;
  const extra: ServiceProcess[] = [];
  /** Run last: a Temporal connection closed while the SDK still has a retry timer pending throws. */
  const closeLater: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    const h = await harness();
    temporal = await startKillableTemporal();
    env = {
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `outage-${crypto.randomUUID()}`,
      TEMPORAL_REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
      CREDENTIALS_KEY: h.credentialsKey.toString('hex'),
    };
    [api, worker] = await Promise.all([startService('api', env), startService('worker', env)]);
    const org = await makeOrg('PRO');
    orgId = org.id;
    key = (await makeKey(org.id)).key;
    channelId = (await makeChannel(org.id)).id;
  });

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop(), ...extra.map((p) => p.stop())]);
    await temporal?.kill();
    await Bun.sleep(DEADLINE_MS);
    await Promise.all(closeLater.map((close) => close().catch(() => {})));
  });

  const postCount = async () => (await harness()).orm.em.fork().count(Post, { organization: orgId });

  test('Postgres ends every session: the API and the worker stay up and serve again, nothing restarted', async () => {
    expect((await http(api.port, 'GET', '/v1/me', key)).status).toBe(200);
    const created = await http(api.port, 'POST', '/v1/posts', key, {
      content: 'before the outage',
      channelIds: [channelId],
      publishAt: later(),
    });
    expect(created.status).toBe(201);

    for (let round = 0; round < 3; round++) {
      expect(await terminateBackends()).toBeGreaterThan(0);
      // The first requests after the drop already succeed: dead pooled clients are replaced.
      const burst = await Promise.all([
        ...Array.from({ length: 4 }, () => http(api.port, 'GET', '/v1/me', key)),
        http(api.port, 'GET', '/v1/posts', key),
        http(api.port, 'POST', '/v1/posts', key, { content: `during round ${round}`, channelIds: [channelId], publishAt: later() }),
      ]);
      expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 201]);
      expect(api.alive()).toBe(true);
      expect(worker.alive()).toBe(true);
    }

    // The worker reaches Postgres again: an edit goes through the workflow's Update, whose
    // handler writes the row from the worker.
    const edited = await http(api.port, 'PATCH', `/v1/posts/${created.body.id}`, key, { content: 'after the outage' });
    expect(edited.status).toBe(200);
    expect(edited.body.content).toBe('after the outage');
    expect(api.alive()).toBe(true);
    expect(worker.alive()).toBe(true);
  });

  test('no worker polling: PATCH, DELETE and media complete answer 503 within the deadline; nothing stays blocked', async () => {
    const created = await http(api.port, 'POST', '/v1/posts', key, {
      content: 'edited without a worker',
      channelIds: [channelId],
      publishAt: later(),
    });
    expect(created.status).toBe(201);
    const upload = await http(api.port, 'POST', '/v1/media/uploads', key, { fileName: 'a.png', mimeType: 'image/png', fileSize: 100 });
    expect(upload.status).toBe(201);
    await worker.stop();

    const patched = await http(api.port, 'PATCH', `/v1/posts/${created.body.id}`, key, { content: 'never confirmed' });
    expectCleanOutage(patched);
    expect(patched.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    // DELETE (the cancelPost Update) and retry have the same deadline.
    const cancelled = await http(api.port, 'DELETE', `/v1/posts/${created.body.id}`, key);
    expectCleanOutage(cancelled);
    expect(cancelled.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    const completed = await http(api.port, 'POST', `/v1/media/${upload.body.media.id}/complete`, key);
    expectCleanOutage(completed);
    expect(completed.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    // Starting a workflow needs no worker: the organization's next post goes through at once.
    const next = await http(api.port, 'POST', '/v1/posts', key, { content: 'right after', channelIds: [channelId], publishAt: later() });
    expect(next.status).toBe(201);
    expect(api.alive()).toBe(true);
  });

  test('the web app: the same deadline, its JSON and its pages', async () => {
    const h = await harness();
    const config = loadConfig({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: env.TEMPORAL_TASK_QUEUE! });
    const client = lazyClient(config.temporal);
    closeLater.push(() => client.connection.close());
    const web = createApp({
      orm: h.orm,
      log: () => {},
      rateLimiter: h.rateLimiter,
      temporal: { client, taskQueue: config.temporal.taskQueue, requestTimeoutMs: DEADLINE_MS },
      web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {}, outbound: { allowPrivate: true } },
    });
    const { browser, org } = await signedInUser(web);
    const channel = await makeChannel(org.id);
    const at = new Date(Date.now() + 2 * 3600_000);
    const form = { channelIds: [channel.id], content: 'from the web', when: 'later', publishAt: at.toISOString().slice(0, 16), tz: 'UTC' };
    const created = await browser.post('/posts', form);
    expect(created.status).toBe(303);
    const postId = /post_[0-9a-z]+/.exec(created.location ?? '')![0];

    // Drag and drop (JSON) with no worker polling: the API's 503 body.
    let t0 = performance.now();
    const moved = await browser.json('PATCH', `/web/api/posts/${postId}`, { publishAt: new Date(at.getTime() + 3600_000).toISOString() });
    expect(performance.now() - t0).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expectCleanOutage({ status: moved.status, headers: moved.headers, body: moved.json(), text: moved.html });

    // With Temporal gone, the composer answers with its error page, within the deadline too.
    await temporal.kill();
    t0 = performance.now();
    const refused = await browser.post('/posts', { ...form, content: 'while Temporal is down' });
    expect(performance.now() - t0).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect(refused.status).toBe(503);
    expect(refused.html).toContain('unavailable');
    expect(refused.html).not.toMatch(/grpc|UNAVAILABLE|DEADLINE_EXCEEDED/);
  });

  test('Temporal down: POST answers 503 within the deadline, reads stay fast, nothing is created or blocked', async () => {
    // (The previous test stopped the Temporal server.)
    const before = await postCount();
    const post = http(api.port, 'POST', '/v1/posts', key, {
      content: 'while Temporal is down',
      channelIds: [channelId],
      publishAt: later(),
    });
    // Requests that do not need Temporal are not held up by the one that does.
    const [me, list] = await Promise.all([http(api.port, 'GET', '/v1/me', key), http(api.port, 'GET', '/v1/posts', key)]);
    const refused = await post;
    expect(me.status).toBe(200);
    expect(list.status).toBe(200);
    expect(me.doneAt).toBeLessThan(refused.doneAt);
    expect(list.doneAt).toBeLessThan(refused.doneAt);
    expectCleanOutage(refused);
    expect(refused.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    // The organization's lock and the pool connection were released: the next one is no slower.
    const again = await http(api.port, 'POST', '/v1/posts', key, {
      content: 'again while down',
      channelIds: [channelId],
      publishAt: later(),
    });
    expectCleanOutage(again);
    expect(again.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    const upload = await http(api.port, 'POST', '/v1/media/uploads', key, { fileName: 'b.png', mimeType: 'image/png', fileSize: 100 });
    expectCleanOutage(upload);
    expect(await postCount()).toBe(before);
    expect(api.alive()).toBe(true);
    // What the client is not told is in the service's log, with the request id.
    const logged = api.lines.filter((l) => l.includes('"unexpected error"') && l.includes('/v1/posts'));
    expect(logged.some((l) => /UNAVAILABLE|DEADLINE_EXCEEDED|did not answer/.test(l) && l.includes('req_'))).toBe(true);
  });

  test('an API process starts while Temporal is down and serves what does not need it', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const down = await startService('api', { ...env, TEMPORAL_ADDRESS: nowhere });
    extra.push(down);
    expect((await http(down.port, 'GET', '/v1/me', key)).status).toBe(200);
    expect((await http(down.port, 'GET', '/v1/posts', key)).status).toBe(200);
    const refused = await http(down.port, 'POST', '/v1/posts', key, {
      content: 'started without Temporal',
      channelIds: [channelId],
      publishAt: later(),
    });
    expectCleanOutage(refused);
  });
});

describe('a post workflow whose row was never committed', () => {
  test('ends by itself, harmlessly (a start that timed out but reached the server)', async () => {
    const stack = await startPostStack();
    try {
      const org = await makeOrg('PRO');
      const postId = newId('post'); // no row: the API's transaction rolled back
      await stack.env.client.workflow.start<PostWorkflow>(POST_WORKFLOW_TYPE, {
        taskQueue: stack.taskQueue,
        workflowId: postWorkflowId(postId),
        args: [{ postId, organizationId: org.id, publishAt: null }],
      });
      const state = (await stack.settle(postId)) as PostWorkflowState;
      expect(state.phase).toBe('done');
      expect(await stack.h.orm.em.fork().count(Post, { id: postId })).toBe(0);
    } finally {
      await stack.stop();
    }
  });
});
