// A reply to a comment under a real fault, counted where it lands (the fake Mastodon): the
// platform creates the reply and holds its answer, and the worker process is SIGKILLed and
// replaced. The reply reaches the platform once, answering the comment, and is recorded published.
import { describe, expect, test } from 'bun:test';
import type { Client } from '@temporalio/client';
import { addChannel } from '../domain/channels.ts';
import { commentReplyWorkflowId } from '../workflows/comment-actions-types.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { person } from './harness/comments.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';
import { useKillableStack } from './harness/killable-stack.ts';
import type { KillableWorker } from './harness/processes.ts';

type App = { handle: (r: Request) => Promise<Response> };

async function until(fn: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

describe('a reply to a comment with a worker process that is SIGKILLed', () => {
  let fake: FakeMastodon;
  let worker: KillableWorker;
  let client: Client;
  let app: App;
  let key: string;
  let channelId: string;
  let organizationId: string;

  useKillableStack({ name: 'reply-kills', requestTimeoutMs: 5000 }, async (stack) => {
    ({ fake, worker, client, app } = stack);
    const h = await harness();
    const org = await makeOrg('PRO', 'Reply kills org');
    organizationId = org.id;
    key = (await makeKey(org.id)).key;
    const channel = await addChannel(h.orm.em.fork(), h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'mastodon',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    channelId = channel.id;
  });

  test('Mastodon creates the reply and holds its answer; the worker is SIGKILLed and replaced: one reply, under the comment, published', async () => {
    const h = await harness();
    const created = await call(app, 'POST', '/v1/posts', {
      key,
      body: { content: `answer me ${crypto.randomUUID()}`, channelIds: [channelId] },
    });
    expect(created.status).toBe(201);
    await client.workflow.getHandle(postWorkflowId(created.body.id)).result();
    const post = (await call(app, 'GET', `/v1/posts/${created.body.id}`, { key })).body;
    const statusId = post.channels[0].platformPostId as string;
    const theirs = fake.reply(statusId, person('61', 'dana'), 'When is the next one?');
    // The comment as the comments sweep stores it.
    const commentId = `cmt_${crypto.randomUUID().replaceAll('-', '').slice(0, 26)}`;
    await h.pool.query(
      `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
         author_handle, text, written_at, url, ours, created_at, updated_at)
       select $1, $2, pc.post_id, pc.id, pc.channel_id, $3, $4, 'dana@people.example', 'When is the next one?', now(), $5, false, now(), now()
         from post_channels pc where pc.post_id = $6`,
      [commentId, organizationId, theirs.id, statusId, theirs.url, created.body.id],
    );

    const text = `Next Friday ${crypto.randomUUID().slice(0, 8)}`;
    // The reply's status POST is created at the platform, then never answered.
    fake.failNext(1, 'accept-then-hang');
    const asked = await call(app, 'POST', `/v1/comments/${commentId}/reply`, { key, body: { content: text } });
    expect(asked.status).toBe(202);
    await until(() => fake.statuses.some((s) => s.text === text), 'the platform to create the reply');
    await worker.killAndRestart();

    await client.workflow.getHandle(commentReplyWorkflowId(asked.body.id)).result();
    const out = fake.statuses.filter((s) => s.text === text);
    expect(out).toHaveLength(1);
    expect(out[0]!.in_reply_to_id).toBe(theirs.id);
    // Sent again after the kill with its idempotency key, and answered from it.
    expect(fake.sends.filter((s) => s.text === text).length).toBeGreaterThanOrEqual(2);
    const reply = (await call(app, 'GET', `/v1/replies/${asked.body.id}`, { key })).body;
    expect(reply).toMatchObject({ status: 'published', platformReplyId: out[0]!.id });
    expect((await call(app, 'GET', `/v1/comments/${commentId}`, { key })).body.status).toBe('replied');
  }, 90_000);
});
