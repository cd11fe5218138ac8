// What people answered under a published YouTube video, and what the channel does about it, on
// the local fake: commentThreads.list with the replies part (comments.list for a thread holding
// more replies than it carries), a reply as comments.insert in the thread of the comment answered,
// comments.setModerationStatus to hold a comment for review and publish it again, comments.delete
// for a reply of ours. The fake answers as YouTube does (HTML text unless plainText is asked for,
// at most five replies inline, Google's error bodies) and refuses what YouTube refuses.
import { describe, expect, test } from 'bun:test';
import { createYouTubeConnector } from '../platforms/youtube.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { FAKE_CLIENT, type FakeComment, type FakeYouTube, startFakeYouTube } from './fakes/youtube.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeYouTube);

const credentials = { accessToken: 'good-token', refreshToken: 'good-refresh' };

function connector(f: FakeYouTube, timeoutMs = 2_000) {
  return createYouTubeConnector({ baseUrl: f.url, uploadBaseUrl: f.url, authBaseUrl: f.url, oauth: FAKE_CLIENT, timeoutMs });
}

async function published() {
  const f = await fake();
  const v = f.addVideo({ title: 'Launch day', description: 'Launch day' });
  const post: PostRef = { platformPostId: v.id, url: `https://www.youtube.com/watch?v=${v.id}` };
  return { f, c: connector(f), video: v, post };
}

const alice = { authorChannelId: 'UCalice000000000000000000', authorDisplayName: '@alice' };
const bob = { authorChannelId: 'UCbob00000000000000000000', authorDisplayName: 'Bob Builder' };

const replyRequest = (post: PostRef, parent: FakeComment, over: Partial<PublishRequest> = {}): PublishRequest => ({
  text: 'Thanks <3 & see you soon',
  media: [],
  idempotencyKey: 'post-1:ch-yt:reply-1',
  credentials,
  replyTo: { root: post, parent: { platformPostId: parent.id, url: '' } },
  attempt: 1,
  ...over,
});

const target = (post: PostRef, id: string): CommentTarget => ({ platformCommentId: id, url: null, post });

const asked = (f: FakeYouTube, method: string, path: string) => f.requests.filter((r) => r.method === method && r.path === path);
const param = (search: string, name: string) => new URLSearchParams(search).get(name);

