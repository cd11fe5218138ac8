// Threads through the real workflow to a real Bluesky PDS (@atproto/pds, test/harness/pds.ts): the
// items are published one after another, each a reply to the one before, read back from the PDS;
// a refusal by the PDS on an item leaves the ones before published, and a retry publishes the
// rest once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Context } from '@temporalio/activity';
import { Channel } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { createBlueskyConnector } from '../platforms/bluesky.ts';
import { call, makeChannel, makeKey, makeOrg, readyMedia } from './harness/fixtures.ts';
import { pds, stopPds, type TestAccount, type TestPds } from './harness/pds.ts';
import { startPostStack } from './harness/post-stack.ts';

let p: TestPds;
let stack: Awaited<ReturnType<typeof startPostStack>>;
let key: string;
let orgId: string;

/** Runs before a follow-up's publish activity (the worker's own interceptor): a fault placed between two items. */
let beforeFollowUp: ((item: { postId: string; position: number }, ctx: Context) => Promise<void>) | null = null;
const betweenItems: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const hook = beforeFollowUp;
      if (hook && ctx.info.activityType === 'publishFollowUp') await hook(input.args[0] as { postId: string; position: number }, ctx);
      return next(input);
    },
  },
});

beforeAll(async () => {
  p = await pds();
  stack = await startPostStack({
    storage: 'disk',
    publishInterceptors: [betweenItems],
    // No workflow cache: after a worker restart the time-skipping server would keep the next
    // workflow task on the stopped worker's sticky queue (test/posts.test.ts "crash safety").
    maxCachedWorkflows: 0,
    connectors: { BLUESKY: createBlueskyConnector({ timeoutMs: 10_000, videoServiceUrl: null, outbound: { allowPrivate: true } }) },
  });
  const org = await makeOrg('PRO', 'Threads org');
  orgId = org.id;
  key = (await makeKey(orgId)).key;
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await stopPds();
});

async function blueskyChannel(acct: TestAccount) {
  const em = stack.h.orm.em.fork();
  return addChannel(em, stack.h.credentialsKey, {
    organizationId: orgId,
    platform: 'BLUESKY',
    name: acct.handle,
    credentials: { service: p.url, identifier: acct.handle, appPassword: acct.appPassword },
  });
}

/** The account's posts on the PDS, as its repository holds them. */
async function records(acct: TestAccount) {
  const r = await p.xrpc('GET', 'com.atproto.repo.listRecords', {
    params: { repo: acct.did, collection: 'app.bsky.feed.post', limit: '100' },
  });
  expect(r.status).toBe(200);
  return r.body.records as { uri: string; cid: string; value: any }[];
}

async function postThread(channelId: string, thread: { content: string; mediaIds?: string[] }[], content: string) {
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content, channelIds: [channelId], thread } });
  expect(created.status).toBe(201);
  await stack.settle(created.body.id);
  return (await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key })).body;
}

