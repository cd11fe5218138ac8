// POST /v1/posts/bulk end to end: API → Postgres → each post's workflow on a time-skipping server
// → the Mastodon fake. Both modes, 500 rows, a bad row, duplicates inside the batch, the plan's
// limit crossed mid-batch, and a replay of the same Idempotency-Key.
import { describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call } from './harness/fixtures.ts';
import { mastodonAccount, type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;

const account = (plan = 'ENTERPRISE') => mastodonAccount(stack, fake, { plan });

/** A row `days` ahead of the test server's clock, its text unique unless given. */
const row = (channelId: string, at: Date, o: { days?: number; text?: string } = {}) => ({
  content: o.text ?? `bulk ${crypto.randomUUID()}`,
  channelIds: [channelId],
  publishAt: new Date(at.getTime() + (o.days ?? 1) * DAY).toISOString(),
});

const bulk = (key: string, body: unknown, idempotencyKey?: string) =>
  call(stack.app, 'POST', '/v1/posts/bulk', { key, body, ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}) });
const postCount = (orgId: string) => stack.h.orm.em.fork().count(Post, { organization: orgId, deletedAt: null });

describe('POST /v1/posts/bulk', () => {
  test('each: the valid rows are created, each refused row answered as a single create would be, its paths prefixed', async () => {
    const { orgId, key, channelId } = await account();
    const at = await stack.syncClock();
    const rows = [row(channelId, at), { ...row(channelId, at), channelIds: ['ch_unknown'] }, row(channelId, at, { days: 2 })];
    const r = await bulk(key, { mode: 'each', posts: rows });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: 'each', created: 2, failed: 1 });
    expect(r.body.results.map((x: { index: number; status: number }) => [x.index, x.status])).toEqual([
      [0, 201],
      [1, 422],
      [2, 201],
    ]);
    expect(r.body.results[1].error.code).toBe('validation_failed');
    expect(r.body.results[1].error.details.fields.map((f: { path: string }) => f.path)).toEqual(['posts.1.channelIds']);
    expect(r.body.results[0].post).toMatchObject({ status: 'scheduled', content: rows[0]!.content });
    expect(await postCount(orgId)).toBe(2);
    // Each created post has its workflow, started after the commit.
    for (const i of [0, 2]) {
      const id = r.body.results[i].post.id as string;
      expect((await stack.client.workflow.getHandle(postWorkflowId(id)).describe()).status.name).toBe('RUNNING');
      expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id })).workflowPending).toBe(false);
    }
  });

  test('all_or_nothing: one bad row and nothing is created; the answer names it; the same rows fixed are all created', async () => {
    const { orgId, key, channelId } = await account();
    const at = await stack.syncClock();
    const good = [row(channelId, at), row(channelId, at, { days: 2 })];
    const bad = { ...row(channelId, at), queue: true };
    const r = await bulk(key, { posts: [good[0], bad, good[1]] });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.details.fields).toEqual([expect.objectContaining({ path: 'posts.1.queue' })]);
    expect(r.body.error.details.rows.map((x: { index: number }) => x.index)).toEqual([1]);
    expect(await postCount(orgId)).toBe(0);
    const ok = await bulk(key, { mode: 'all_or_nothing', posts: good });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ mode: 'all_or_nothing', created: 2, failed: 0 });
    expect(await postCount(orgId)).toBe(2);
  });

  test('duplicates inside the batch: the second copy is refused as a repeat of the first', async () => {
    const { orgId, key, channelId } = await account();
    const at = await stack.syncClock();
    const same = row(channelId, at);
    const each = await bulk(key, { mode: 'each', posts: [same, row(channelId, at), same] });
    expect(each.body.results.map((x: { status: number }) => x.status)).toEqual([201, 201, 409]);
    expect(each.body.results[2].error.code).toBe('duplicate_post');
    const other = row(channelId, at, { days: 3 });
    const all = await bulk(key, { posts: [other, other] });
    expect(all.status).toBe(409);
    expect(all.body.error.code).toBe('duplicate_post');
    expect(all.body.error.details.rows.map((x: { index: number }) => x.index)).toEqual([1]);
    expect(await postCount(orgId)).toBe(2);
  });

  test('the plan’s limit crossed mid-batch: the rows before it are counted, those after refused', async () => {
    const { orgId, key, channelId } = await account('PRO'); // 1,000 pending posts
    // 998 waiting already (rows of their own: only their count matters here).
    await sql(
      stack.h.orm.em.fork(),
      `insert into posts (id, organization_id, status, content, source, scheduled_at, created_at, updated_at)
       select 'post_fill_' || g || '_' || ?, ?, 'scheduled', 'filler ' || g, 'api', now() + interval '30 days', now(), now()
       from generate_series(1, 998) g`,
      [orgId, orgId],
    );
    const at = await stack.syncClock();
    const rows = [1, 2, 3, 4].map((d) => row(channelId, at, { days: d }));
    const all = await bulk(key, { posts: rows });
    expect(all.status).toBe(403);
    expect(all.body.error.code).toBe('limit_reached');
    expect(all.body.error.details.rows.map((x: { index: number }) => x.index)).toEqual([2, 3]);
    expect(await postCount(orgId)).toBe(998);
    const each = await bulk(key, { mode: 'each', posts: rows });
    expect(each.body.results.map((x: { status: number }) => x.status)).toEqual([201, 201, 403, 403]);
    expect(each.body.results[2].error.code).toBe('limit_reached');
    expect(await postCount(orgId)).toBe(1000);
  });

  test('an Idempotency-Key covers the batch: the same body answers the first answer, another body is a conflict', async () => {
    const { orgId, key, channelId } = await account();
    const at = await stack.syncClock();
    const body = { mode: 'each', posts: [row(channelId, at), row(channelId, at, { days: 2 })] };
    const first = await bulk(key, body, 'batch-1');
    expect(first.status).toBe(200);
    const again = await bulk(key, body, 'batch-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.results.map((x: { post: { id: string } }) => x.post.id)).toEqual(
      first.body.results.map((x: { post: { id: string } }) => x.post.id),
    );
    expect(await postCount(orgId)).toBe(2);
    expect((await bulk(key, { ...body, mode: 'all_or_nothing' }, 'batch-1')).status).toBe(409);
    // All or nothing stores its answer with its rows: a replay finds it.
    const allBody = { posts: [row(channelId, at, { days: 5 })] };
    const made = await bulk(key, allBody, 'batch-2');
    const replay = await bulk(key, allBody, 'batch-2');
    expect(replay.body).toEqual(made.body);
    expect(await postCount(orgId)).toBe(3);
  });

  test('500 rows in one request: every post created and its workflow started; a row due now is published once', async () => {
    const { orgId, key, channelId } = await account();
    const at = await stack.syncClock();
    const rows: Record<string, unknown>[] = Array.from({ length: 500 }, (_, i) => row(channelId, at, { days: 1 + i / 100 }));
    const now = { content: `bulk now ${crypto.randomUUID()}`, channelIds: [channelId] };
    rows[499] = now;
    const r = await bulk(key, { mode: 'each', posts: rows });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: 500, failed: 0 });
    expect(await postCount(orgId)).toBe(500);
    expect(await stack.h.orm.em.fork().count(Post, { organization: orgId, workflowPending: true })).toBe(0);
    const last = r.body.results[499].post.id as string;
    await stack.settle(last);
    expect(fake.statuses.filter((s) => s.text === now.content)).toHaveLength(1);
    // 501 rows: refused by the schema, nothing created.
    const over = await bulk(key, { posts: Array.from({ length: 501 }, () => row(channelId, at)) });
    expect(over.status).toBe(422);
    expect(await postCount(orgId)).toBe(500);
  }, 120_000);
});
