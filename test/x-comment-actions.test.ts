// Answering, hiding and deleting under a published X post, against the local fake of the X API v2
// (test/fakes/x.ts), which keeps X's rules: a reply to another account's post carries that
// account's handle before its text; only replies by others in a conversation the account started
// can be hidden (PUT /2/tweets/:id/hidden, scope tweet.moderate.write); only the account's own
// posts can be deleted (DELETE /2/tweets/:id).
import { describe, expect, test } from 'bun:test';
import { createXConnector } from '../platforms/x.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { type FakeTweet, type FakeX, startFakeX } from './fakes/x.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeX);

const credentials = { accessToken: 'good-token' };
const ann = { id: '4001', username: 'ann_x', name: 'Ann' };
const ben = { id: '4002', username: 'ben_x', name: 'Ben' };

async function published() {
  const f = await fake();
  const c = createXConnector({ baseUrl: f.url, timeoutMs: 1_000 });
  const post = await c.publish({ text: 'Ask me anything', media: [], idempotencyKey: 'post', credentials });
  return { f, c, post, root: f.tweets.find((t) => t.id === post.platformPostId)! };
}

const ref = (t: FakeTweet): PostRef => ({ platformPostId: t.id, url: `https://x.com/i/web/status/${t.id}` });
const target = (id: string, post: PostRef): CommentTarget => ({ platformCommentId: id, url: null, post });

function answer(post: PostRef, comment: FakeTweet, text: string, over: Partial<PublishRequest> = {}): PublishRequest {
  return { text, media: [], idempotencyKey: `reply-${comment.id}`, credentials, replyTo: { root: post, parent: ref(comment) }, ...over };
}

/** A conversation another account started, with a reply in it by a third. */
function othersConversation(f: FakeX): { start: FakeTweet; reply: FakeTweet } {
  const id = '1990000000000099999';
  const start: FakeTweet = {
    id,
    text: 'My own thread',
    mediaIds: [],
    userId: ann.id,
    createdAt: new Date().toISOString(),
    inReplyTo: null,
    conversationId: id,
    metrics: { retweet_count: 0, reply_count: 0, like_count: 0, quote_count: 0, bookmark_count: 0, impression_count: 0 },
  };
  f.tweets.push(start);
  return { start, reply: f.reply(start, ben, 'A reply in Ann’s thread') };
}

describe('X: answering a comment', () => {
  test('a reply to a comment deep in the conversation answers that comment, and reads back under it as ours', async () => {
    const { f, c, post, root } = await published();
    const first = f.reply(root, ann, 'Is it open source?', new Date(Date.now() - 3_000));
    const deep = f.reply(first, ben, 'Asking the same', new Date(Date.now() - 2_000));

    const ours = await c.publish(answer(post, deep, 'Yes, MIT licensed.'));

    const created = f.tweets.find((t) => t.id === ours.platformPostId)!;
    expect(created).toMatchObject({ inReplyTo: deep.id, conversationId: root.id, userId: f.user.id, text: 'Yes, MIT licensed.' });
    const read = await c.readComments!(credentials, post);
    const mine = read.comments.find((x) => x.platformCommentId === ours.platformPostId);
    expect(mine).toMatchObject({ parentPlatformId: deep.id, ours: true });
    expect(read.comments.filter((x) => x.ours)).toHaveLength(1);
    expect(read.comments.find((x) => x.platformCommentId === deep.id)).toMatchObject({ parentPlatformId: first.id, ours: false });
  });

  test('attempt 2 finds the reply an earlier attempt made (its answer lost), though X shows it with the handle before the text', async () => {
    const { f, c, post, root } = await published();
    const first = f.reply(root, ann, 'Great launch');
    const second = f.reply(root, ben, 'Congrats');
    // The same words to Ann earlier: a reply to another comment is not taken for this one.
    const toAnn = await c.publish(answer(post, first, 'Thank you!'));

    f.failNext(1, 'accept-then-hang');
    const req = answer(post, second, 'Thank you!');
    const lost = await failure(c.publish(req));
    expect(lost.kind).toBe('transient');
    const toBen = f.tweets.filter((t) => t.userId === f.user.id && t.inReplyTo === second.id);
    expect(toBen).toHaveLength(1);

    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found?.platformPostId).toBe(toBen[0]!.id);
    expect(found?.platformPostId).not.toBe(toAnn.platformPostId);
    // X shows the reply with Ben's handle before the text; the look-up read the timeline once.
    const read = await c.readComments!(credentials, post);
    expect(read.comments.find((x) => x.platformCommentId === found?.platformPostId)?.text).toBe('@ben_x Thank you!');
    expect(f.requests.filter((r) => /^\/2\/users\/\d+\/tweets$/.test(r.path))).toHaveLength(1);
    expect(f.count('tweets')).toBe(3);
    expect(f.tweets.filter((t) => t.userId === f.user.id && t.inReplyTo === second.id)).toHaveLength(1);
  });

  test('attempt 2 with nothing sent before finds nothing', async () => {
    const { f, c, post, root } = await published();
    const first = f.reply(root, ann, 'Great launch');
    expect(await c.findPublished!({ ...answer(post, first, 'Thank you!'), attempt: 2 })).toBeNull();
  });
});