describe('YouTube comments read', () => {
  test('threads and their replies: each with what it answers, its author as YouTube shows it, plain text, and whether the channel wrote it', async () => {
    const { f, c, post, video } = await published();
    const first = f.addComment({ videoId: video.id, text: 'Is it <free> & open?', ...alice });
    const second = f.addComment({ videoId: video.id, text: 'Great video', ...bob });
    // Seven replies: more than a thread carries (five), so its replies are read with comments.list.
    const many = Array.from({ length: 7 }, (_, i) => f.addReply(second, `reply ${i}`, alice));
    const ours = await c.publish(replyRequest(post, first));

    const read = await c.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    expect(read.comments).toHaveLength(2 + 7 + 1);
    const byId = new Map(read.comments.map((x) => [x.platformCommentId, x]));
    expect(byId.get(first.id)).toEqual({
      platformCommentId: first.id,
      parentPlatformId: video.id,
      author: {
        name: null,
        handle: 'alice',
        avatarUrl: `https://yt3.ggpht.example/${alice.authorChannelId}=s48`,
        profileUrl: 'http://www.youtube.com/@alice',
      },
      text: 'Is it <free> & open?',
      createdAt: first.publishedAt,
      url: `https://www.youtube.com/watch?v=${video.id}&lc=${first.id}`,
      ours: false,
    });
    // A display name that is no handle is the name; the profile is the channel's page.
    expect(byId.get(second.id)!.author).toMatchObject({
      name: 'Bob Builder',
      handle: null,
      profileUrl: `http://www.youtube.com/channel/${bob.authorChannelId}`,
    });
    for (const r of many) expect(byId.get(r.id)).toMatchObject({ parentPlatformId: second.id, text: r.text, ours: false });
    // Our reply, read back: under the comment it answered, ours, its text as sent.
    expect(byId.get(ours.platformPostId)).toMatchObject({
      parentPlatformId: first.id,
      text: 'Thanks <3 & see you soon',
      ours: true,
      url: ours.url,
    });
    expect(read.comments.filter((x) => x.ours)).toHaveLength(1);

    const threads = asked(f, 'GET', '/youtube/v3/commentThreads');
    expect(threads).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(threads[0]!.search))).toEqual({
      part: 'snippet,replies',
      videoId: video.id,
      maxResults: '100',
      textFormat: 'plainText',
    });
    // comments.list once, for the thread with more replies than it carries (the other is whole).
    const lists = asked(f, 'GET', '/youtube/v3/comments').filter((r) => param(r.search, 'parentId'));
    expect(lists.map((r) => param(r.search, 'parentId'))).toEqual([second.id]);
  });

  test('a long conversation is read page by page; no comments at all cost one request', async () => {
    const { f, c, post, video } = await published();
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [] });
    expect(f.requests).toHaveLength(1);

    for (let i = 0; i < 230; i++) f.addComment({ videoId: video.id, text: `comment ${i}`, ...bob });
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => x.text).sort()).toEqual(Array.from({ length: 230 }, (_, i) => `comment ${i}`).sort());
    const pages = asked(f, 'GET', '/youtube/v3/commentThreads').slice(1);
    expect(pages.map((r) => param(r.search, 'pageToken'))).toEqual([null, expect.any(String), expect.any(String)]);
  });

  test('ours is by channel id (credentials.channelId, else channels.list): another channel with our display name is not', async () => {
    const { f, c, post, video } = await published();
    const mine = f.addComment({ videoId: video.id, text: 'A note of ours', authorChannelId: f.channelId });
    const namesake = f.addComment({
      videoId: video.id,
      text: 'Me too',
      authorChannelId: 'UCnamesake000000000000000',
      authorDisplayName: '@fakechannel',
    });
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => [x.platformCommentId, x.ours]).sort()).toEqual(
      [
        [mine.id, true],
        [namesake.id, false],
      ].sort(),
    );
    expect(asked(f, 'GET', '/youtube/v3/channels')).toHaveLength(1);
    await c.readComments!({ ...credentials, channelId: f.channelId }, post);
    expect(asked(f, 'GET', '/youtube/v3/channels')).toHaveLength(1);
  });

  test('a video YouTube no longer has is gone; a rejected token is reauth; an upload-only token is reauth', async () => {
    const { f, c, post, video } = await published();
    f.addComment({ videoId: video.id, text: 'Hi', ...alice });
    f.videos.splice(0, f.videos.length);
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [], gone: true });

    const refused = await failure(c.readComments!({ accessToken: 'not-a-token' }, post));
    expect([refused.kind, refused.opts.status]).toEqual(['reauth', 401]);
    f.uploadOnlyTokens.add('upload-only');
    const scoped = await failure(c.readComments!({ accessToken: 'upload-only' }, post));
    expect([scoped.kind, scoped.opts.platformCode]).toEqual(['reauth', 'insufficientPermissions']);
  });
});

