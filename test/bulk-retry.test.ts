// POST /v1/posts/bulk in mode `each`, cut off midway and sent again with its Idempotency-Key: each
// row's post exists once, queued rows and publish-now rows included (each row's post id is fixed
// by the key and the body: domain/posts/bulk.ts bulkRowPostId). And a batch or a CSV import made
// with a key whose posts need approval (a contributor's key, a key with requiresApproval): its
// posts wait for approval and nothing is published before a decision.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { WEEKDAYS } from '../lib/zoned-time.ts';
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { quiet } from './harness/quiet.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;

beforeAll(async () => {
  fake = await startFakeMastodon();
  stack = await startPostStack();
});
afterAll(async () => {
  await stack?.h.pool.query('drop trigger if exists bulk_cut_off on posts');
  await stack?.stop();
  await fake?.stop();
});

const DAY = 86_400_000;

async function account(key: (orgId: string) => Promise<string>) {
  const org = await makeOrg('ENTERPRISE');
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { orgId: org.id, key: await key(org.id), channelId: channel.id };
}

const plainKey = async (organizationId: string) =>
  (await createApiKey(stack.h.orm.em.fork(), { organizationId, name: 'k', scopes: ['read', 'publish'], channels: 'all' })).key;

const bulk = (key: string, body: unknown, idempotencyKey?: string) =>
  call(stack.app, 'POST', '/v1/posts/bulk', { key, body, ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}) });
const posts = (orgId: string) => stack.h.orm.em.fork().find(Post, { organization: orgId, deletedAt: null }, { orderBy: { id: 'asc' } });

/** Every insert of a post whose text holds `marker` fails: the batch is cut off at that row (a lost connection, as the API sees it). */
async function cutOffAt(marker: string) {
  await stack.h.pool.query(
    `create or replace function bulk_cut_off() returns trigger language plpgsql as $$
     begin if new.content like '%${marker}%' then raise exception 'connection lost'; end if; return new; end $$`,
  );
  await stack.h.pool.query('drop trigger if exists bulk_cut_off on posts');
  await stack.h.pool.query('create trigger bulk_cut_off before insert on posts for each row execute function bulk_cut_off()');
}

