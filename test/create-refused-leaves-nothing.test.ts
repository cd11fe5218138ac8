// A create refused after its rows are written leaves nothing behind. The Idempotency-Key is
// checked before the rows and claimed after them (domain/idempotency-claim.ts); a claim that
// appears in between makes recordClaim refuse the create. Its rows are written in a savepoint of
// the group commit's transaction (domain/posts/create.ts insertInSavepoint), so the refusal takes
// back its post and channel rows while the transaction commits its neighbours: no post stays
// marked workflow_pending for the start reconciler to start and publish.
//
// The claim is made to appear at that moment for real: a test transaction holds the target
// channel's row lock (FOR UPDATE), so the create's insert (its foreign key check) waits; the test
// writes the claim in that transaction and commits, which lets the insert go on.
import { describe, expect, test } from 'bun:test';
import type pgDriver from 'pg';
import { Post, PostChannel } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { KeyAlreadyClaimed, type IdempotencyClaim } from '../domain/idempotency-claim.ts';
import { checkNewPost, insertPost } from '../domain/posts/create.ts';
import { requestHash } from '../services/idempotency.ts';
import { newId } from '../lib/ids.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { POST_RECONCILER_WORKFLOW_TYPE, type PostReconcilerInput, type PostReconcilerResult } from '../workflows/post-reconciler-types.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;

async function mastodon(organizationId: string, name: string) {
  return addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name,
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
}

/** A transaction of the test's own holding a channel's row lock: a post_channels insert naming it waits until it ends. */
async function lockChannel(channelId: string): Promise<pgDriver.PoolClient> {
  const conn = await stack.h.pool.connect();
  await conn.query('begin');
  await conn.query('select 1 from channels where id = $1 for update', [channelId]);
  return conn;
}