describe('YouTube replies to comments', () => {
  test('a reply is comments.insert with snippet.parentId; a reply to a reply goes to its thread’s top-level comment', async () => {
    const { f, c, post, video } = await published();
    const top = f.addComment({ videoId: video.id, text: 'Question', ...alice });
    const theirs = f.addReply(top, 'Same question', bob);
    const result = await c.publish(replyRequest(post, theirs));

    const made = f.comments.at(-1)!;
    expect(made).toMatchObject({ parentId: top.id, authorChannelId: f.channelId, text: 'Thanks <3 & see you soon', videoId: video.id });
    expect(result).toEqual({
      platformPostId: made.id,
      url: `https://www.youtube.com/watch?v=${video.id}&lc=${made.id}`,
      publishedAt: made.publishedAt,
    });
    const sent = asked(f, 'POST', '/youtube/v3/comments');
    expect(sent).toHaveLength(1);
    expect(param(sent[0]!.search, 'part')).toBe('snippet');
    // The first comment under the video stays a thread of its own.
    expect(asked(f, 'POST', '/youtube/v3/commentThreads')).toHaveLength(0);
    await c.publish({ ...replyRequest(post, top), replyTo: { root: post, parent: post }, text: 'Pinned note', idempotencyKey: 'k2' });
    expect(asked(f, 'POST', '/youtube/v3/commentThreads')).toHaveLength(1);
    expect(f.comments.at(-1)).toMatchObject({ parentId: null, text: 'Pinned note' });
  });

  test('an answer lost after YouTube made the reply: findPublished on the next attempt finds it, and exactly one reply exists', async () => {
    const { f, post, video } = await published();
    const top = f.addComment({ videoId: video.id, text: 'Question', ...alice });
    f.addReply(top, 'Thanks <3 & see you soon', bob); // the same text by another channel is not ours
    f.failNext(1, 'accept-then-hang', 'reply');
    const req = replyRequest(post, top);
    expect((await failure(connector(f, 300).publish(req))).kind).toBe('transient');

    const c = connector(f);
    const again = { ...req, attempt: 2 };
    const found = await c.findPublished!(again);
    const mine = f.comments.filter((x) => x.parentId === top.id && x.authorChannelId === f.channelId);
    expect(mine).toHaveLength(1);
    expect(found).toEqual({
      platformPostId: mine[0]!.id,
      url: `https://www.youtube.com/watch?v=${video.id}&lc=${mine[0]!.id}`,
      publishedAt: mine[0]!.publishedAt,
    });
    expect(asked(f, 'POST', '/youtube/v3/comments')).toHaveLength(1);

    // Nothing of ours there yet: null, and the send that follows makes one.
    const other = f.addComment({ videoId: video.id, text: 'Another question', ...bob });
    expect(await c.findPublished!({ ...replyRequest(post, other), attempt: 2 })).toBeNull();
    await c.publish({ ...replyRequest(post, other), attempt: 2 });
    expect(f.comments.filter((x) => x.parentId === other.id && x.authorChannelId === f.channelId)).toHaveLength(1);
  });

  test('refusals: a comment YouTube does not have is permanent, nothing sent; a token without youtube.force-ssl is reauth', async () => {
    const { f, c, post, video } = await published();
    const gone = { id: 'UgzGone', videoId: video.id } as FakeComment;
    const err = await failure(c.publish(replyRequest(post, gone)));
    expect([err.kind, err.opts.platformCode]).toEqual(['permanent', 'commentNotFound']);
    expect(asked(f, 'POST', '/youtube/v3/comments')).toHaveLength(0);
    expect(await c.findPublished!({ ...replyRequest(post, gone), attempt: 2 })).toBeNull();

    const top = f.addComment({ videoId: video.id, text: 'Question', ...alice });
    const tooLong = await failure(c.publish(replyRequest(post, top, { text: 'x'.repeat(10_001) })));
    expect([tooLong.kind, tooLong.opts.platformCode]).toEqual(['permanent', 'commentTextTooLong']);

    f.noCommentTokens.add('good-token');
    const scoped = await failure(c.publish(replyRequest(post, top)));
    expect([scoped.kind, scoped.opts.platformCode]).toEqual(['reauth', 'insufficientPermissions']);
    expect(f.comments.filter((x) => x.authorChannelId === f.channelId)).toHaveLength(0);
  });
});