describe('a thread on a real Bluesky PDS', () => {
  test('three items, an image on the second: each a reply to the one before, under the first', async () => {
    const acct = await p.newAccount('thread');
    const channel = await blueskyChannel(acct);
    const image = await readyMedia(stack.storage!, orgId);
    const post = await postThread(
      channel.id,
      [{ content: 'Second: with a picture', mediaIds: [image] }, { content: 'Third: the end' }],
      'First: a thread',
    );
    expect(post.status).toBe('published');
    const [c] = post.channels;
    expect(c.status).toBe('published');
    expect(c.items.map((i: any) => [i.position, i.kind, i.status])).toEqual([
      [0, 'post', 'published'],
      [1, 'reply', 'published'],
      [2, 'reply', 'published'],
    ]);
    expect(c.items[0].platformPostId).toBe(c.platformPostId);
    expect(c.items[1].mediaIds).toEqual([image]);
    for (const item of c.items) expect(item.url).toMatch(/^https:\/\/bsky\.app\/profile\//);

    const repo = await records(acct);
    expect(repo).toHaveLength(3);
    const byUri = new Map(repo.map((r) => [r.uri, r]));
    const [first, second, third] = c.items.map((i: any) => byUri.get(i.platformPostId)!);
    expect(first!.value.text).toBe('First: a thread');
    expect(first!.value.reply).toBeUndefined();
    expect(second!.value.reply).toEqual({ root: { uri: first!.uri, cid: first!.cid }, parent: { uri: first!.uri, cid: first!.cid } });
    expect(second!.value.embed.$type).toBe('app.bsky.embed.images');
    expect(second!.value.embed.images).toHaveLength(1);
    expect(third!.value.reply).toEqual({ root: { uri: first!.uri, cid: first!.cid }, parent: { uri: second!.uri, cid: second!.cid } });
  }, 120_000);

  test('the PDS refuses the third item: the first two stay published; a retry publishes the third once', async () => {
    const acct = await p.newAccount('refuse');
    const channel = await blueskyChannel(acct);
    await stack.syncClock();
    const receiver = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async (req) => (await req.text(), new Response('ok')) });
    const hook = await call(stack.app, 'POST', '/v1/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['post.channel.published', 'post.channel.failed'] },
    });
    expect(hook.status).toBe(201);
    // Item 2 recorded, item 3 not yet sent: the account is taken down, as a moderator would.
    beforeFollowUp = async ({ position }) => {
      if (position === 2) await p.takedown(acct.did);
    };
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'One', channelIds: [channel.id], thread: [{ content: 'Two' }, { content: 'Three' }] },
    });
    expect(created.status).toBe(201);
    await stack.settle(created.body.id);
    beforeFollowUp = null;
    const failed = (await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key })).body;
    expect(failed.status).toBe('failed');
    const [c] = failed.channels;
    expect(c.status).toBe('failed');
    expect(c.error).toContain('Reply 2 failed');
    expect(c.items.map((i: any) => i.status)).toEqual(['published', 'published', 'failed']);
    expect(c.items[2].error).toBeTruthy();
    expect(c.items[2].errorCode).toBe(c.errorCode);
    expect(c.items[0].error).toBeNull();
    // The webhook carries the items.
    const event = async (type: string) => {
      const rows = await stack.h.orm.em
        .fork()
        .getConnection()
        .execute<{ payload: any }[]>(`select payload from webhook_events where type = ? and payload->'data'->'post'->>'id' = ?`, [
          type,
          created.body.id,
        ]);
      return rows.map((r) => r.payload.data.postChannel);
    };
    const [failedEvent] = await event('post.channel.failed');
    expect(failedEvent.items.map((i: any) => i.status)).toEqual(['published', 'published', 'failed']);
    expect(failedEvent.items[2].error).toBe(c.items[2].error);

    // Lifted; the channel is reconnected (the refusal marked it), then retried.
    await p.restore(acct.did);
    await stack.h.orm.em.fork().nativeUpdate(Channel, { id: channel.id }, { status: 'active' });
    const before = await records(acct);
    expect(before.map((r) => r.value.text).sort()).toEqual(['One', 'Two']);
    await stack.syncClock();
    const retried = await call(stack.app, 'POST', `/v1/posts/${created.body.id}/retry`, { key });
    expect(retried.status).toBe(202);
    await stack.settle(created.body.id);
    const done = (await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key })).body;
    expect(done.status).toBe('published');
    expect(done.channels[0].items.map((i: any) => i.status)).toEqual(['published', 'published', 'published']);
    // The same two records, and the third once.
    const after = await records(acct);
    expect(after.map((r) => r.value.text).sort()).toEqual(['One', 'Three', 'Two']);
    expect(after.filter((r) => before.some((b) => b.uri === r.uri && b.cid === r.cid))).toHaveLength(2);
    const third = after.find((r) => r.value.text === 'Three')!;
    expect(third.value.reply.parent.uri).toBe(done.channels[0].items[1].platformPostId);
    expect(third.value.reply.root.uri).toBe(done.channels[0].items[0].platformPostId);
    const published = await event('post.channel.published');
    expect(published).toHaveLength(1);
    expect(published[0].items.map((i: any) => i.platformPostId)).toEqual(done.channels[0].items.map((i: any) => i.platformPostId));
    await call(stack.app, 'DELETE', `/v1/webhooks/${hook.body.endpoint.id}`, { key });
    receiver.stop(true);
  }, 120_000);
});

describe('a worker killed between two items', () => {
  test('the next worker sends the rest, each item once, each a reply to the one before', async () => {
    const acct = await p.newAccount('killed');
    const channel = await blueskyChannel(acct);
    let reached!: () => void;
    const atItem2 = new Promise<void>((r) => (reached = r));
    // Once: the worker stops while item 2 is about to be sent (item 1 is recorded).
    beforeFollowUp = async ({ position }, ctx) => {
      if (position !== 2) return;
      beforeFollowUp = null;
      reached();
      await new Promise((_, reject) => ctx.cancellationSignal.addEventListener('abort', () => reject(new Error('worker stopped'))));
    };
    await stack.syncClock();
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'Alpha', channelIds: [channel.id], thread: [{ content: 'Beta' }, { content: 'Gamma' }, { content: 'Delta' }] },
    });
    expect(created.status).toBe(201);
    await atItem2;
    const mid = await records(acct);
    expect(mid.map((r) => r.value.text).sort()).toEqual(['Alpha', 'Beta']);
    await stack.restartWorker();
    await stack.settle(created.body.id);
    const done = (await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key })).body;
    expect(done.status).toBe('published');
    const items = done.channels[0].items;
    expect(items.map((i: any) => i.status)).toEqual(['published', 'published', 'published', 'published']);
    const repo = await records(acct);
    expect(repo.map((r) => r.value.text).sort()).toEqual(['Alpha', 'Beta', 'Delta', 'Gamma']);
    const uri = (text: string) => repo.find((r) => r.value.text === text)!.uri;
    for (const [i, text] of ['Alpha', 'Beta', 'Gamma', 'Delta'].entries()) expect(items[i].platformPostId).toBe(uri(text));
    for (const [child, parent] of [
      ['Beta', 'Alpha'],
      ['Gamma', 'Beta'],
      ['Delta', 'Gamma'],
    ] as const) {
      const record = repo.find((r) => r.value.text === child)!;
      expect(record.value.reply.parent.uri).toBe(uri(parent));
      expect(record.value.reply.root.uri).toBe(uri('Alpha'));
    }
  }, 120_000);
});

