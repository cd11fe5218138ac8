// The URLs a platform answers for what it published are links the API, webhook receivers and the
// web app hand on: only an absolute http(s) URL is recorded, anything else (a hostile self-hosted
// Mastodon instance's `javascript:`) is null. End to end: API → the post workflow → the Mastodon
// connector → a fake instance that answers the URL each test gives it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PostChannel, PostChannelItem } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { safeHttpUrl } from '../lib/urls.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let receiver: ReturnType<typeof startEventReceiver>;
/** The `url` the fake instance answers for a status, by the status's text. */
const statusUrls = new Map<string, string>();

beforeAll(async () => {
  fake = await startFakeMastodon({ statusUrl: ({ text }) => statusUrls.get(text) });
  receiver = startEventReceiver();
  stack = await startPostStack();
});
afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  receiver?.stop();
});

async function setup(path: string) {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  const hook = await call(stack.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: 'all' },
  });
  expect(hook.status).toBe(201);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { key, channelId: channel.id };
}

const eventsAt = (path: string, type: string) => receiver.events.filter((e) => e.path === path && e.type === type);

async function until(check: () => boolean) {
  for (let i = 0; i < 200; i++) {
    for (let j = 0; j < 10; j++) {
      if (check()) return;
      await Bun.sleep(20);
    }
    await stack.env.sleep('30 seconds');
  }
  throw new Error(`condition never held; received ${JSON.stringify(receiver.events.map((e) => [e.path, e.type]))}`);
}

/** Publishes now and waits for the post's post.published event. */
async function publish(key: string, path: string, body: Record<string, unknown>) {
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', { key, body });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await stack.settle(id)).phase).toBe('done');
  await until(() => eventsAt(path, 'post.published').some((e) => e.data.id === id));
  const shown = await call(stack.app, 'GET', `/v1/posts/${id}`, { key });
  expect(shown.status).toBe(200);
  const event = eventsAt(path, 'post.published').find((e) => e.data.id === id)!;
  const channelEvent = eventsAt(path, 'post.channel.published').find((e) => e.data.post.id === id)!;
  return { id, shown: shown.body, event: event.data, channelEvent: channelEvent.data };
}

describe('URLs a platform answers for a published post', () => {
  test('a status URL `javascript:…` is recorded as null: GET /v1/posts/{id}, post.published and post.channel.published', async () => {
    const { key, channelId } = await setup('/hostile');
    const content = `hostile ${crypto.randomUUID()}`;
    statusUrls.set(content, 'javascript:alert(document.cookie)');
    const { id, shown, event, channelEvent } = await publish(key, '/hostile', { content, channelIds: [channelId] });

    const status = fake.statuses.find((s) => s.text === content)!;
    expect(status.url).toBe('javascript:alert(document.cookie)');
    // Published all the same: the platform has the post, only its link is not one.
    expect(shown.status).toBe('published');
    expect(shown.channels[0]).toMatchObject({ status: 'published', platformPostId: status.id, url: null });
    expect(shown.channels[0].items[0]).toMatchObject({ position: 0, platformPostId: status.id, url: null });
    expect(event.channels[0]).toMatchObject({ platformPostId: status.id, url: null });
    expect(channelEvent.postChannel).toMatchObject({ platformPostId: status.id, url: null });
    expect(JSON.stringify([shown, event, channelEvent])).not.toContain('javascript');
    const row = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: id, channel: channelId });
    expect(row.url).toBeNull();
  });

  test('a thread: each reply URL is kept only when it is http(s); an https status URL is kept as answered', async () => {
    const { key, channelId } = await setup('/thread');
    const tag = crypto.randomUUID();
    const content = `thread root ${tag}`;
    const replies = [`reply one ${tag}`, `reply two ${tag}`, `reply three ${tag}`];
    statusUrls.set(content, 'https://social.example/@user/1001');
    statusUrls.set(replies[0]!, 'data:text/html,<script>alert(1)</script>');
    statusUrls.set(replies[1]!, '/@user/relative');
    statusUrls.set(replies[2]!, 'http://social.example/@user/1003');
    const { id, shown, event } = await publish(key, '/thread', {
      content,
      channelIds: [channelId],
      thread: replies.map((r) => ({ content: r })),
    });

    const urls = (items: { url: string | null }[]) => items.map((i) => i.url);
    const want = ['https://social.example/@user/1001', null, null, 'http://social.example/@user/1003'];
    expect(shown.channels[0].url).toBe('https://social.example/@user/1001');
    expect(urls(shown.channels[0].items)).toEqual(want);
    expect(shown.channels[0].items.every((i: { platformPostId: string | null }) => i.platformPostId)).toBe(true);
    expect(urls(event.channels[0].items)).toEqual(want);
    // Every reply was sent, each answering the one before (a null URL does not break the thread).
    const sent = replies.map((r) => fake.statuses.find((s) => s.text === r)!);
    expect(sent.map((s) => s.in_reply_to_id)).toEqual([fake.statuses.find((s) => s.text === content)!.id, sent[0]!.id, sent[1]!.id]);
    const pc = await stack.h.orm.em.fork().findOneOrFail(PostChannel, { post: id, channel: channelId });
    const rows = await stack.h.orm.em.fork().find(PostChannelItem, { postChannel: pc.id }, { orderBy: { position: 'asc' } });
    expect(rows.map((r) => r.url)).toEqual(want.slice(1));
  });
});

describe('safeHttpUrl (lib/urls.ts)', () => {
  test('keeps absolute http(s) URLs, refuses every other scheme, relative and unparsable strings', () => {
    expect(safeHttpUrl('https://mastodon.example/@user/1')).toBe('https://mastodon.example/@user/1');
    expect(safeHttpUrl('http://127.0.0.1:8080/x?y=1#z')).toBe('http://127.0.0.1:8080/x?y=1#z');
    for (const bad of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'java\nscript:alert(1)',
      'data:text/html,<b>x</b>',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'ftp://example.com/x',
      '//evil.example/x',
      '/relative',
      'not a url',
      '',
      null,
      undefined,
    ]) {
      expect({ bad, got: safeHttpUrl(bad) }).toEqual({ bad, got: null });
    }
  });
});
