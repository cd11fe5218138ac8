// Threads under real faults, counted where they land (the fake Mastodon): a worker process
// SIGKILLed while the platform has created a middle reply and holds its answer, and a middle reply
// refused for good, then retried. In both, every item reaches the platform exactly once, each a
// reply to the one before, and the "nothing more is sent" checks wait on the workflow (its close,
// or its wait for a retry), never on a sleep.
import { describe, expect, test } from 'bun:test';
import type { Client } from '@temporalio/client';
import { addChannel } from '../domain/channels.ts';
import { postStateQuery, postWorkflowId } from '../workflows/post-types.ts';
import type { FakeMastodon, FakeResponse, FakeStatus } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';
import type { KillableWorker } from './harness/processes.ts';
import { useKillableStack } from './harness/killable-stack.ts';

type App = { handle: (r: Request) => Promise<Response> };

/** Polls (real time) until fn() holds. */
async function until(fn: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** Statuses the fake created with this text (what readers of the account see). */
const created = (fake: FakeMastodon, text: string) => fake.statuses.filter((s) => s.text === text);
/** Publish requests that reached the fake with this text (a re-send shows here even when answered from its key). */
const sent = (fake: FakeMastodon, text: string) => fake.sends.filter((s) => s.text === text).length;

/**
 * Once the fake has created a status with this text (before it answers), the next status POST
 * meets `response`: a fault aimed at the item after it, whatever the timing of the worker.
 */
function afterCreated(fake: FakeMastodon, text: string, response: FakeResponse): void {
  const push = fake.statuses.push.bind(fake.statuses);
  fake.statuses.push = (...added: FakeStatus[]) => {
    const n = push(...added);
    if (added.some((s) => s.text === text)) {
      fake.statuses.push = push;
      fake.failNext(1, response);
    }
    return n;
  };
}

describe('a thread on Mastodon with a worker process that is SIGKILLed', () => {
  let fake: FakeMastodon;
  let worker: KillableWorker;
  let client: Client;
  let app: App;
  let key: string;
  let channelId: string;

  useKillableStack({ name: 'thread-kills', requestTimeoutMs: 5000 }, async (stack) => {
    ({ fake, worker, client, app } = stack);
    const h = await harness();
    const org = await makeOrg('PRO', 'Thread kills org');
    key = (await makeKey(org.id)).key;
    const channel = await addChannel(h.orm.em.fork(), h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'mastodon',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    channelId = channel.id;
  });

  const handle = (postId: string) => client.workflow.getHandle(postWorkflowId(postId));

  /** A post's text and its three replies' (the post first), unique to this test. */
  function threadTexts(label: string): string[] {
    const tag = crypto.randomUUID().slice(0, 8);
    return [`${label} post ${tag}`, `${label} reply 1 ${tag}`, `${label} reply 2 ${tag}`, `${label} reply 3 ${tag}`];
  }

  /** The thread as a post due at once; its id. */
  async function postThread(texts: string[]): Promise<string> {
    const r = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: texts[0], channelIds: [channelId], thread: texts.slice(1).map((content) => ({ content })) },
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  }

  /** Each text created once at the fake, each a reply to the one before; every item published with its status id. */
  async function expectPublishedOnce(postId: string, texts: string[]) {
    const statuses = texts.map((text) => {
      const found = created(fake, text);
      expect({ text, created: found.length }).toEqual({ text, created: 1 });
      return found[0]!;
    });
    expect(statuses[0]!.in_reply_to_id).toBeNull();
    for (let i = 1; i < statuses.length; i++) expect(statuses[i]!.in_reply_to_id).toBe(statuses[i - 1]!.id);
    const got = await call(app, 'GET', `/v1/posts/${postId}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('published');
    const [c] = got.body.channels;
    expect(c.status).toBe('published');
    expect(c.platformPostId).toBe(statuses[0]!.id);
    expect(c.items.map((i: any) => [i.position, i.status, i.platformPostId])).toEqual(
      statuses.map((s, position) => [position, 'published', s.id]),
    );
  }

  test('the platform creates reply 2 and holds its answer; the worker is SIGKILLed and replaced: each item once, in a chain', async () => {
    const texts = threadTexts('killed');
    // Reply 1 created: the next status POST (reply 2) is created, then never answered.
    afterCreated(fake, texts[1]!, 'accept-then-hang');
    const postId = await postThread(texts);

    // Reply 2 is out at the platform and its answer lost with the worker, recorded nowhere.
    await until(() => created(fake, texts[2]!).length === 1, 'the platform to create reply 2');
    expect(created(fake, texts[3]!)).toHaveLength(0);
    await worker.killAndRestart();

    // The new worker takes reply 2 over once its heartbeat times out, and goes on.
    await handle(postId).result();
    await expectPublishedOnce(postId, texts);
    // Reply 2 was sent again with its idempotency key and answered from it: no second status.
    expect(sent(fake, texts[2]!)).toBeGreaterThanOrEqual(2);
    for (const text of [texts[0]!, texts[1]!, texts[3]!]) expect(sent(fake, text)).toBe(1);
  }, 60_000);

  test('the platform refuses reply 2 for good: the channel fails with its error, reply 3 unsent; a retry resumes at reply 2', async () => {
    const texts = threadTexts('refused');
    const reason = 'Validation failed: Text contains a word this instance refuses';
    afterCreated(fake, texts[1]!, { status: 422, body: { error: reason } });
    const postId = await postThread(texts);

    // The workflow has failed the channel and waits for a retry: it sends nothing more by itself.
    await until(async () => (await handle(postId).query(postStateQuery)).phase === 'failed', 'the channel to fail');
    const failed = await call(app, 'GET', `/v1/posts/${postId}`, { key });
    expect(failed.body.status).toBe('failed');
    const [c] = failed.body.channels;
    expect(c.status).toBe('failed');
    expect(c.error).toContain('Reply 2 failed');
    expect(c.error).toContain(reason);
    expect(c.items.map((i: any) => i.status)).toEqual(['published', 'published', 'failed', 'draft']);
    expect(c.items[2].error).toContain(reason);
    expect(c.items[2].errorCode).toBe(c.errorCode);
    expect(c.items[3].platformPostId).toBeNull();
    expect(texts.map((text) => created(fake, text).length)).toEqual([1, 1, 0, 0]);
    expect(sent(fake, texts[3]!)).toBe(0);

    // The platform takes it now: the retry sends reply 2 and 3, and nothing before them again.
    const retried = await call(app, 'POST', `/v1/posts/${postId}/retry`, { key });
    expect(retried.status).toBe(202);
    await handle(postId).result();
    await expectPublishedOnce(postId, texts);
    expect(texts.map((text) => sent(fake, text))).toEqual([1, 1, 1, 1]);
  }, 60_000);
});