describe('what a thread or a first comment may be, per platform', () => {
  let x: string;
  let facebook: string;
  let telegram: string;
  let mastodon: string;
  beforeAll(async () => {
    x = (await makeChannel(orgId, 'X')).id;
    facebook = (await makeChannel(orgId, 'FACEBOOK')).id;
    telegram = (await makeChannel(orgId, 'TELEGRAM')).id;
    mastodon = (await makeChannel(orgId, 'MASTODON')).id;
  });
  const validate = (body: Record<string, unknown>) => call(stack.app, 'POST', '/v1/posts/validate', { key, body });
  const paths = (r: { body: any }) => r.body.error.details.fields.map((f: { path: string }) => f.path);

  test('X gets the first comment as its first reply, then the thread; Facebook gets it as a comment', async () => {
    const r = await validate({
      content: 'Launch day',
      channelIds: [x, facebook],
      thread: [{ content: 'How it works' }, { content: 'Try it' }],
      threadByPlatform: { FACEBOOK: [] },
      firstComment: { content: 'Link: https://example.com/launch' },
    });
    expect(r.status).toBe(200);
    const [onX, onFacebook] = r.body.channels;
    expect(onX.items.map((i: any) => [i.position, i.kind, i.content])).toEqual([
      [1, 'reply', 'Link: https://example.com/launch'],
      [2, 'reply', 'How it works'],
      [3, 'reply', 'Try it'],
    ]);
    // X counts a link as 23.
    expect(onX.items[0].characters).toBe(6 + 23);
    expect(onX.items[0].maxChars).toBe(280);
    expect(onFacebook.items).toEqual([
      { position: 1, kind: 'comment', content: 'Link: https://example.com/launch', mediaIds: [], characters: 32, maxChars: 8000 },
    ]);
  });

  test('a platform that takes no thread refuses one at its path; threadByPlatform [] posts there alone', async () => {
    const refused = await validate({ content: 'Hi', channelIds: [x, facebook, telegram], thread: [{ content: 'more' }] });
    expect(refused.status).toBe(422);
    expect(paths(refused)).toEqual(['thread', 'thread']);
    expect(refused.body.error.details.fields[0].message).toContain(`FACEBOOK channel ${facebook} takes no thread`);
    expect(refused.body.error.details.fields[1].message).toContain('threadByPlatform.TELEGRAM');
    const alone = await validate({
      content: 'Hi',
      channelIds: [x, facebook, telegram],
      thread: [{ content: 'more' }],
      threadByPlatform: { FACEBOOK: [], TELEGRAM: [] },
    });
    expect(alone.status).toBe(200);
    expect(alone.body.channels.map((c: any) => c.items.length)).toEqual([1, 0, 0]);
  });

  test('a first comment aimed at a platform without comments is refused at firstComment', async () => {
    const r = await validate({ content: 'Hi', channelIds: [telegram], firstComment: { content: 'and a comment' } });
    expect(r.status).toBe(422);
    expect(paths(r)).toEqual(['firstComment']);
    expect(r.body.error.details.fields[0].message).toBe(`TELEGRAM channel ${telegram} takes no comments; post there without firstComment`);
  });

  test('each item is checked as its platform counts it: length, media, emptiness, number of items', async () => {
    const long = await validate({ content: 'Hi', channelIds: [x], thread: [{ content: 'fine' }, { content: '😀'.repeat(141) }] });
    expect(long.status).toBe(422);
    expect(paths(long)).toEqual(['thread[1].content']);
    // X weighs an emoji as 2.
    expect(long.body.error.details.fields[0].message).toContain('is 282 characters');

    const own = await validate({ content: 'Hi', channelIds: [x, mastodon], threadByPlatform: { X: [{ content: ' ' }] } });
    expect(own.status).toBe(422);
    expect(paths(own)).toEqual(['threadByPlatform.X[0]']);

    const images = await Promise.all([1, 2, 3, 4, 5].map(() => readyMedia(stack.storage!, orgId)));
    const media = await validate({ content: 'Hi', channelIds: [x], thread: [{ content: 'pictures', mediaIds: images }] });
    expect(media.status).toBe(422);
    expect(paths(media)).toEqual(['thread[0].mediaIds']);
    expect(media.body.error.details.fields[0].message).toContain('at most 4');

    const unknown = await validate({
      content: 'Hi',
      channelIds: [x],
      thread: [{ content: 'a' }, { content: 'b', mediaIds: ['med_nope'] }],
    });
    expect(unknown.status).toBe(422);
    expect(paths(unknown)).toEqual(['thread[1].mediaIds']);

    const many = await validate({
      content: 'Hi',
      channelIds: [x],
      thread: Array.from({ length: 25 }, (_, i) => ({ content: `item ${i}` })),
      firstComment: { content: 'first' },
    });
    expect(many.status).toBe(422);
    expect(paths(many)).toEqual(['thread']);
    expect(many.body.error.details.fields[0].message).toContain('at most 25 replies');

    const comment = await validate({ content: 'Hi', channelIds: [facebook], firstComment: { content: 'x'.repeat(8001) } });
    expect(comment.status).toBe(422);
    expect(paths(comment)).toEqual(['firstComment.content']);

    const stray = await validate({ content: 'Hi', channelIds: [x], threadByPlatform: { MASTODON: [{ content: 'a' }] } });
    expect(stray.status).toBe(422);
    expect(paths(stray)).toEqual(['threadByPlatform.MASTODON']);
  });

  test('duplicate_post compares the whole conversation: the same thread again is refused, another thread is not', async () => {
    await stack.syncClock();
    const publishAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const body = { content: 'Same start', channelIds: [mastodon], publishAt, thread: [{ content: 'Same  reply' }] };
    const first = await call(stack.app, 'POST', '/v1/posts', { key, body });
    expect(first.status).toBe(201);
    const again = await call(stack.app, 'POST', '/v1/posts', { key, body: { ...body, thread: [{ content: 'Same reply ' }] } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('duplicate_post');
    const other = await call(stack.app, 'POST', '/v1/posts', { key, body: { ...body, thread: [{ content: 'Another reply' }] } });
    expect(other.status).toBe(201);
    const none = await call(stack.app, 'POST', '/v1/posts', { key, body: { ...body, thread: undefined } });
    expect(none.status).toBe(201);
  });

  test('while scheduled, an edit changes or drops the items; a cancel takes them with the post', async () => {
    await stack.syncClock();
    const publishAt = new Date(Date.now() + 5 * 86_400_000).toISOString();
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'Edit me', channelIds: [x, facebook], publishAt, thread: [{ content: 'one' }], threadByPlatform: { FACEBOOK: [] } },
    });
    expect(created.status).toBe(201);
    expect(created.body.channels.map((c: any) => c.items.length)).toEqual([2, 1]);
    const id = created.body.id;

    const edited = await call(stack.app, 'PATCH', `/v1/posts/${id}`, {
      key,
      body: { thread: [{ content: 'uno' }, { content: 'dos' }], firstComment: { content: 'see below' } },
    });
    expect(edited.status).toBe(200);
    const onX = edited.body.channels.find((c: any) => c.channelId === x);
    const onFacebook = edited.body.channels.find((c: any) => c.channelId === facebook);
    expect(onX.items.map((i: any) => i.content)).toEqual(['Edit me', 'see below', 'uno', 'dos']);
    expect(onFacebook.items.map((i: any) => [i.kind, i.content])).toEqual([
      ['post', 'Edit me'],
      ['comment', 'see below'],
    ]);
    expect(edited.body.thread).toEqual([
      { content: 'uno', mediaIds: [] },
      { content: 'dos', mediaIds: [] },
    ]);

    const refused = await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { threadByPlatform: {} } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields.map((f: any) => f.path)).toEqual(['thread']);

    const dropped = await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { thread: null, firstComment: null } });
    expect(dropped.status).toBe(200);
    expect(dropped.body.channels.map((c: any) => c.items.length)).toEqual([1, 1]);
    expect(dropped.body.thread).toBeNull();
    expect(dropped.body.firstComment).toBeNull();
    const listed = await call(stack.app, 'GET', `/v1/posts?status=scheduled&limit=100`, { key });
    expect(listed.body.data.find((p: any) => p.id === id).channels[0].items).toHaveLength(1);

    const again = await call(stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { thread: [{ content: 'back' }] } });
    expect(again.status).toBe(200);
    const cancelled = await call(stack.app, 'DELETE', `/v1/posts/${id}`, { key });
    expect(cancelled.status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/posts/${id}`, { key })).status).toBe(404);
  });
});
