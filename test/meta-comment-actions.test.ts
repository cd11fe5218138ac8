// Answering, hiding and deleting under published Facebook Page posts, Instagram media and threads,
// against the local Graph fake, which keeps what each request did (comments, their hidden state,
// what was deleted) and refuses what Graph refuses: Facebook replies to a comment with POST
// /{comment-id}/comments, hides with POST /{comment-id} is_hidden, deletes with DELETE
// /{comment-id}; Instagram replies with POST /{ig-comment-id}/replies, hides with POST
// /{ig-comment-id} hide, deletes with DELETE /{ig-comment-id}; Threads replies with a container
// carrying reply_to_id, hides with POST /{reply-id}/manage_reply, deletes with DELETE /{media-id}.
import { describe, expect, test } from 'bun:test';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import { createThreadsConnector } from '../platforms/meta/threads.ts';
import type { CommentTarget, Connector, PostRef, PublishRequest } from '../platforms/types.ts';
import { type FakeMeta, type MetaFlavor, startFakeMeta } from './fakes/meta.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeMeta);

const TOKENS = { facebook: 'EAAG-page-token', instagram: 'IGAA-user-token', threads: 'THAA-user-token' } as const;
const ANN = { id: '5550000000000007', name: 'ann.example' };

async function setUp(flavor: MetaFlavor, o: { timeoutMs?: number } = {}) {
  const f = await fake(flavor);
  const common = { baseUrl: f.url, timeoutMs: o.timeoutMs ?? 2_000 };
  const c: Connector =
    flavor === 'facebook'
      ? createFacebookConnector(common)
      : flavor === 'instagram'
        ? createInstagramConnector(common)
        : createThreadsConnector({ ...common, pollIntervalMs: 5 });
  const key = flavor === 'facebook' ? 'pageId' : flavor === 'instagram' ? 'igUserId' : 'threadsUserId';
  const credentials: Record<string, unknown> = { accessToken: TOKENS[flavor], [key]: f.accountId };
  // Instagram publishes media only: its post is one made before the test.
  const post: PostRef =
    flavor === 'instagram'
      ? (({ id, permalink }) => ({ platformPostId: id, url: permalink }))(f.seedPost({ text: 'A photo', ageMs: 60_000 }))
      : (({ platformPostId, url }) => ({ platformPostId, url }))(
          await c.publish({ text: 'What do you think?', media: [], idempotencyKey: 'p1', credentials }),
        );
  return { f, c, credentials, post };
}

/** The reply answering `parent` under `root`, as the inbox sends it. */
function answer(credentials: Record<string, unknown>, root: PostRef, parent: PostRef, over: Partial<PublishRequest> = {}): PublishRequest {
  return { text: 'Thanks, glad you like it!', media: [], idempotencyKey: 'reply-1', credentials, replyTo: { root, parent }, ...over };
}

const target = (id: string, post: PostRef): CommentTarget => ({ platformCommentId: id, url: null, post });
const ref = (id: string): PostRef => ({ platformPostId: id, url: '' });
const routes = (f: FakeMeta, from = 0) => f.requests.slice(from).map((r) => `${r.method} ${r.path.replace(/^\/v\d+\.\d+/, '')}`);

/** A Graph request straight to the fake, as Meta's documentation writes it. */
async function raw(f: FakeMeta, method: string, path: string, params: Record<string, string> = {}) {
  const version = f.flavor === 'threads' ? 'v1.0' : 'v26.0';
  const query = new URLSearchParams({ ...params, access_token: TOKENS[f.flavor] });
  const res =
    method === 'POST'
      ? await fetch(`${f.url}/${version}${path}`, { method, body: query })
      : await fetch(`${f.url}/${version}${path}?${query}`, { method });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: number; error_subcode?: number; message: string } } & Record<string, unknown>,
  };
}