describe('X: hiding a reply', () => {
  test('hide, hide again, show, show again: PUT /2/tweets/:id/hidden, the state at X each time', async () => {
    const { f, c, post, root } = await published();
    const rude = f.reply(root, ann, 'Rude words');
    const t = target(rude.id, post);

    await c.hideComment!(credentials, t, true);
    expect(rude.hidden).toBe(true);
    await c.hideComment!(credentials, t, true);
    expect(rude.hidden).toBe(true);
    await c.hideComment!(credentials, t, false);
    expect(rude.hidden).toBe(false);
    await c.hideComment!(credentials, t, false);
    expect(rude.hidden).toBe(false);

    const hides = f.requests.filter((r) => r.method === 'PUT');
    expect(hides.map((r) => r.path)).toEqual(Array(4).fill(`/2/tweets/${rude.id}/hidden`));
    expect(hides.every((r) => r.authorization === 'Bearer good-token')).toBe(true);
    expect(f.count('hide')).toBe(4);
  });

  test('a reply deeper in the conversation can be hidden too', async () => {
    const { f, c, post, root } = await published();
    const first = f.reply(root, ann, 'Hello');
    const deep = f.reply(first, ben, 'Spam spam');
    await c.hideComment!(credentials, target(deep.id, post), true);
    expect(deep.hidden).toBe(true);
    expect(first.hidden).toBeUndefined();
  });

  test('what X refuses is permanent and changes nothing; a rejected token is reauth', async () => {
    const { f, c, post, root } = await published();
    const comment = f.reply(root, ann, 'A fair question');
    const ours = await c.publish(answer(post, comment, 'A fair answer'));
    const elsewhere = othersConversation(f);

    const notOurs = await failure(c.hideComment!(credentials, target(elsewhere.reply.id, post), true));
    expect(notOurs).toMatchObject({ kind: 'permanent', opts: { status: 403 } });
    expect(notOurs.message).toContain('conversation the account started');
    const ownReply = await failure(c.hideComment!(credentials, target(ours.platformPostId, post), true));
    expect(ownReply).toMatchObject({ kind: 'permanent', opts: { status: 403 } });
    const ownPost = await failure(c.hideComment!(credentials, target(root.id, post), true));
    expect(ownPost).toMatchObject({ kind: 'permanent', opts: { status: 403 } });
    const missing = await failure(c.hideComment!(credentials, target('1990000000000088888', post), true));
    expect(missing).toMatchObject({ kind: 'permanent', opts: { status: 404 } });
    expect(missing.message).toContain('Could not find tweet with id: [1990000000000088888]');

    f.validTokens.add('no-moderate');
    f.scopes.set('no-moderate', new Set(['tweet.read', 'tweet.write', 'users.read']));
    const scope = await failure(c.hideComment!({ accessToken: 'no-moderate' }, target(comment.id, post), true));
    expect(scope).toMatchObject({ kind: 'permanent', opts: { status: 403 } });
    expect(scope.message).toContain('tweet.moderate.write');

    const dead = await failure(c.hideComment!({ accessToken: 'revoked' }, target(comment.id, post), true));
    expect(dead).toMatchObject({ kind: 'reauth', opts: { status: 401 } });

    const badId = await failure(c.hideComment!(credentials, target('../../2/users/me', post), true));
    expect(badId.kind).toBe('permanent');

    for (const t of [elsewhere.reply, comment, root, f.tweets.find((x) => x.id === ours.platformPostId)!]) expect(t.hidden).toBeUndefined();
    // Six reached X; the malformed id did not.
    expect(f.count('hide')).toBe(6);
  });

  test('an answer that says the reply stays as it was is permanent; one without data.hidden is transient', async () => {
    const { f, c, post, root } = await published();
    const comment = f.reply(root, ann, 'Hmm');
    f.failNext(1, { status: 200, body: { data: { hidden: false } } }, 'hide');
    expect((await failure(c.hideComment!(credentials, target(comment.id, post), true))).kind).toBe('permanent');
    f.failNext(1, { status: 200, body: {} }, 'hide');
    expect((await failure(c.hideComment!(credentials, target(comment.id, post), true))).kind).toBe('transient');
    f.failNext(1, { status: 503, body: { title: 'Service Unavailable', status: 503 } }, 'hide');
    expect((await failure(c.hideComment!(credentials, target(comment.id, post), true))).kind).toBe('transient');
  });
});

