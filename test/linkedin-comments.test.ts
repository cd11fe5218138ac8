// What people answered under an organization page's LinkedIn post, and the page's replies there,
// on the local fake: the Comments API lists a post's comments and each comment's replies
// (GET /rest/socialActions/{urn}/comments, needing r_organization_social), takes a reply with
// parentComment, and deletes a comment (DELETE …/comments/{id}?actor=) on what it answers. A
// member's channel reads none: r_member_social is granted to select developers only.
import { describe, expect, test } from 'bun:test';
import { createLinkedInConnector } from '../platforms/linkedin.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { type FakeLinkedIn, type FakeLinkedInComment, startFakeLinkedIn } from './fakes/linkedin.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeLinkedIn);

const ann = 'urn:li:person:ann000';
const ben = 'urn:li:person:ben000';

function connector(f: FakeLinkedIn, timeoutMs = 2_000) {
  return createLinkedInConnector({ baseUrl: f.url, authBaseUrl: f.url, timeoutMs, pollIntervalMs: 5 });
}

async function published(as: 'organization' | 'member' = 'organization') {
  const f = await fake();
  const c = connector(f);
  const credentials =
    as === 'organization' ? { accessToken: 'org-token', authorUrn: f.organization } : { accessToken: 'good-token', authorUrn: f.member };
  const post = await c.publish({ text: 'What do you think?', media: [], idempotencyKey: 'post-1:ch-li', credentials });
  return { f, c, credentials, post };
}

const replyRequest = (
  credentials: Record<string, unknown>,
  post: PostRef,
  parent: FakeLinkedInComment,
  over: Partial<PublishRequest> = {},
): PublishRequest => ({
  text: 'Thanks, Ann (really) #grateful',
  media: [],
  idempotencyKey: 'post-1:ch-li:reply-1',
  credentials,
  replyTo: { root: post, parent: { platformPostId: parent.urn, url: '' } },
  attempt: 1,
  ...over,
});

const target = (post: PostRef, urn: string): CommentTarget => ({ platformCommentId: urn, url: null, post });
const commentsPath = (urn: string) => `/rest/socialActions/${encodeURIComponent(urn)}/comments`;
const asked = (f: FakeLinkedIn, method: string, path: string) => f.requests.filter((r) => r.method === method && r.path === path);