describe('Facebook: answering, hiding, deleting', () => {
  test('a reply to a comment is POST /{comment-id}/comments and lands under that comment, ours', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const asked = f.seedComment({ postId: post.platformPostId, text: 'Where is this?', from: ANN, ageMs: 5_000 });
    const before = f.requests.length;
    const result = await c.publish(answer(credentials, post, ref(asked.id), { text: 'In Lisbon!' }));

    expect(routes(f, before)).toEqual([`POST /${asked.id}/comments`, `GET /${result.platformPostId}`]);
    expect(f.requests[before]!.params).toEqual({ message: 'In Lisbon!', access_token: TOKENS.facebook });
    const mine = f.comments.find((x) => x.id === result.platformPostId)!;
    expect(mine).toMatchObject({ postId: post.platformPostId, parentId: asked.id, text: 'In Lisbon!', from: { id: f.accountId } });
    expect(result.url).toBe(mine.permalink);

    const read = await c.readComments!(credentials, post);
    expect(read.comments.find((x) => x.platformCommentId === result.platformPostId)).toMatchObject({
      parentPlatformId: asked.id,
      text: 'In Lisbon!',
      ours: true,
    });
  });

  test('findPublished on a second attempt finds the reply an earlier attempt made under the comment; exactly one exists', async () => {
    const { f, c, credentials, post } = await setUp('facebook', { timeoutMs: 300 });
    const asked = f.seedComment({ postId: post.platformPostId, text: 'Love it', from: ANN, ageMs: 5_000 });
    const other = f.seedComment({ postId: post.platformPostId, text: 'Me too', by: 'other', ageMs: 4_000 });
    // The same words by someone else under the comment, and by the Page under another comment, are not it.
    f.seedComment({ postId: post.platformPostId, text: 'Thank you!', by: 'other', ageMs: 3_000, parentId: asked.id });
    f.seedComment({ postId: post.platformPostId, text: 'Thank you!', by: 'account', ageMs: 3_000, parentId: other.id });
    const req = answer(credentials, post, ref(asked.id), { text: 'Thank you!' });
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();

    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const before = f.requests.length;
    const found = await c.findPublished!({ ...req, attempt: 2, firstAttemptAt: new Date(Date.now() - 1_000) });

    const ours = f.comments.filter((x) => x.parentId === asked.id && x.from.id === f.accountId);
    expect(ours).toHaveLength(1);
    expect(found).toMatchObject({ platformPostId: ours[0]!.id, url: ours[0]!.permalink });
    expect(routes(f, before)).toEqual([`GET /${asked.id}/comments`]);
    expect(f.requests.at(-1)!.params).toMatchObject({ filter: 'toplevel', order: 'reverse_chronological' });
  });

  test('an identical reply older than the first attempt is an earlier answer, not this one', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const asked = f.seedComment({ postId: post.platformPostId, text: 'Love it', from: ANN, ageMs: 600_000 });
    const old = f.seedComment({ postId: post.platformPostId, text: 'Thank you!', by: 'account', ageMs: 300_000, parentId: asked.id });
    const req = answer(credentials, post, ref(asked.id), { text: 'Thank you!', attempt: 2 });
    expect(await c.findPublished!({ ...req, firstAttemptAt: new Date(Date.now() - 5_000) })).toBeNull();
    // Without the first attempt's time nothing tells them apart.
    expect(await c.findPublished!(req)).toMatchObject({ platformPostId: old.id });
  });

  test('hide, hide again, show, show again: is_hidden at the fake, the comment still listed for the Page', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const rude = f.seedComment({ postId: post.platformPostId, text: 'Spam spam', from: ANN });
    const t = target(rude.id, post);
    const before = f.requests.length;

    await c.hideComment!(credentials, t, true);
    expect(rude.hidden).toBe(true);
    await c.hideComment!(credentials, t, true);
    expect(rude.hidden).toBe(true);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([rude.id]);
    const listed = await raw(f, 'GET', `/${post.platformPostId}/comments`, { fields: 'id,is_hidden' });
    expect(listed.body.data).toEqual([{ id: rude.id, is_hidden: true }]);

    await c.hideComment!(credentials, t, false);
    expect(rude.hidden).toBe(false);
    await c.hideComment!(credentials, t, false);
    expect(rude.hidden).toBe(false);

    const sent = f.requests.slice(before).filter((r) => r.method === 'POST');
    expect(sent.map((r) => [r.path, r.params.is_hidden])).toEqual([
      [`/v26.0/${rude.id}`, 'true'],
      [`/v26.0/${rude.id}`, 'true'],
      [`/v26.0/${rude.id}`, 'false'],
      [`/v26.0/${rude.id}`, 'false'],
    ]);
    expect(sent[0]!.params).toEqual({ is_hidden: 'true', access_token: TOKENS.facebook });
  });

  test('delete our reply: read its author, DELETE /{comment-id}; gone at the fake; deleting again succeeds', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const asked = f.seedComment({ postId: post.platformPostId, text: 'Love it', from: ANN });
    const reply = await c.publish(answer(credentials, post, ref(asked.id)));
    const count = f.posts[0]!.stats.comments;
    const before = f.requests.length;

    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    expect(routes(f, before)).toEqual([`GET /${reply.platformPostId}`, `DELETE /${reply.platformPostId}`]);
    expect(f.requests[before]!.params.fields).toBe('from');
    expect(f.comments.map((x) => x.id)).toEqual([asked.id]);
    expect(f.posts[0]!.stats.comments).toBe(count - 1);

    const again = f.requests.length;
    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    // Graph no longer has it: nothing is deleted a second time.
    expect(routes(f, again)).toEqual([`GET /${reply.platformPostId}`]);
  });

  test('refused: the Page’s own comment, a comment under another Page’s post, a missing one, someone else’s delete; 190 → reauth', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const own = f.seedComment({ postId: post.platformPostId, text: 'Pinned info', by: 'account' });
    const theirs = f.seedComment({ postId: post.platformPostId, text: 'Nice', from: ANN });
    const elsewhere = f.seedPost({ text: 'Another Page’s post', ageMs: 60_000, by: 'other' });
    const there = f.seedComment({ postId: elsewhere.id, text: 'Hi', from: ANN });

    const ownHide = await failure(c.hideComment!(credentials, target(own.id, post), true));
    expect(ownHide).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100' } });
    expect(own.hidden).toBeUndefined();

    const notOwner = await failure(c.hideComment!(credentials, target(there.id, ref(elsewhere.id)), true));
    expect(notOwner).toMatchObject({ kind: 'permanent', opts: { platformCode: '100/33' } });
    expect(there.hidden).toBeUndefined();

    const missing = await failure(c.hideComment!(credentials, target(`${post.platformPostId.split('_')[1]}_404`, post), true));
    expect(missing).toMatchObject({ kind: 'permanent', opts: { platformCode: '100/33' } });
    expect(missing.message).toContain('Unsupported post request. Object with ID');

    // Graph would delete a visitor's comment under the Page's post: the connector does not.
    const before = f.requests.length;
    const stranger = await failure(c.deletePublished!(credentials, target(theirs.id, post)));
    expect(stranger.kind).toBe('permanent');
    expect(stranger.message).toContain(ANN.id);
    expect(routes(f, before)).toEqual([`GET /${theirs.id}`]);
    expect(f.comments.some((x) => x.id === theirs.id)).toBe(true);

    const bad = { ...credentials, accessToken: 'not-a-token' };
    expect(await failure(c.hideComment!(bad, target(theirs.id, post), true))).toMatchObject({
      kind: 'reauth',
      opts: { platformCode: '190' },
    });
    expect(await failure(c.deletePublished!(bad, target(own.id, post)))).toMatchObject({ kind: 'reauth', opts: { platformCode: '190' } });
    f.expireToken(TOKENS.facebook);
    expect(await failure(c.hideComment!(credentials, target(theirs.id, post), true))).toMatchObject({
      kind: 'reauth',
      opts: { platformCode: '190/463' },
    });
    expect(theirs.hidden).toBeUndefined();
    expect(f.comments.some((x) => x.id === own.id)).toBe(true);
  });

  test('a delete Graph refuses (100/33) while the comment is still there is permanent; a 5xx is transient', async () => {
    const { f, c, credentials, post } = await setUp('facebook');
    const mine = f.seedComment({ postId: post.platformPostId, text: 'Our reply', by: 'account' });
    f.failNext(
      1,
      {
        status: 400,
        body: { error: { message: 'Unsupported delete request.', type: 'GraphMethodException', code: 100, error_subcode: 33 } },
      },
      'delete',
    );
    const refused = await failure(c.deletePublished!(credentials, target(mine.id, post)));
    expect(refused.kind).toBe('permanent');
    expect(refused.message).toContain('still there');
    f.failNext(1, { status: 500, body: { error: { message: 'An unknown error occurred', code: 1, is_transient: true } } }, 'delete');
    expect((await failure(c.deletePublished!(credentials, target(mine.id, post)))).kind).toBe('transient');
    expect(f.comments.some((x) => x.id === mine.id)).toBe(true);
    await c.deletePublished!(credentials, target(mine.id, post));
    expect(f.comments.some((x) => x.id === mine.id)).toBe(false);
  });
});