describe('POST /v1/posts/bulk, mode each, cut off midway and sent again with its Idempotency-Key', () => {
  test('each row is created once: queued rows keep their one slot, the publish-now row is published once', async () => {
    const { orgId, key, channelId } = await account(plainKey);
    const queue = await call(stack.app, 'PUT', `/v1/channels/${channelId}/queue`, {
      key,
      body: { slots: WEEKDAYS.flatMap((weekday) => ['09:00', '12:00', '15:00', '18:00'].map((time) => ({ weekday, time }))) },
    });
    expect(queue.status).toBe(200);
    const at = await stack.syncClock();
    const tag = crypto.randomUUID();
    const marker = `CUT-${tag}`;
    const rows = [
      { content: `queued 0 ${tag}`, channelIds: [channelId], queue: true },
      { content: `queued 1 ${tag}`, channelIds: [channelId], queue: true },
      { content: `now ${tag}`, channelIds: [channelId] },
      { content: `cut ${marker}`, channelIds: [channelId], publishAt: new Date(at.getTime() + 3 * DAY).toISOString() },
      { content: `queued 4 ${tag}`, channelIds: [channelId], queue: true },
      { content: `later ${tag}`, channelIds: [channelId], publishAt: new Date(at.getTime() + 2 * DAY).toISOString() },
    ];
    const body = { mode: 'each', posts: rows };

    await cutOffAt(marker);
    const first = await bulk(key, body, 'cut-batch');
    expect(first.status).toBe(500);
    // The rows handed to the create path before the cut-off are committed; row 3 is not.
    let made: Awaited<ReturnType<typeof posts>> = [];
    for (let i = 0; i < 100 && made.length < 5; i++) {
      await Bun.sleep(20);
      made = await posts(orgId);
    }
    expect(made.map((p) => p.content).sort()).toEqual([0, 1, 2, 4, 5].map((i) => rows[i]!.content).sort());
    const slotsBefore = Object.fromEntries(made.map((p) => [p.content, { id: p.id, at: p.scheduledAt.toISOString() }]));
    await stack.h.pool.query('drop trigger bulk_cut_off on posts');

    const retry = await bulk(key, body, 'cut-batch');
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ mode: 'each', created: 6, failed: 0 });
    const answered = retry.body.results as { index: number; status: number; post: { id: string; content: string; scheduledAt: string } }[];
    // The rows made before are answered with their posts, at the slots they took.
    for (const i of [0, 1, 2, 4, 5]) {
      expect({ index: i, id: answered[i]!.post.id }).toEqual({ index: i, id: slotsBefore[rows[i]!.content]!.id });
    }
    for (const i of [0, 1, 4]) expect(answered[i]!.post.scheduledAt).toBe(slotsBefore[rows[i]!.content]!.at);
    const all = await posts(orgId);
    expect(all.map((p) => p.content).sort()).toEqual(rows.map((r) => r.content).sort());
    const claims = await stack.h.pool.query('select count(*)::int as n from queue_claims where post_id = any($1)', [all.map((p) => p.id)]);
    expect(claims.rows[0].n).toBe(3);
    // Every post's workflow is started (the cut-off request started none), and the publish-now row is published once.
    await stack.settle(answered[2]!.post.id);
    expect(fake.statuses.filter((s) => s.text === rows[2]!.content)).toHaveLength(1);
    expect(await stack.h.orm.em.fork().count(Post, { organization: orgId, workflowPending: true })).toBe(0);

    // A third send replays the stored answer.
    const again = await bulk(key, body, 'cut-batch');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(retry.body);
    expect(await posts(orgId)).toHaveLength(6);
    expect(fake.statuses.filter((s) => s.text === rows[2]!.content)).toHaveLength(1);
  }, 60_000);

  test('a queued row whose next free slot is a week on (past the duplicate window) is still not created again', async () => {
    const { orgId, key, channelId } = await account(plainKey);
    const queue = await call(stack.app, 'PUT', `/v1/channels/${channelId}/queue`, {
      key,
      body: { slots: [{ weekday: 'monday', time: '09:00' }] },
    });
    expect(queue.status).toBe(200);
    const tag = crypto.randomUUID();
    const marker = `CUT-${tag}`;
    const rows = [
      { content: `weekly ${tag}`, channelIds: [channelId], queue: true },
      { content: `cut ${marker}`, channelIds: [channelId], queue: true },
    ];
    const body = { mode: 'each', posts: rows };
    await cutOffAt(marker);
    expect((await bulk(key, body, 'cut-weekly')).status).toBe(500);
    let made: Awaited<ReturnType<typeof posts>> = [];
    for (let i = 0; i < 100 && made.length < 1; i++) {
      await Bun.sleep(20);
      made = await posts(orgId);
    }
    expect(made.map((p) => p.content)).toEqual([rows[0]!.content]);
    await stack.h.pool.query('drop trigger bulk_cut_off on posts');

    const retry = await bulk(key, body, 'cut-weekly');
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ created: 2, failed: 0 });
    expect(retry.body.results[0].post).toMatchObject({ id: made[0]!.id, scheduledAt: made[0]!.scheduledAt.toISOString() });
    const all = await posts(orgId);
    expect(all.filter((p) => p.content === rows[0]!.content)).toHaveLength(1);
    expect(all).toHaveLength(2);
    // The cut row takes the next week's slot, not the one the first row holds.
    expect(retry.body.results[1].post.scheduledAt).toBe(new Date(made[0]!.scheduledAt.getTime() + 7 * DAY).toISOString());
  });

  test('without an Idempotency-Key each send is a new batch', async () => {
    const { orgId, key, channelId } = await account(plainKey);
    const at = await stack.syncClock();
    const body = {
      mode: 'each',
      posts: [{ content: `no key ${crypto.randomUUID()}`, channelIds: [channelId], publishAt: new Date(at.getTime() + DAY).toISOString() }],
    };
    expect((await bulk(key, body)).body).toMatchObject({ created: 1 });
    const second = await bulk(key, body);
    expect(second.body).toMatchObject({ created: 0, failed: 1 });
    expect(second.body.results[0].error.code).toBe('duplicate_post');
    expect(await posts(orgId)).toHaveLength(1);
  });
});