describe('YouTube hide and delete', () => {
  test('hide holds a comment for review (it leaves the thread); shown again it is published; each is idempotent', async () => {
    const { f, c, post, video } = await published();
    const rude = f.addComment({ videoId: video.id, text: 'Rude', ...bob });
    const kept = f.addComment({ videoId: video.id, text: 'Kind', ...alice });

    await c.hideComment!(credentials, target(post, rude.id), true);
    await c.hideComment!(credentials, target(post, rude.id), true);
    expect(rude.moderationStatus).toBe('heldForReview');
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([kept.id]);

    await c.hideComment!(credentials, target(post, rude.id), false);
    expect(rude.moderationStatus).toBe('published');
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId).sort()).toEqual([rude.id, kept.id].sort());
    const calls = asked(f, 'POST', '/youtube/v3/comments/setModerationStatus').map((r) =>
      Object.fromEntries(new URLSearchParams(r.search)),
    );
    expect(calls).toEqual([
      { id: rude.id, moderationStatus: 'heldForReview' },
      { id: rude.id, moderationStatus: 'heldForReview' },
      { id: rude.id, moderationStatus: 'published' },
    ]);
  });

  test('hide refusals: another channel’s video (403 forbidden) and a comment YouTube does not have are permanent; no force-ssl is reauth', async () => {
    const { f, c, post } = await published();
    const theirs = f.addVideo({ title: 'Not ours', description: '', channelId: 'UCother00000000000000000' });
    const there = f.addComment({ videoId: theirs.id, text: 'Hello', ...alice });
    const forbidden = await failure(c.hideComment!(credentials, target(post, there.id), true));
    expect([forbidden.kind, forbidden.opts.status, forbidden.opts.platformCode]).toEqual(['permanent', 403, 'forbidden']);
    expect(there.moderationStatus).toBe('published');

    const missing = await failure(c.hideComment!(credentials, target(post, 'UgzMissing'), true));
    expect([missing.kind, missing.opts.platformCode]).toEqual(['permanent', 'commentNotFound']);

    f.noCommentTokens.add('good-token');
    expect((await failure(c.hideComment!(credentials, target(post, there.id), true))).kind).toBe('reauth');
  });

  test('delete our reply: gone from YouTube and from the conversation; deleting it again succeeds', async () => {
    const { f, c, post, video } = await published();
    const top = f.addComment({ videoId: video.id, text: 'Question', ...alice });
    const ours = await c.publish(replyRequest(post, top));

    await c.deletePublished!(credentials, target(post, ours.platformPostId));
    expect(f.comments.some((x) => x.id === ours.platformPostId)).toBe(false);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([top.id]);
    await c.deletePublished!(credentials, target(post, ours.platformPostId));
    const deletes = asked(f, 'DELETE', '/youtube/v3/comments');
    expect(deletes.map((r) => param(r.search, 'id'))).toEqual([ours.platformPostId, ours.platformPostId]);
  });

  test('delete refusals: someone else’s comment is permanent (only its author may delete it); a rejected token is reauth', async () => {
    const { f, c, post, video } = await published();
    const theirs = f.addComment({ videoId: video.id, text: 'Mine, not yours', ...alice });
    const err = await failure(c.deletePublished!(credentials, target(post, theirs.id)));
    expect([err.kind, err.opts.status, err.opts.platformCode]).toEqual(['permanent', 403, 'forbidden']);
    expect(f.comments).toContain(theirs);
    const refused = await failure(c.deletePublished!({ accessToken: 'nope' }, target(post, theirs.id)));
    expect(refused.kind).toBe('reauth');
  });
});

describe('the fake YouTube refuses what YouTube refuses', () => {
  test('unknown parts and parameters, id with paging, HTML text unless plainText is asked for', async () => {
    const { f, video } = await published();
    const top = f.addComment({ videoId: video.id, text: 'a < b\nc', ...alice });
    const get = (path: string, q: Record<string, string>) =>
      fetch(`${f.url}${path}?${new URLSearchParams(q)}`, { headers: { authorization: 'Bearer good-token' } });
    const reason = async (res: Response) => ((await res.json()) as { error: { errors: { reason: string }[] } }).error.errors[0]!.reason;

    const part = await get('/youtube/v3/commentThreads', { part: 'snippet,bogus', videoId: video.id });
    expect([part.status, await reason(part)]).toEqual([400, 'unknownPart']);
    const extra = await get('/youtube/v3/commentThreads', { part: 'snippet', videoId: video.id, sort: 'old' });
    expect([extra.status, await reason(extra)]).toEqual([400, 'unexpectedParameter']);
    const paged = await get('/youtube/v3/comments', { part: 'snippet', id: top.id, maxResults: '10' });
    expect([paged.status, await reason(paged)]).toEqual([400, 'incompatibleParameters']);
    const html = (await (await get('/youtube/v3/commentThreads', { part: 'snippet', videoId: video.id })).json()) as {
      items: { snippet: { topLevelComment: { snippet: { textDisplay: string } } } }[];
    };
    expect(html.items[0]!.snippet.topLevelComment.snippet.textDisplay).toBe('a &lt; b<br>c');
  });
});