describe('Instagram: answering, hiding, deleting', () => {
  test('a reply to a comment is POST /{ig-comment-id}/replies and lands under that comment, ours', async () => {
    const { f, c, credentials, post } = await setUp('instagram');
    const asked = f.seedComment({ postId: post.platformPostId, text: 'So good', from: ANN, ageMs: 5_000 });
    const before = f.requests.length;
    const result = await c.publish(answer(credentials, post, ref(asked.id), { text: '@ann.example thank you' }));

    expect(routes(f, before)).toEqual([`POST /${asked.id}/replies`]);
    expect(f.requests[before]!.params).toEqual({ message: '@ann.example thank you', access_token: TOKENS.instagram });
    expect(f.comments.find((x) => x.id === result.platformPostId)).toMatchObject({ parentId: asked.id, from: { id: f.accountId } });
    expect(result.url).toBe(`${post.url}c/${result.platformPostId}/`);

    const read = await c.readComments!(credentials, post);
    expect(read.comments.find((x) => x.platformCommentId === result.platformPostId)).toMatchObject({
      parentPlatformId: asked.id,
      ours: true,
    });
    // A first comment stays POST /{ig-media-id}/comments.
    const first = f.requests.length;
    await c.publish(answer(credentials, post, post, { text: 'More in the bio' }));
    expect(routes(f, first)).toEqual([`POST /${post.platformPostId}/comments`]);
  });

  test('findPublished on a second attempt: the owner read from the post, the reply found among the comment’s replies; exactly one exists', async () => {
    const { f, c, credentials, post } = await setUp('instagram', { timeoutMs: 300 });
    const asked = f.seedComment({ postId: post.platformPostId, text: 'So good', from: ANN, ageMs: 5_000 });
    f.seedComment({ postId: post.platformPostId, text: 'Thank you!', by: 'other', ageMs: 4_000, parentId: asked.id });
    const req = answer(credentials, post, ref(asked.id), { text: 'Thank you!' });
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();

    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const before = f.requests.length;
    const found = await c.findPublished!({ ...req, attempt: 2 });

    const ours = f.comments.filter((x) => x.parentId === asked.id && x.from.id === f.accountId);
    expect(ours).toHaveLength(1);
    expect(found).toMatchObject({ platformPostId: ours[0]!.id, url: `${post.url}c/${ours[0]!.id}/` });
    expect(routes(f, before)).toEqual([`GET /${post.platformPostId}`, `GET /${asked.id}`, `GET /${asked.id}/replies`]);
    expect(f.requests.slice(before).map((r) => r.params.fields)).toEqual(['username', 'parent_id', 'id,text,timestamp,username']);
  });

  test('a reply to a reply goes under the top-level comment (one level), and is found there on a second attempt', async () => {
    const { f, c, credentials, post } = await setUp('instagram', { timeoutMs: 300 });
    const top = f.seedComment({ postId: post.platformPostId, text: 'Which lens?', from: ANN, ageMs: 9_000 });
    const deeper = f.seedComment({ postId: post.platformPostId, text: 'Same question', by: 'other', ageMs: 8_000, parentId: top.id });
    const req = answer(credentials, post, ref(deeper.id), { text: 'A 35 mm' });

    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    expect(f.requests.at(-1)).toMatchObject({ method: 'POST', path: `/v26.0/${deeper.id}/replies` });
    const mine = f.comments.at(-1)!;
    expect(mine).toMatchObject({ text: 'A 35 mm', parentId: top.id });

    const before = f.requests.length;
    expect(await c.findPublished!({ ...req, attempt: 2 })).toMatchObject({ platformPostId: mine.id });
    expect(routes(f, before)).toEqual([`GET /${post.platformPostId}`, `GET /${deeper.id}`, `GET /${top.id}/replies`]);
    expect(f.comments.filter((x) => x.from.id === f.accountId)).toHaveLength(1);
  });

  test('hide, hide again, show, show again: `hidden` at the fake, the comment still listed for the owner', async () => {
    const { f, c, credentials, post } = await setUp('instagram');
    const rude = f.seedComment({ postId: post.platformPostId, text: 'Spam spam', from: ANN });
    const t = target(rude.id, post);
    const before = f.requests.length;

    await c.hideComment!(credentials, t, true);
    await c.hideComment!(credentials, t, true);
    expect(rude.hidden).toBe(true);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([rude.id]);
    expect((await raw(f, 'GET', `/${rude.id}`, { fields: 'hidden' })).body).toEqual({ id: rude.id, hidden: true });
    await c.hideComment!(credentials, t, false);
    await c.hideComment!(credentials, t, false);
    expect(rude.hidden).toBe(false);

    const sent = f.requests.slice(before).filter((r) => r.method === 'POST');
    expect(sent.map((r) => [r.path, r.params])).toEqual([
      [`/v26.0/${rude.id}`, { hide: 'true', access_token: TOKENS.instagram }],
      [`/v26.0/${rude.id}`, { hide: 'true', access_token: TOKENS.instagram }],
      [`/v26.0/${rude.id}`, { hide: 'false', access_token: TOKENS.instagram }],
      [`/v26.0/${rude.id}`, { hide: 'false', access_token: TOKENS.instagram }],
    ]);
  });

  test('delete our reply: read its author, DELETE /{ig-comment-id}; gone at the fake; deleting again succeeds', async () => {
    const { f, c, credentials, post } = await setUp('instagram');
    const asked = f.seedComment({ postId: post.platformPostId, text: 'So good', from: ANN });
    const reply = await c.publish(answer(credentials, post, ref(asked.id)));
    const before = f.requests.length;

    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    expect(routes(f, before)).toEqual([`GET /${reply.platformPostId}`, `DELETE /${reply.platformPostId}`]);
    expect(f.comments.map((x) => x.id)).toEqual([asked.id]);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([asked.id]);

    const again = f.requests.length;
    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    expect(routes(f, again)).toEqual([`GET /${reply.platformPostId}`]);
  });

  test('refused: a reply to a hidden comment, hiding the owner’s own, another account’s media, someone else’s delete; 190 → reauth', async () => {
    const { f, c, credentials, post } = await setUp('instagram');
    const rude = f.seedComment({ postId: post.platformPostId, text: 'Spam', from: ANN });
    const own = f.seedComment({ postId: post.platformPostId, text: 'Link in bio', by: 'account' });
    await c.hideComment!(credentials, target(rude.id, post), true);

    const count = f.comments.length;
    const toHidden = await failure(c.publish(answer(credentials, post, ref(rude.id))));
    expect(toHidden).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100' } });
    expect(f.comments).toHaveLength(count);

    expect(await failure(c.hideComment!(credentials, target(own.id, post), true))).toMatchObject({
      kind: 'permanent',
      opts: { platformCode: '100' },
    });
    expect(own.hidden).toBeUndefined();

    const elsewhere = f.seedPost({ text: 'Not ours', ageMs: 60_000, by: 'other' });
    const there = f.seedComment({ postId: elsewhere.id, text: 'Hi', from: ANN });
    expect(await failure(c.hideComment!(credentials, target(there.id, ref(elsewhere.id)), true))).toMatchObject({
      kind: 'permanent',
      opts: { platformCode: '100/33' },
    });
    expect(there.hidden).toBeUndefined();

    const before = f.requests.length;
    const stranger = await failure(c.deletePublished!(credentials, target(rude.id, post)));
    expect(stranger.kind).toBe('permanent');
    expect(stranger.message).toContain(ANN.name);
    expect(routes(f, before)).toEqual([`GET /${rude.id}`]);
    expect(f.comments.some((x) => x.id === rude.id)).toBe(true);

    const bad = { ...credentials, accessToken: 'not-a-token' };
    expect(await failure(c.hideComment!(bad, target(rude.id, post), false))).toMatchObject({ kind: 'reauth' });
    expect(await failure(c.deletePublished!(bad, target(own.id, post)))).toMatchObject({ kind: 'reauth' });
    expect(rude.hidden).toBe(true);
  });
});