describe('a batch made with a key whose posts need approval', () => {
  const contributorKey = async (organizationId: string) => {
    const em = stack.h.orm.em.fork();
    const email = `contributor-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const user = await createUser(em, { organizationId, email, password: 'long enough', role: 'contributor' });
    return (
      await createApiKey(em, {
        organizationId,
        name: 'contributor key',
        scopes: ['read', 'publish'],
        channels: 'all',
        createdBy: { userId: user.id, role: 'contributor' },
      })
    ).key;
  };
  const approvalKey = async (organizationId: string) =>
    (
      await createApiKey(stack.h.orm.em.fork(), {
        organizationId,
        name: 'needs approval',
        scopes: ['read', 'publish'],
        channels: 'all',
        requiresApproval: true,
      })
    ).key;

  /**
   * Every post of the organization waits for approval, and none reaches the instance: each one's
   * workflow waits with nothing in flight (no publish under way), still scheduled and pending.
   */
  async function expectWaiting(orgId: string, texts: string[]) {
    for (const p of await posts(orgId)) {
      const workflowId = postWorkflowId(p.id);
      expect({ content: p.content, workflow: await quiet(stack.client, workflowId) }).toEqual({ content: p.content, workflow: 'waiting' });
      expect(await stack.client.workflow.getHandle(workflowId).query(postStateQuery)).toMatchObject({
        phase: 'scheduled',
        approval: 'pending',
      });
    }
    const all = await posts(orgId);
    expect(all.map((p) => p.content).sort()).toEqual([...texts].sort());
    for (const p of all)
      expect({ content: p.content, status: p.status, approval: p.approval?.status }).toEqual({
        content: p.content,
        status: 'scheduled',
        approval: 'pending',
      });
    expect(fake.statuses.filter((s) => texts.includes(s.text))).toEqual([]);
  }

  for (const [name, key] of [
    ['a contributor’s key', contributorKey],
    ['a key with requiresApproval', approvalKey],
  ] as const) {
    for (const mode of ['each', 'all_or_nothing'] as const) {
      test(`bulk, ${mode}, ${name}: pending, nothing published (a publish-now row included)`, async () => {
        const a = await account(key);
        const at = await stack.syncClock();
        const texts = [`approve now ${crypto.randomUUID()}`, `approve later ${crypto.randomUUID()}`];
        const r = await bulk(a.key, {
          mode,
          posts: [
            { content: texts[0], channelIds: [a.channelId] },
            { content: texts[1], channelIds: [a.channelId], publishAt: new Date(at.getTime() + DAY).toISOString() },
          ],
        });
        expect(r.status).toBe(200);
        expect(r.body.created).toBe(2);
        for (const row of r.body.results) expect(row.post.approval?.status).toBe('pending');
        await expectWaiting(a.orgId, texts);
      });
    }

    test(`CSV import, ${name}: pending, nothing published`, async () => {
      const a = await account(key);
      const texts = [`csv now ${crypto.randomUUID()}`, `csv two ${crypto.randomUUID()}`];
      const csv = `content,channels\n${texts.map((t) => `${t},${a.channelId}`).join('\n')}\n`;
      const r = await call(stack.app, 'POST', '/v1/posts/import?mode=each', {
        key: a.key,
        rawBody: csv,
        headers: { 'content-type': 'text/csv' },
      });
      expect(r.status).toBe(200);
      expect(r.body.created).toBe(2);
      for (const row of r.body.results) expect(row.post.approval?.status).toBe('pending');
      await expectWaiting(a.orgId, texts);
    });
  }
});