/** Waits (real time) until a create's insert of its post waits for the lock `conn` holds. */
async function insertWaits(conn: pgDriver.PoolClient): Promise<void> {
  const { rows: me } = await conn.query<{ pid: number }>('select pg_backend_pid() as pid');
  for (let i = 0; i < 400; i++) {
    const { rows } = await stack.h.pool.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and query ilike '%insert into posts%'
         and $1 = any(pg_blocking_pids(pid))`,
      [me[0]!.pid],
    );
    if (rows[0]!.n > 0) return;
    await Bun.sleep(25);
  }
  throw new Error('no create waited at its insert');
}

/** The claim a request with this key made meanwhile, naming its post, written in the locking transaction. */
async function claimIn(conn: pgDriver.PoolClient, c: IdempotencyClaim & { postId: string }) {
  await conn.query(
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, post_id, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [c.apiKeyId, c.endpoint, c.key, c.organizationId, c.requestHash, c.postId, c.now],
  );
}

/** Runs the start reconciler once (what its Schedule does every 15 s), for every post still marked. */
function reconcile(): Promise<PostReconcilerResult> {
  const input: PostReconcilerInput = { olderThanMs: 0, limit: 1000 };
  return stack.client.workflow.execute(POST_RECONCILER_WORKFLOW_TYPE, {
    taskQueue: stack.taskQueue,
    workflowId: `reconcile-${crypto.randomUUID()}`,
    args: [input],
  });
}

const postsWith = (content: string) => stack.h.orm.em.fork().count(Post, { content });
const sent = (text: string) => fake.statuses.filter((s) => s.text === text).length;

describe('a create refused by a key claimed between its check and its claim', () => {
  test('POST /v1/posts: answered with the other request’s post; no post row, no workflow, nothing published', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key, id: apiKeyId } = await makeKey(org.id);
    const channel = await mastodon(org.id, 'mastodon');
    const at = await stack.syncClock();
    // The post of the request that claims the key first.
    const first = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: `first ${crypto.randomUUID()}`,
        channelIds: [channel.id],
        publishAt: new Date(at.getTime() + 2 * DAY).toISOString(),
      },
    });
    expect(first.status).toBe(201);

    // Due now: were its workflow started, it would publish at once.
    const body = { content: `refused ${crypto.randomUUID()}`, channelIds: [channel.id] };
    const startedBefore = stack.startedWorkflowIds().length;
    const conn = await lockChannel(channel.id);
    let answer: Promise<Awaited<ReturnType<typeof call>>>;
    try {
      answer = call(stack.app, 'POST', '/v1/posts', { key, body, headers: { 'idempotency-key': 'raced-key' } });
      await insertWaits(conn); // past assertKeyUnclaimed, its rows being written
      await claimIn(conn, {
        apiKeyId,
        endpoint: 'POST /v1/posts',
        key: 'raced-key',
        organizationId: org.id,
        requestHash: requestHash(body),
        now: at,
        postId: first.body.id,
      });
      await conn.query('commit');
    } finally {
      conn.release();
    }
    const r = await answer;
    // The other request's answer.
    expect(r.status).toBe(201);
    expect(r.body.id).toBe(first.body.id);
    expect(r.headers.get('idempotent-replayed')).toBe('true');
    // Nothing of the refused create remains, so nothing is left for the reconciler to start.
    expect(await postsWith(body.content)).toBe(0);
    expect(await stack.h.orm.em.fork().count(PostChannel, { content: body.content })).toBe(0);
    expect((await reconcile()).started).toBe(0);
    // And the create started none: with no workflow and no row left to start one from, nothing
    // can ever publish it.
    expect(
      stack
        .startedWorkflowIds()
        .slice(startedBefore)
        .filter((id) => id.startsWith(postWorkflowId(''))),
    ).toEqual([]);
    expect(sent(body.content)).toBe(0);
    expect(await postsWith(body.content)).toBe(0);
  });

  test('group commit: the refused create is taken back alone; the posts before and after it in the transaction commit', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { id: apiKeyId } = await makeKey(org.id);
    const free = await mastodon(org.id, 'free');
    const locked = await mastodon(org.id, 'locked');
    const at = await stack.syncClock();
    const em = stack.h.orm.em.fork();
    const organization = { id: org.id, plan: 'ENTERPRISE' as const };
    const request = (channelId: string, claim?: IdempotencyClaim) => ({
      organization,
      source: 'api' as const,
      key: null,
      channelIds: [channelId],
      content: `batch ${crypto.randomUUID()}`,
      contentByPlatform: {},
      reddit: null,
      mediaIds: [],
      publishAt: new Date(at.getTime() + DAY).toISOString(),
      now: at,
      claim,
    });
    const claim: IdempotencyClaim = {
      organizationId: org.id,
      apiKeyId,
      endpoint: 'POST /v1/posts',
      key: 'batch-key',
      requestHash: 'h'.repeat(64),
      now: at,
    };
    const [lead, refused, after] = await Promise.all([
      checkNewPost(em.fork(), request(free.id), []),
      checkNewPost(em.fork(), request(locked.id, claim), []),
      checkNewPost(em.fork(), request(free.id), []),
    ]);
    const ids = [newId('post'), newId('post'), newId('post')];
    const conn = await lockChannel(locked.id);
    let outcomes: Promise<PromiseSettledResult<unknown>[]>;
    try {
      // The lead writes alone; the two others arrive while it does and share the next transaction.
      outcomes = Promise.allSettled([insertPost(em, lead!, ids[0]!), insertPost(em, refused!, ids[1]!), insertPost(em, after!, ids[2]!)]);
      await insertWaits(conn);
      // The lead's transaction has committed: the claim names its post.
      await claimIn(conn, { ...claim, postId: ids[0]! });
      await conn.query('commit');
    } finally {
      conn.release();
    }
    const [a, b, c] = await outcomes;
    expect(a!.status).toBe('fulfilled');
    expect(b!.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(KeyAlreadyClaimed);
    expect(c!.status).toBe('fulfilled');
    const rows = await stack.h.orm.em.fork().find(Post, { id: { $in: ids } });
    expect(rows.map((p) => p.id).sort()).toEqual([ids[0]!, ids[2]!].sort());
    expect(await stack.h.orm.em.fork().count(PostChannel, { post: ids[1]! })).toBe(0);
    // The claim is the other request's, naming its post, not the refused one.
    const { rows: claims } = await stack.h.pool.query<{ post_id: string }>(
      `select post_id from idempotency_keys where api_key_id = $1 and key = 'batch-key'`,
      [apiKeyId],
    );
    expect(claims.map((x) => x.post_id)).toEqual([ids[0]!]);
    // The reconciler starts the two committed posts (insertPost alone starts no workflow), and nothing else.
    expect((await reconcile()).started).toBe(2);
    for (const id of [ids[0]!, ids[2]!]) {
      expect((await stack.client.workflow.getHandle(postWorkflowId(id)).describe()).status.name).toBe('RUNNING');
    }
  });
});