describe('Threads: answering, hiding, deleting', () => {
  test('a reply to someone’s reply is a container with reply_to_id = that reply; it lands under it, ours', async () => {
    const { f, c, credentials, post } = await setUp('threads');
    const theirs = f.seedReply({ parentId: post.platformPostId, text: 'Nice one', username: 'dana' });
    const result = await c.publish(answer(credentials, post, ref(theirs.id), { text: 'Thanks Dana' }));

    expect(f.containers.at(-1)!.params).toEqual({ media_type: 'TEXT', text: 'Thanks Dana', reply_to_id: theirs.id });
    const read = await c.readComments!(credentials, post);
    expect(read.comments.find((x) => x.platformCommentId === result.platformPostId)).toMatchObject({
      parentPlatformId: theirs.id,
      ours: true,
    });
  });

  test('findPublished on a second attempt finds the reply among the user’s own replies; exactly one exists', async () => {
    const { f, c, credentials, post } = await setUp('threads', { timeoutMs: 300 });
    const theirs = f.seedReply({ parentId: post.platformPostId, text: 'Nice one', username: 'dana', ageMs: 5_000 });
    // The same words by someone else to the same reply are not ours: /{user}/replies lists only the user's.
    f.seedReply({ parentId: theirs.id, text: 'Thanks!', username: 'eli', ageMs: 4_000 });
    const req = answer(credentials, post, ref(theirs.id), { text: 'Thanks!' });
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();

    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const found = await c.findPublished!({ ...req, attempt: 2, firstAttemptAt: new Date(Date.now() - 1_000) });
    const ours = f.posts.filter((p) => p.replyTo === theirs.id && !p.author);
    expect(ours).toHaveLength(1);
    expect(found).toMatchObject({ platformPostId: ours[0]!.id, url: ours[0]!.permalink });
    // The same reply made long before the first attempt is an earlier answer.
    ours[0]!.created = new Date(Date.now() - 600_000);
    expect(await c.findPublished!({ ...req, attempt: 2, firstAttemptAt: new Date(Date.now() - 1_000) })).toBeNull();
  });

  test('hide, hide again, show, show again: POST /{reply-id}/manage_reply; hide_status at the fake, with the replies under it', async () => {
    const { f, c, credentials, post } = await setUp('threads');
    const rude = f.seedReply({ parentId: post.platformPostId, text: 'Spam', username: 'spammer', ageMs: 2_000 });
    const under = f.seedReply({ parentId: rude.id, text: 'More spam', username: 'spammer2', ageMs: 1_000 });
    const t = target(rude.id, post);
    const before = f.requests.length;
    const status = async () => {
      const r = await raw(f, 'GET', `/${post.platformPostId}/conversation`, { fields: 'id,hide_status', reverse: 'false' });
      return r.body.data;
    };

    await c.hideComment!(credentials, t, true);
    await c.hideComment!(credentials, t, true);
    expect(rude.hideStatus).toBe('HIDDEN');
    expect(await status()).toEqual([
      { id: rude.id, hide_status: 'HIDDEN' },
      { id: under.id, hide_status: 'HIDDEN' },
    ]);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([rude.id, under.id]);
    await c.hideComment!(credentials, t, false);
    await c.hideComment!(credentials, t, false);
    expect(rude.hideStatus).toBe('UNHUSHED');

    const sent = f.requests.slice(before).filter((r) => r.method === 'POST');
    expect(sent.map((r) => [r.path, r.params])).toEqual([
      [`/v1.0/${rude.id}/manage_reply`, { hide: 'true', access_token: TOKENS.threads }],
      [`/v1.0/${rude.id}/manage_reply`, { hide: 'true', access_token: TOKENS.threads }],
      [`/v1.0/${rude.id}/manage_reply`, { hide: 'false', access_token: TOKENS.threads }],
      [`/v1.0/${rude.id}/manage_reply`, { hide: 'false', access_token: TOKENS.threads }],
    ]);
  });

  test('delete our reply: DELETE /{threads-media-id}; gone at the fake; deleting again succeeds (100/33, and a read confirms)', async () => {
    const { f, c, credentials, post } = await setUp('threads');
    const theirs = f.seedReply({ parentId: post.platformPostId, text: 'Nice one', username: 'dana' });
    const reply = await c.publish(answer(credentials, post, ref(theirs.id)));
    const before = f.requests.length;

    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    expect(routes(f, before)).toEqual([`DELETE /${reply.platformPostId}`]);
    expect(f.posts.some((p) => p.id === reply.platformPostId)).toBe(false);
    expect(theirs.stats.comments).toBe(0);

    const again = f.requests.length;
    await c.deletePublished!(credentials, target(reply.platformPostId, post));
    expect(routes(f, again)).toEqual([`DELETE /${reply.platformPostId}`, `GET /${reply.platformPostId}`]);
  });

  test('refused: a nested reply, a reply under someone else’s thread, someone else’s delete; 190 → reauth', async () => {
    const { f, c, credentials, post } = await setUp('threads');
    const top = f.seedReply({ parentId: post.platformPostId, text: 'First', username: 'dana' });
    const nested = f.seedReply({ parentId: top.id, text: 'Second', username: 'eli' });

    const deep = await failure(c.hideComment!(credentials, target(nested.id, post), true));
    expect(deep).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100' } });
    expect(nested.hideStatus).toBeUndefined();

    const foreign = f.seedPost({ text: 'Someone else’s thread', ageMs: 60_000, by: 'other' });
    const there = f.seedReply({ parentId: foreign.id, text: 'Hello', username: 'dana' });
    expect(await failure(c.hideComment!(credentials, target(there.id, ref(foreign.id)), true))).toMatchObject({
      kind: 'permanent',
      opts: { platformCode: '100/33' },
    });
    expect(there.hideStatus).toBeUndefined();

    // Threads deletes only the account's own: its answer for another's reply is 100/33, and the reply is still there.
    const before = f.requests.length;
    const stranger = await failure(c.deletePublished!(credentials, target(top.id, post)));
    expect(stranger).toMatchObject({ kind: 'permanent', opts: { platformCode: '100/33' } });
    expect(routes(f, before)).toEqual([`DELETE /${top.id}`, `GET /${top.id}`]);
    expect(f.posts.some((p) => p.id === top.id)).toBe(true);

    const bad = { ...credentials, accessToken: 'not-a-token' };
    expect(await failure(c.hideComment!(bad, target(top.id, post), true))).toMatchObject({ kind: 'reauth', opts: { platformCode: '190' } });
    expect(await failure(c.deletePublished!(bad, target(top.id, post)))).toMatchObject({ kind: 'reauth', opts: { platformCode: '190' } });
    expect(top.hideStatus).toBeUndefined();
  });
});