describe('LinkedIn comments read (organization pages)', () => {
  test('comments and their replies, each with what it answers; ours by actor; a comment without replies asks for none', async () => {
    const { f, c, credentials, post } = await published();
    const first = f.addComment(post.platformPostId, ann, 'Love it & more');
    const ours = await c.publish(replyRequest(credentials, post, first));
    const benReply = f.addComment(post.platformPostId, ben, 'Agreed', first);
    const quiet = f.addComment(post.platformPostId, ben, 'No replies here');

    const read = await c.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    expect(read.comments.map((x) => [x.platformCommentId, x.parentPlatformId, x.ours])).toEqual([
      [first.urn, post.platformPostId, false],
      [ours.platformPostId, first.urn, true],
      [benReply.urn, first.urn, false],
      [quiet.urn, post.platformPostId, false],
    ]);
    expect(read.comments[0]).toEqual({
      platformCommentId: first.urn,
      parentPlatformId: post.platformPostId,
      author: { name: null, handle: null, avatarUrl: null, profileUrl: null },
      text: 'Love it & more',
      createdAt: new Date(first.createdAt).toISOString(),
      url: null,
      ours: false,
    });
    expect(read.comments[1]!.text).toBe('Thanks, Ann (really) #grateful');
    expect(asked(f, 'GET', commentsPath(post.platformPostId))).toHaveLength(1);
    expect(asked(f, 'GET', commentsPath(first.urn))).toHaveLength(1);
    expect(asked(f, 'GET', commentsPath(quiet.urn))).toHaveLength(0);
  });

  test('a long conversation is read page by page (start, count 100)', async () => {
    const { f, c, credentials, post } = await published();
    for (let i = 0; i < 230; i++) f.addComment(post.platformPostId, ann, `comment ${i}`);
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => x.text)).toEqual(Array.from({ length: 230 }, (_, i) => `comment ${i}`));
    const pages = asked(f, 'GET', commentsPath(post.platformPostId)).map((r) => Object.fromEntries(new URLSearchParams(r.search)));
    expect(pages).toEqual([
      { start: '0', count: '100' },
      { start: '100', count: '100' },
      { start: '200', count: '100' },
    ]);
  });

  test('a post LinkedIn does not have is gone; one not open to comments yet has none; a member’s channel reads none and asks nothing', async () => {
    const { f, c, credentials } = await published();
    const gone = { platformPostId: 'urn:li:share:999', url: '' };
    expect(await c.readComments!(credentials, gone)).toEqual({ comments: [], gone: true });

    const young = await c.publish({ text: 'Just now', media: [], idempotencyKey: 'p2', credentials });
    f.failNext(1, { status: 404, body: { status: 404, message: 'Unable to obtain activity' } }, 'comments');
    expect(await c.readComments!(credentials, young)).toEqual({ comments: [] });
    expect(asked(f, 'GET', `/rest/posts/${encodeURIComponent(young.platformPostId)}`)).toHaveLength(1);

    const before = f.requests.length;
    const member = await failure(c.readComments!({ accessToken: 'good-token', authorUrn: f.member }, young));
    expect(member.kind).toBe('permanent');
    expect(member.message).toContain('r_member_social');
    expect(f.requests).toHaveLength(before);
  });

  test('a rejected token is reauth; an organization token without r_organization_social is permanent', async () => {
    const { f, c, credentials, post } = await published();
    const refused = await failure(c.readComments!({ ...credentials, accessToken: 'nope' }, post));
    expect([refused.kind, refused.opts.status]).toEqual(['reauth', 401]);
    f.tokens.set('org-write', { member: f.member, scopes: new Set(['w_member_social', 'w_organization_social']), state: 'valid' });
    const scoped = await failure(c.readComments!({ ...credentials, accessToken: 'org-write' }, post));
    expect([scoped.kind, scoped.opts.status]).toEqual(['permanent', 403]);
    expect(scoped.message).toContain('r_organization_social');
  });
});

describe('LinkedIn replies to comments', () => {
  test('a reply goes to the comment with parentComment and the post as object; a comment gone is permanent', async () => {
    const { f, c, credentials, post } = await published();
    const first = f.addComment(post.platformPostId, ann, 'Question');
    const result = await c.publish(replyRequest(credentials, post, first));
    const made = f.comments.at(-1)!;
    expect(made).toMatchObject({ parentComment: first.urn, object: post.platformPostId, actor: f.organization });
    expect(result).toEqual({ platformPostId: made.urn, url: post.url, publishedAt: new Date(made.createdAt).toISOString() });
    expect(asked(f, 'POST', commentsPath(first.urn))).toHaveLength(1);

    const missing = { ...first, urn: `urn:li:comment:(${post.platformPostId},1)` };
    const err = await failure(c.publish(replyRequest(credentials, post, missing, { idempotencyKey: 'k2' })));
    expect([err.kind, err.opts.status]).toEqual(['permanent', 404]);
  });

  test('an answer lost after LinkedIn made the reply: findPublished on the next attempt finds it, and exactly one reply exists', async () => {
    const { f, credentials, post } = await published();
    const first = f.addComment(post.platformPostId, ann, 'Question');
    const other = f.addComment(post.platformPostId, ann, 'Another');
    f.addComment(post.platformPostId, f.organization, 'Thanks, Ann (really) #grateful', other); // same text elsewhere: not it
    f.failNext(1, 'accept-then-hang', 'comment');
    const req = replyRequest(credentials, post, first);
    expect((await failure(connector(f, 300).publish(req))).kind).toBe('transient');

    const c = connector(f);
    const found = await c.findPublished!({ ...req, attempt: 2 });
    const mine = f.comments.filter((x) => x.parentComment === first.urn && x.actor === f.organization);
    expect(mine).toHaveLength(1);
    expect(found).toEqual({ platformPostId: mine[0]!.urn, url: post.url, publishedAt: new Date(mine[0]!.createdAt).toISOString() });
    expect(f.count('comment')).toBe(1);

    const fresh = f.addComment(post.platformPostId, ben, 'One more');
    expect(await c.findPublished!({ ...replyRequest(credentials, post, fresh), attempt: 2 })).toBeNull();
  });
});

