// What the comments tests share: a post published through the API on the fake Mastodon, people of
// the fediverse answering it there, and a run of the comments sweep (what its Schedule runs).
import { expect } from 'bun:test';
import { addChannel } from '../../domain/channels.ts';
import { COMMENTS_SWEEP_WORKFLOW_TYPE, type CommentsSweepResult } from '../../workflows/comments-sweep-types.ts';
import type { FakeAccount, FakeMastodon } from '../fakes/mastodon.ts';
import type { FakeX } from '../fakes/x.ts';
import { call, makeKey, makeOrg } from './fixtures.ts';
import type { startPostStack } from './post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;

/** Someone of another instance, as Mastodon's Account entity shows them. */
export const person = (id: string, username: string, domain = 'people.example'): FakeAccount => ({
  id,
  username,
  acct: `${username}@${domain}`,
  display_name: username,
  avatar: `https://${domain}/a/${id}.png`,
  url: `https://${domain}/@${username}`,
});

/** An organization with a Mastodon channel on the fake (and `extraChannels` more), and a post published on it now (with `thread`, a thread). */
export async function publishedOnMastodon(
  stack: Stack,
  mastodon: FakeMastodon,
  o: { thread?: { content: string }[]; extraChannels?: number } = {},
) {
  const org = await makeOrg('PRO');
  const { key } = await makeKey(org.id);
  const channels = [];
  for (let i = 0; i <= (o.extraChannels ?? 0); i++) {
    channels.push(
      await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: `inbox ${i}`,
        credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
      }),
    );
  }
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: { content: `comments ${crypto.randomUUID()}`, channelIds: [channels[0]!.id], ...(o.thread ? { thread: o.thread } : {}) },
  });
  expect(created.status).toBe(201);
  const postId = created.body.id as string;
  await stack.settle(postId);
  const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
  expect(post.status).toBe('published');
  return { org, key, channel: channels[0]!, others: channels.slice(1), postId, post, statusId: post.channels[0].platformPostId as string };
}

/** One run of the comments sweep on the stack's worker. */
export function sweepComments(stack: Stack): Promise<CommentsSweepResult> {
  return stack.client.workflow.execute(COMMENTS_SWEEP_WORKFLOW_TYPE, {
    taskQueue: stack.taskQueue,
    workflowId: `comments-sweep-${crypto.randomUUID()}`,
    args: [{ limit: 500, rounds: 10 }],
  });
}

/** An organization with an X channel on the fake, a post published on it now, and Ben's spam reply under it, collected. */
export async function spamOnX(stack: Stack, x: FakeX) {
  const org = await makeOrg('PRO');
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'X',
    name: 'x',
    credentials: { accessToken: 'good-token' },
  });
  await stack.syncClock();
  const created = await call(stack.app, 'POST', '/v1/posts', {
    key,
    body: { content: `hide ${crypto.randomUUID()}`, channelIds: [channel.id] },
  });
  expect(created.status).toBe(201);
  const postId = created.body.id as string;
  await stack.settle(postId);
  const post = (await call(stack.app, 'GET', `/v1/posts/${postId}`, { key })).body;
  const root = x.tweets.find((t) => t.id === post.channels[0].platformPostId)!;
  const spam = x.reply(root, { id: '5002', username: 'ben_x', name: 'Ben' }, 'Buy followers here');
  await sweepComments(stack);
  return { org, key, postId, spam };
}
