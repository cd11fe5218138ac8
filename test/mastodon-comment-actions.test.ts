// Answering and deleting under a published Mastodon status, against the local fake instance
// (test/fakes/mastodon.ts), which answers as Mastodon does: a reply is a status with
// in_reply_to_id; DELETE /api/v1/statuses/:id removes only the token's own status and answers 404
// "Record not found" both for another account's status and for one that is gone.
import { describe, expect, test } from 'bun:test';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { type FakeAccount, type FakeMastodon, type FakeStatus, startFakeMastodon } from './fakes/mastodon.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeMastodon);

const connector = (timeoutMs = 2_000) => createMastodonConnector({ timeoutMs, outbound: { allowPrivate: true } });

function person(f: FakeMastodon, id: string, username: string): FakeAccount {
  return { id, username, acct: username, display_name: username, avatar: `${f.url}/avatars/${id}.png`, url: `${f.url}/@${username}` };
}

async function published(timeoutMs?: number) {
  const f = await fake();
  const c = connector(timeoutMs);
  const credentials = { instanceUrl: f.url, accessToken: 'good-token' };
  const post = await c.publish({ text: 'What do you think?', media: [], idempotencyKey: 'post-1:ch-1', credentials });
  return { f, c, credentials, post, alice: person(f, '7', 'alice'), bob: person(f, '8', 'bob') };
}

const ref = (s: FakeStatus): PostRef => ({ platformPostId: s.id, url: s.url });
const target = (id: string, post: PostRef): CommentTarget => ({ platformCommentId: id, url: null, post });

describe('Mastodon: answering a comment', () => {
  test('a reply to a comment deep in the conversation answers that comment, and reads back under it as ours', async () => {
    const { f, c, credentials, post, alice, bob } = await published();
    const first = f.reply(post.platformPostId, alice, 'Does it federate?');
    const deep = f.reply(first.id, bob, 'Wondering too');
    const req: PublishRequest = {
      text: 'It does!',
      media: [],
      idempotencyKey: 'reply-deep',
      credentials,
      replyTo: { root: post, parent: ref(deep) },
    };
    const ours = await c.publish(req);

    expect(f.statuses.find((s) => s.id === ours.platformPostId)).toMatchObject({
      text: 'It does!',
      in_reply_to_id: deep.id,
      idempotencyKey: 'reply-deep',
      token: 'good-token',
    });
    const read = await c.readComments!(credentials, post);
    expect(read.comments.find((x) => x.platformCommentId === ours.platformPostId)).toMatchObject({ parentPlatformId: deep.id, ours: true });
    expect(read.comments.filter((x) => x.ours).map((x) => x.platformCommentId)).toEqual([ours.platformPostId]);
  });

  test('attempt 2, after the key expired, finds the reply an earlier attempt made: one status, one send', async () => {
    const { f, c, credentials, post, alice, bob } = await published(500);
    const first = f.reply(post.platformPostId, alice, 'Nice');
    const second = f.reply(post.platformPostId, bob, 'Nice too');
    // The same words to Alice: a reply to another comment is not taken for this one.
    const toAlice = await c.publish({
      text: 'Thanks!',
      media: [],
      idempotencyKey: 'reply-alice',
      credentials,
      replyTo: { root: post, parent: ref(first) },
    });
    const req: PublishRequest = {
      text: 'Thanks!',
      media: [],
      idempotencyKey: 'reply-bob',
      credentials,
      replyTo: { root: post, parent: ref(second) },
    };
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(req))).kind).toBe('transient');

    f.advance(2 * 60 * 60 * 1000);
    const found = await c.findPublished!({ ...req, attempt: 2, firstAttemptAt: new Date(Date.now() - 2 * 60 * 60 * 1000) });

    const toBob = f.statuses.filter((s) => s.in_reply_to_id === second.id && s.token === 'good-token');
    expect(toBob).toHaveLength(1);
    expect(found).toEqual({ platformPostId: toBob[0]!.id, url: toBob[0]!.url, publishedAt: toBob[0]!.created_at });
    expect(found!.platformPostId).not.toBe(toAlice.platformPostId);
    expect(f.sends.filter((s) => s.idempotencyKey === 'reply-bob')).toHaveLength(1);
  });
});

describe('Mastodon: deleting our reply', () => {
  test('DELETE /api/v1/statuses/:id: gone at the instance and from the conversation; deleting it again succeeds', async () => {
    const { f, c, credentials, post, alice } = await published();
    const comment = f.reply(post.platformPostId, alice, 'When is the next release?');
    const ours = await c.publish({
      text: 'Friday!',
      media: [],
      idempotencyKey: 'reply-1',
      credentials,
      replyTo: { root: post, parent: ref(comment) },
    });
    expect(comment.replies_count).toBe(1);

    await c.deletePublished!(credentials, target(ours.platformPostId, post));
    expect(f.statuses.some((s) => s.id === ours.platformPostId)).toBe(false);
    expect(f.deleted.map((s) => s.id)).toEqual([ours.platformPostId]);
    expect(comment.replies_count).toBe(0);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([comment.id]);
    // Only a 404 is looked up: the first delete asked nothing else.
    const path = `/api/v1/statuses/${ours.platformPostId}`;
    expect(f.requests.filter((r) => r.path === path).map((r) => r.method)).toEqual(['DELETE']);

    // Gone: 404 to the delete, 404 to the look-up → success, nothing else removed.
    await c.deletePublished!(credentials, target(ours.platformPostId, post));
    expect(f.requests.filter((r) => r.path === path).map((r) => r.method)).toEqual(['DELETE', 'DELETE', 'GET']);
    expect(f.deleted).toHaveLength(1);
    expect(f.statuses.map((s) => s.id)).toEqual([post.platformPostId, comment.id]);
  });

  test('another account’s status: Mastodon answers 404, the look-up still shows it → permanent, and it stays', async () => {
    const { f, c, credentials, post, alice } = await published();
    const comment = f.reply(post.platformPostId, alice, 'Not yours to delete');
    const err = await failure(c.deletePublished!(credentials, target(comment.id, post)));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain("another account's");
    expect(f.statuses.some((s) => s.id === comment.id)).toBe(true);
    expect(f.deleted).toHaveLength(0);
  });

  test('the token is required: refused → reauth, nothing deleted', async () => {
    const { f, c, post } = await published();
    const err = await failure(c.deletePublished!({ instanceUrl: f.url, accessToken: 'revoked' }, target(post.platformPostId, post)));
    expect(err).toMatchObject({ kind: 'reauth', opts: { status: 401 } });
    const bare = await fetch(`${f.url}/api/v1/statuses/${post.platformPostId}`, { method: 'DELETE' });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ error: 'The access token is invalid' });
    expect(f.statuses.some((s) => s.id === post.platformPostId)).toBe(true);
  });

  test('the fake answers a delete as Mastodon does: the Status with its source text', async () => {
    const { f, post } = await published();
    const r = await fetch(`${f.url}/api/v1/statuses/${post.platformPostId}`, {
      method: 'DELETE',
      headers: { Authorization: 'Bearer good-token' },
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ id: post.platformPostId, text: 'What do you think?', content: '<p>What do you think?</p>' });
  });
});