describe('LinkedIn delete', () => {
  test('delete our reply: asked on the post, then on its parent comment; gone from the conversation; again it succeeds', async () => {
    const { f, c, credentials, post } = await published();
    const first = f.addComment(post.platformPostId, ann, 'Question');
    const ours = await c.publish(replyRequest(credentials, post, first));
    const id = ours.platformPostId.slice(ours.platformPostId.lastIndexOf(',') + 1, -1);

    await c.deletePublished!(credentials, target(post, ours.platformPostId));
    expect(f.comments.some((x) => x.urn === ours.platformPostId)).toBe(false);
    const deletes = f.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => `${r.path}${r.search}`)).toEqual([
      `${commentsPath(post.platformPostId)}/${id}?actor=${encodeURIComponent(f.organization)}`,
      `${commentsPath(first.urn)}/${id}?actor=${encodeURIComponent(f.organization)}`,
    ]);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([first.urn]);
    await c.deletePublished!(credentials, target(post, ours.platformPostId));
  });

  test('a first comment is deleted on the post; someone else’s comment is permanent; a member’s gone comment is deleted already', async () => {
    const { f, c, credentials, post } = await published();
    const first = await c.publish({
      ...replyRequest(credentials, post, f.addComment(post.platformPostId, ann, 'x')),
      replyTo: { root: post, parent: post },
    });
    await c.deletePublished!(credentials, target(post, first.platformPostId));
    expect(f.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
    expect(f.comments.some((x) => x.urn === first.platformPostId)).toBe(false);

    const theirs = f.comments.find((x) => x.actor === ann)!;
    const err = await failure(c.deletePublished!(credentials, target(post, theirs.urn)));
    expect([err.kind, err.opts.status]).toEqual(['permanent', 403]);
    expect(f.comments).toContain(theirs);

    const m = await published('member');
    const mine = await m.c.publish({
      text: 'First comment',
      media: [],
      idempotencyKey: 'k3',
      credentials: m.credentials,
      replyTo: { root: m.post, parent: m.post },
    });
    await m.c.deletePublished!(m.credentials, target(m.post, mine.platformPostId));
    await m.c.deletePublished!(m.credentials, target(m.post, mine.platformPostId));
    expect(m.f.comments).toHaveLength(0);
    expect(m.f.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/comments'))).toHaveLength(0);
    const refused = await failure(m.c.deletePublished!({ ...m.credentials, accessToken: 'nope' }, target(m.post, mine.platformPostId)));
    expect(refused.kind).toBe('reauth');
  });
});

describe('the fake LinkedIn refuses what LinkedIn refuses', () => {
  test('a list parameter the Comments API does not take; parentComment on a comment of the post; a nested comment without it', async () => {
    const { f, post } = await published();
    const first = f.addComment(post.platformPostId, ann, 'Question');
    const headers = { authorization: 'Bearer org-token', 'linkedin-version': '202609', 'x-restli-protocol-version': '2.0.0' };
    const list = await fetch(`${f.url}${commentsPath(post.platformPostId)}?start=0&count=10&sort=new`, { headers });
    expect(list.status).toBe(400);
    const send = (on: string, body: Record<string, unknown>) =>
      fetch(`${f.url}${commentsPath(on)}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const base = { actor: f.organization, object: post.platformPostId, message: { text: 'x' } };
    expect((await send(post.platformPostId, { ...base, parentComment: first.urn })).status).toBe(422);
    expect((await send(first.urn, base)).status).toBe(422);
    expect((await send(first.urn, { ...base, parentComment: first.urn })).status).toBe(201);
  });
});