describe('fake Graph contract: moderation and deletes', () => {
  test('unknown parameters and values are refused (100); a missing object is 100/33 with Graph’s message', async () => {
    const fb = await setUp('facebook');
    const c1 = fb.f.seedComment({ postId: fb.post.platformPostId, text: 'Hi', from: ANN });
    expect((await raw(fb.f, 'POST', `/${c1.id}`, { hide: 'true' })).body.error).toMatchObject({ code: 100 });
    expect((await raw(fb.f, 'POST', `/${c1.id}`, { is_hidden: 'yes' })).body.error).toMatchObject({ code: 100 });
    expect((await raw(fb.f, 'DELETE', `/${c1.id}`, { force: 'true' })).body.error).toMatchObject({ code: 100 });
    expect((await raw(fb.f, 'GET', `/${c1.id}`, { fields: 'hidden' })).body.error).toMatchObject({ code: 100 });
    const gone = await raw(fb.f, 'DELETE', '/123_404');
    expect(gone.status).toBe(400);
    expect(gone.body.error).toMatchObject({ code: 100, error_subcode: 33, type: 'GraphMethodException' });
    expect(gone.body.error!.message).toStartWith("Unsupported delete request. Object with ID '123_404' does not exist");
    expect(c1.hidden).toBeUndefined();

    const ig = await setUp('instagram');
    const c2 = ig.f.seedComment({ postId: ig.post.platformPostId, text: 'Hi', from: ANN });
    expect((await raw(ig.f, 'POST', `/${c2.id}`, { is_hidden: 'true' })).body.error).toMatchObject({ code: 100 });
    expect((await raw(ig.f, 'POST', `/${c2.id}`, {})).body.error).toMatchObject({ code: 100 });
    expect((await raw(ig.f, 'POST', `/${c2.id}/comments`, { message: 'x' })).body.error).toMatchObject({ code: 100, error_subcode: 33 });
    expect((await raw(ig.f, 'GET', `/${c2.id}/replies`, { fields: 'id,message' })).body.error).toMatchObject({ code: 100 });
    expect(c2.hidden).toBeUndefined();

    const th = await setUp('threads');
    const r = th.f.seedReply({ parentId: th.post.platformPostId, text: 'Hi', username: 'dana' });
    expect((await raw(th.f, 'POST', `/${r.id}/manage_reply`, {})).body.error).toMatchObject({ code: 100 });
    expect((await raw(th.f, 'POST', `/${r.id}/manage_reply`, { hide: 'true', hidden: 'true' })).body.error).toMatchObject({ code: 100 });
    expect((await raw(th.f, 'POST', `/${th.post.platformPostId}/manage_reply`, { hide: 'true' })).body.error).toMatchObject({
      code: 100,
      error_subcode: 33,
    });
    expect(r.hideStatus).toBeUndefined();
  });

  test('Facebook and Instagram: the post’s owner deletes any comment under it; a comment under another’s post only its author', async () => {
    for (const flavor of ['facebook', 'instagram'] as const) {
      const { f, post } = await setUp(flavor);
      const visitor = f.seedComment({ postId: post.platformPostId, text: 'Spam', from: ANN });
      f.seedComment({ postId: post.platformPostId, text: 'Reply', by: 'other', parentId: visitor.id });
      const elsewhere = f.seedPost({ text: 'Not ours', ageMs: 1_000, by: 'other' });
      const there = f.seedComment({ postId: elsewhere.id, text: 'Hi', from: ANN });
      const ours = f.seedComment({ postId: elsewhere.id, text: 'Our note', by: 'account' });

      expect((await raw(f, 'DELETE', `/${there.id}`)).body.error).toMatchObject({ code: 100, error_subcode: 33 });
      expect((await raw(f, 'DELETE', `/${ours.id}`)).body).toEqual({ success: true });
      expect((await raw(f, 'DELETE', `/${visitor.id}`)).body).toEqual({ success: true });
      // A comment's replies go with it.
      expect(f.comments.map((x) => x.id)).toEqual([there.id]);
    }
  });
});
