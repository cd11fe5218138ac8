// Hiding a comment and showing it again through the API, on the real stack and the X fake (hidden
// replies): the fake holds the state, the comment says `hidden` then `read` with its moderation's
// outcome; a refusal is the moderation's `failed` with its class; a platform without hiding, and
// one of our own replies, are refused before anything is asked; a viewer's key may not.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createXConnector } from '../platforms/x.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { type FakeX, startFakeX } from './fakes/x.ts';
import { person, publishedOnMastodon, spamOnX, sweepComments } from './harness/comments.ts';
import { call } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let x: FakeX;
let mastodon: FakeMastodon;

beforeAll(async () => {
  x = await startFakeX();
  mastodon = await startFakeMastodon();
  stack = await startPostStack({
    connectors: {
      X: createXConnector({ baseUrl: x.url, timeoutMs: 2_000 }),
      MASTODON: createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }),
    },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await x?.stop();
  await mastodon?.stop();
});

/** A post published on X with Ben's reply under it, collected: its comment's id. */
async function onX() {
  const { org, key, postId, spam } = await spamOnX(stack, x);
  const inbox = await call(stack.app, 'GET', `/v1/inbox?postId=${postId}`, { key });
  expect(inbox.body.data.map((c: { platformCommentId: string }) => c.platformCommentId)).toEqual([spam.id]);
  return { org, key, theirs: spam, commentId: inbox.body.data[0].id as string };
}

describe('hiding comments', () => {
  test('hidden on X, then shown again: the fake holds it, the comment says so with its outcome; asked twice, the same', async () => {
    const s = await onX();
    const hidden = await call(stack.app, 'POST', `/v1/comments/${s.commentId}/hide`, { key: s.key });
    expect(hidden.status).toBe(200);
    expect(hidden.body).toMatchObject({ id: s.commentId, status: 'hidden', moderation: { action: 'hide', status: 'done', error: null } });
    expect(x.tweets.find((t) => t.id === s.theirs.id)?.hidden).toBe(true);
    expect((await call(stack.app, 'GET', `/v1/inbox?status=hidden&postId=${hidden.body.postId}`, { key: s.key })).body.data).toHaveLength(
      1,
    );
    const again = await call(stack.app, 'POST', `/v1/comments/${s.commentId}/hide`, { key: s.key });
    expect(again.body).toMatchObject({ status: 'hidden', moderation: { status: 'done' } });

    const shown = await call(stack.app, 'POST', `/v1/comments/${s.commentId}/unhide`, { key: s.key });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ status: 'read', moderation: { action: 'unhide', status: 'done' } });
    expect(x.tweets.find((t) => t.id === s.theirs.id)?.hidden).toBe(false);
  });

  test('X refuses (a token without the moderation scope): the moderation failed with its class; the comment is not hidden', async () => {
    const s = await onX();
    x.scopes.set('good-token', new Set(['tweet.read', 'tweet.write', 'users.read', 'offline.access']));
    try {
      const r = await call(stack.app, 'POST', `/v1/comments/${s.commentId}/hide`, { key: s.key });
      expect(r.status).toBe(200);
      expect(r.body.status).toBe('unread');
      expect(r.body.moderation).toMatchObject({ action: 'hide', status: 'failed', errorCode: expect.any(String) });
      expect(r.body.moderation.error.length).toBeGreaterThan(0);
      expect(x.tweets.find((t) => t.id === s.theirs.id)?.hidden).not.toBe(true);
    } finally {
      x.scopes.delete('good-token');
    }
  });

  test('refused before anything is asked: a platform without hiding (Mastodon), one of our own replies; a viewer’s key', async () => {
    const m = await publishedOnMastodon(stack, mastodon);
    mastodon.reply(m.statusId, person('95', 'erin'), 'hello');
    await sweepComments(stack);
    const [theirs] = (await call(stack.app, 'GET', `/v1/inbox?postId=${m.postId}`, { key: m.key })).body.data;
    const onMastodon = await call(stack.app, 'POST', `/v1/comments/${theirs.id}/hide`, { key: m.key });
    expect(onMastodon.status).toBe(409);
    expect(onMastodon.body.error.details).toEqual({ platform: 'MASTODON' });

    const s = await onX();
    const reply = await call(stack.app, 'POST', `/v1/comments/${s.commentId}/reply`, { key: s.key, body: { content: 'Please stop' } });
    await stack.client.workflow.getHandle(`comment-reply-${reply.body.id}`).result();
    const ours = (await call(stack.app, 'GET', `/v1/posts/${reply.body.postId}/comments`, { key: s.key })).body.data.find(
      (c: { ours: boolean }) => c.ours,
    );
    expect((await call(stack.app, 'POST', `/v1/comments/${ours.id}/hide`, { key: s.key })).status).toBe(409);

    const em = stack.h.orm.em.fork();
    const viewer = await createUser(em, {
      organizationId: s.org.id,
      email: `v-${crypto.randomUUID()}@example.com`,
      password: 'long enough',
      role: 'viewer',
    });
    const viewerKey = await createApiKey(em, {
      organizationId: s.org.id,
      name: 'viewer',
      scopes: ['read'],
      channels: 'all',
      createdBy: { userId: viewer.id, role: 'viewer' },
    });
    expect((await call(stack.app, 'POST', `/v1/comments/${s.commentId}/hide`, { key: viewerKey.key })).status).toBe(403);
    expect(x.tweets.find((t) => t.id === s.theirs.id)?.hidden).not.toBe(true);
  });
});
