// Approval under real faults, counted where a post would land (the fake Mastodon): a worker
// process SIGKILLed right after a decision, while the approved post's status POST is held; the
// Temporal dev server SIGKILLed while a decision is sent; the worker SIGKILLed while decisions'
// activities wait to write their post rows (a row lock held by the test); a decision racing the
// 24-hour grace. In every case a post reaches the platform once if approved, and never unapproved.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@temporalio/client';
import type pgDriver from 'pg';
import { Post, PostChannel } from '../db/entities/index.ts';
import { APPROVAL_GRACE_MS, postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, type CallResult, makeOrg, approvalSetUp } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';
import { startPostStack } from './harness/post-stack.ts';
import type { KillableTemporal, KillableWorker } from './harness/processes.ts';
import { type KillableStack, useKillableStack, within } from './harness/killable-stack.ts';
import { quiet } from './harness/quiet.ts';

/** The API's Temporal deadline (TEMPORAL_REQUEST_TIMEOUT_MS): a decision Temporal cannot take answers 503 by then. */
const DEADLINE_MS = 3000;

type App = { handle: (r: Request) => Promise<Response> };

/** Polls (real time) until fn() holds. */
async function until(fn: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** An organization with a Mastodon channel at the fake, a key whose posts need approval, and an approver's key. */
async function approvalOrg(fake: FakeMastodon) {
  const _h = await harness();
  const org = await makeOrg('ENTERPRISE');
  const { channel, author, approver } = await approvalSetUp(org.id, fake.url);
  return { channelId: channel.id, author: author.key, approver };
}

/** A post due at once (or at publishAt) that waits for approval. */
async function pendingPost(app: App, key: string, channelId: string, publishAt?: string) {
  const text = `needs approval ${crypto.randomUUID()}`;
  const r = await call(app, 'POST', '/v1/posts', {
    key,
    body: { content: text, channelIds: [channelId], ...(publishAt ? { publishAt } : {}) },
  });
  expect(r.status).toBe(201);
  expect(r.body.approval.status).toBe('pending');
  return { id: r.body.id as string, text };
}

/** Sends the request again while it answers 503 (Temporal or the worker not back yet), as Retry-After asks a client to. */
async function answered(send: () => Promise<CallResult>): Promise<CallResult> {
  for (let attempt = 1; ; attempt++) {
    const r = await send();
    if (r.status !== 503 || attempt === 5) return r;
    await Bun.sleep(250);
  }
}

const decide = (app: App, key: string, id: string, verb: 'approve' | 'reject') => call(app, 'POST', `/v1/posts/${id}/${verb}`, { key });
const row = async (id: string) => (await harness()).orm.em.fork().findOneOrFail(Post, { id });
/** Statuses the fake created with this text (what readers of the account see). */
const created = (fake: FakeMastodon, text: string) => fake.statuses.filter((s) => s.text === text).length;
/** Publish requests that reached the fake with this text (a re-send shows here even when answered from its key). */
const sent = (fake: FakeMastodon, text: string) => fake.sends.filter((s) => s.text === text).length;
/** Sessions whose UPDATE of a post row's approval (a decision's write) waits for a lock. */
async function approvalWritesWaiting(pool: pgDriver.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query ilike 'update "posts" set%"approval" =%'`,
  );
  return rows[0]!.n;
}

describe('approval with a worker process and a Temporal dev server that are SIGKILLed', () => {
  let fake: FakeMastodon;
  let temporal: KillableTemporal;
  let worker: KillableWorker;
  let client: Client;
  let app: App;
  let org: Awaited<ReturnType<typeof approvalOrg>>;
  let stack: KillableStack;

  useKillableStack({ name: 'approval-kills', persistentTemporal: true, requestTimeoutMs: DEADLINE_MS }, async (s) => {
    stack = s;
    ({ fake, temporal, worker, client, app } = s);
    org = await approvalOrg(fake);
  });

  const handle = (postId: string) => client.workflow.getHandle(postWorkflowId(postId));
  /**
   * The workflow's state once it waits with nothing in flight (its first task done): a decision
   * sent then meets the approval wait it is meant for.
   */
  const waiting = async (postId: string) => {
    expect(await quiet(client, postWorkflowId(postId))).toBe('waiting');
    return handle(postId).query(postStateQuery);
  };
  /** The post's workflow result, waited for at most ms (then a failure that says what the stack shows). */
  const finished = (postId: string, ms: number) =>
    within(stack, () => handle(postId).result(), ms, `post ${postId} to finish`, postWorkflowId(postId));

  test('the worker SIGKILLed after approvals answered, one of them with its status POST held by the platform: each published exactly once, approved', async () => {
    const held = await pendingPost(app, org.author, org.channelId);
    const other = await pendingPost(app, org.author, org.channelId);
    // Due at once, but waiting for a decision with nothing in flight: nothing reaches the platform.
    for (const post of [held, other]) expect(await waiting(post.id)).toMatchObject({ phase: 'scheduled', approval: 'pending' });
    expect(sent(fake, held.text) + sent(fake, other.text)).toBe(0);

    // The platform creates the first status it is sent, then never answers: the worker dies
    // with the publish done at the platform and not recorded anywhere.
    fake.failNext(1, 'accept-then-hang');
    const first = await decide(app, org.approver, held.id, 'approve');
    expect(first.status).toBe(200);
    expect(first.body.approval.status).toBe('approved');
    await until(() => created(fake, held.text) === 1, 'the held status POST');
    // The second decision is answered, and the worker dies at once: wherever its publish is.
    const second = await decide(app, org.approver, other.id, 'approve');
    expect(second.status).toBe(200);
    await worker.killAndRestart();

    // The new worker takes both over (the held publish once its heartbeat times out: 10 s, then
    // the retry's 5 s; 30 s where the kill lands in a decision's write).
    for (const post of [held, other]) {
      await finished(post.id, 75_000);
      const r = await row(post.id);
      expect(r.status).toBe('published');
      expect(r.approval?.status).toBe('approved');
      expect(created(fake, post.text)).toBe(1);
    }
    // The held one was sent again with its idempotency key and answered from it: no second status.
    expect(sent(fake, held.text)).toBeGreaterThanOrEqual(2);
  }, 150_000);

  test('Temporal SIGKILLed while decisions are sent: 503 with Retry-After; after it is back the rows and the workflows agree, and only the approved post publishes, once', async () => {
    const toApprove = await pendingPost(app, org.author, org.channelId);
    const toReject = await pendingPost(app, org.author, org.channelId);
    for (const post of [toApprove, toReject]) expect(await waiting(post.id)).toMatchObject({ phase: 'scheduled', approval: 'pending' });

    await temporal.kill();
    for (const [post, verb] of [
      [toApprove, 'approve'],
      [toReject, 'reject'],
    ] as const) {
      const t0 = performance.now();
      const refused = await decide(app, org.approver, post.id, verb);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('internal_error');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(performance.now() - t0).toBeLessThan(DEADLINE_MS + 3000);
    }
    expect(sent(fake, toApprove.text) + sent(fake, toReject.text)).toBe(0);

    // The same server state again; a worker that gave up on the lost server is replaced.
    await temporal.restart();
    if (!worker.current.alive()) await worker.killAndRestart();

    // Applied once or not at all, never half: each row says what its workflow says.
    for (const post of [toApprove, toReject]) {
      const state = await handle(post.id).query(postStateQuery);
      expect(['pending', 'approved', 'rejected']).toContain(state.approval!);
      expect((await row(post.id)).approval?.status).toBe(state.approval!);
    }
    expect(sent(fake, toApprove.text) + sent(fake, toReject.text)).toBe(0);

    // The client retries as Retry-After asks (the worker may take a moment to poll the new
    // server): the decision is applied now, or was already (409: already decided).
    const approved = await answered(() => decide(app, org.approver, toApprove.id, 'approve'));
    expect([200, 409]).toContain(approved.status);
    const rejected = await answered(() => decide(app, org.approver, toReject.id, 'reject'));
    expect([200, 409]).toContain(rejected.status);
    expect((await row(toReject.id)).approval?.status).toBe('rejected');

    await finished(toApprove.id, 45_000);
    expect((await row(toApprove.id)).status).toBe('published');
    expect((await row(toApprove.id)).approval?.status).toBe('approved');
    expect(created(fake, toApprove.text)).toBe(1);

    // The rejected one is withdrawn, so its workflow closes: nothing more can happen to it, and
    // nothing of it reached the platform.
    const withdrawn = await answered(() => call(app, 'DELETE', `/v1/posts/${toReject.id}`, { key: org.author }));
    expect(withdrawn.status).toBeLessThan(300);
    await finished(toReject.id, 20_000);
    expect(sent(fake, toReject.text)).toBe(0);
  }, 90_000);

  test('the worker SIGKILLed while the decisions wait to write their post rows: after a new worker the rows and the workflows agree, a retried decision is answered as decided, the approved post publishes once, the rejected one never', async () => {
    const h = await harness();
    const toApprove = await pendingPost(app, org.author, org.channelId);
    const toReject = await pendingPost(app, org.author, org.channelId);
    // Due at once, each waits for its decision with nothing in flight; nothing was sent.
    for (const post of [toApprove, toReject]) expect(await waiting(post.id)).toMatchObject({ phase: 'scheduled', approval: 'pending' });
    expect(sent(fake, toApprove.text) + sent(fake, toReject.text)).toBe(0);

    // A transaction of the test's own holds both post rows: each decision's activity reads its
    // row, then its UPDATE waits for the lock.
    const lock = await h.pool.connect();
    let first: CallResult[];
    try {
      await lock.query('begin');
      await lock.query('select 1 from posts where id = any($1) for update', [[toApprove.id, toReject.id]]);
      const answers = Promise.all([decide(app, org.approver, toApprove.id, 'approve'), decide(app, org.approver, toReject.id, 'reject')]);
      await until(async () => (await approvalWritesWaiting(h.pool)) === 2, 'both decisions to wait at their UPDATE of the post row');
      // The worker dies inside the write: its transaction can never commit.
      await worker.kill();
      await lock.query('commit');
      first = await answers;
    } finally {
      lock.release();
    }
    // Accepted by the workflow, not confirmed by its activity within the deadline: 503, to retry.
    for (const r of first) {
      expect(r.status).toBe(503);
      expect(r.body.error.message).toContain('may still be applied later');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    await worker.killAndRestart();

    // The client retries with the same decision: a conflict. While the row still says pending
    // (the decision's write not retried yet) the post is still scheduled, the workflow holds the
    // decision and says so, and nothing has reached the platform; once written, the approved post
    // may be publishing already.
    for (const [post, verb, status] of [
      [toApprove, 'approve', 'approved'],
      [toReject, 'reject', 'rejected'],
    ] as const) {
      const again = await answered(() => decide(app, org.approver, post.id, verb));
      expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 409, code: 'conflict' });
      // The answer says the decision the workflow holds, whatever the row says yet.
      expect(again.body.error.details).toEqual({ approval: status });
      if ((await row(post.id)).approval?.status === 'pending') {
        expect(again.body.error.message).toBe(`The post is already ${status}.`);
        expect(sent(fake, toApprove.text) + sent(fake, toReject.text)).toBe(0);
      }
    }

    // The new worker retries each decision's activity once its start-to-close timeout (30 s) has
    // passed: the approved post is recorded approved, then published, once.
    expect(await finished(toApprove.id, 75_000)).toMatchObject({ phase: 'done', approval: 'approved' });
    const approved = await row(toApprove.id);
    expect({ status: approved.status, approval: approved.approval?.status }).toEqual({ status: 'published', approval: 'approved' });
    expect(created(fake, toApprove.text)).toBe(1);
    expect(sent(fake, toApprove.text)).toBe(1);

    // The rejected one: its row says what its workflow says, and the workflow waits (nothing in
    // flight) for another decision, having sent nothing.
    await until(async () => (await row(toReject.id)).approval?.status === 'rejected', 'the rejection to be written', 60_000);
    expect(await quiet(client, postWorkflowId(toReject.id))).toBe('waiting');
    expect(await handle(toReject.id).query(postStateQuery)).toMatchObject({ phase: 'scheduled', approval: 'rejected' });
    expect((await row(toReject.id)).status).toBe('scheduled');
    // Withdrawn, its workflow closes: nothing of it ever reached the platform.
    const withdrawn = await answered(() => call(app, 'DELETE', `/v1/posts/${toReject.id}`, { key: org.author }));
    expect(withdrawn.status).toBeLessThan(300);
    await finished(toReject.id, 20_000);
    expect(sent(fake, toReject.text)).toBe(0);
  }, 150_000);
});

describe('a decision racing the 24-hour grace (time-skipping server)', () => {
  let stack: Awaited<ReturnType<typeof startPostStack>>;
  let fake: FakeMastodon;

  beforeAll(async () => {
    fake = await startFakeMastodon();
    stack = await startPostStack();
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.stop();
  });

  test('approved a minute before the deadline → published once; a minute after → not_approved, nothing sent', async () => {
    const org = await approvalOrg(fake);
    await stack.syncClock();
    // Both due at once: their grace ends 24 hours after their workflows started.
    const early = await pendingPost(stack.app, org.author, org.channelId);
    const late = await pendingPost(stack.app, org.author, org.channelId);
    await stack.env.sleep(APPROVAL_GRACE_MS - 60_000);
    await stack.syncClock();
    expect(sent(fake, early.text) + sent(fake, late.text)).toBe(0);

    const approved = await decide(stack.app, org.approver, early.id, 'approve');
    expect(approved.status).toBe(200);
    expect((await stack.settle(early.id)).phase).toBe('done');
    expect((await row(early.id)).status).toBe('published');
    expect(created(fake, early.text)).toBe(1);

    await stack.env.sleep(120_000);
    await stack.syncClock();
    // The deadline passed: the channel failed, and an approval now comes too late and is refused.
    await stack.settle(late.id);
    const tooLate = await decide(stack.app, org.approver, late.id, 'approve');
    expect(tooLate.status).toBe(409);
    const pcs = await stack.h.orm.em.fork().find(PostChannel, { post: late.id });
    expect(pcs.map((pc) => [pc.status, pc.errorCode])).toEqual([['failed', 'not_approved']]);
    expect((await row(late.id)).approval?.status).toBe('pending');
    // The workflow waits for a retry (refused: never approved) until its window closes; once it
    // has closed nothing more can happen, and nothing was sent.
    await stack.env.sleep('31 days');
    await stack.client.workflow.getHandle(postWorkflowId(late.id)).result();
    expect(sent(fake, late.text)).toBe(0);
    expect(sent(fake, early.text)).toBe(1);
  }, 30_000);
});