describe('X: deleting our reply', () => {
  test('DELETE /2/tweets/:id: the reply is gone at X and from the conversation; deleting it again succeeds', async () => {
    const { f, c, post, root } = await published();
    const comment = f.reply(root, ann, 'Any plans for Linux?');
    const ours = await c.publish(answer(post, comment, 'Next month!'));
    expect(comment.metrics.reply_count).toBe(1);

    await c.deletePublished!(credentials, target(ours.platformPostId, post));
    expect(f.tweets.some((t) => t.id === ours.platformPostId)).toBe(false);
    expect(comment.metrics.reply_count).toBe(0);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([comment.id]);

    // X no longer has it: 404, success.
    await c.deletePublished!(credentials, target(ours.platformPostId, post));
    const deletes = f.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => r.path)).toEqual(Array(2).fill(`/2/tweets/${ours.platformPostId}`));
    expect(f.count('delete')).toBe(2);
  });

  test('an answer of deleted: false (nothing left to delete) is success', async () => {
    const { f, c, post, root } = await published();
    f.failNext(1, { status: 200, body: { data: { deleted: false } } }, 'delete');
    await c.deletePublished!(credentials, target(root.id, post));
    expect(f.count('delete')).toBe(1);
  });

  test('another account’s reply is refused (permanent) and stays; a rejected token is reauth; 429 is transient', async () => {
    const { f, c, post, root } = await published();
    const comment = f.reply(root, ann, 'Mine, not yours');
    const refused = await failure(c.deletePublished!(credentials, target(comment.id, post)));
    expect(refused).toMatchObject({ kind: 'permanent', opts: { status: 403 } });
    expect(f.tweets.some((t) => t.id === comment.id)).toBe(true);

    const dead = await failure(c.deletePublished!({ accessToken: 'revoked' }, target(root.id, post)));
    expect(dead.kind).toBe('reauth');
    f.failNext(1, { status: 429, body: { title: 'Too Many Requests', status: 429 }, headers: { 'retry-after': '7' } }, 'delete');
    const limited = await failure(c.deletePublished!(credentials, target(root.id, post)));
    expect(limited).toMatchObject({ kind: 'transient', opts: { retryAfterMs: 7_000 } });
    expect(f.tweets.some((t) => t.id === root.id)).toBe(true);
  });
});
