// What people answered under a published Reddit post, and our replies there, on the local fake:
// the post's comment tree (GET /comments/{article}) with its `more` stubs read through
// /api/morechildren, a reply as POST /api/comment on the comment's fullname, found again before a
// re-send among the account's comments, and POST /api/del for a reply of ours. The fake answers as
// Reddit does (a tree of at most `limit` comments and 10 levels, escaped text without raw_json=1,
// [deleted] for a deleted comment with replies, {} from /api/del whatever it did) and needs each
// route's OAuth scope.
import { describe, expect, test } from 'bun:test';
import { createRedditConnector } from '../platforms/reddit.ts';
import type { CommentTarget, PostRef, PublishRequest } from '../platforms/types.ts';
import { type FakeReddit, type FakeRedditComment, type FakeRedditPost, startFakeReddit } from './fakes/reddit.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeReddit);

const UA = 'server:postpilot-test:v1 (by /u/poster)';
const credentials = { accessToken: 'good-token' };

function connector(f: FakeReddit, timeoutMs = 2_000) {
  return createRedditConnector({ baseUrl: f.url, authBaseUrl: f.url, webBaseUrl: 'https://www.reddit.com', userAgent: UA, timeoutMs });
}

async function published() {
  const f = await fake();
  const c = connector(f);
  const post = await c.publish({
    text: 'What do you think?',
    media: [],
    idempotencyKey: 'post-1:ch-rd',
    credentials,
    reddit: { subreddit: 'test', title: 'Ask me' },
  });
  const submission = f.posts.find((p) => p.name === post.platformPostId)!;
  return { f, c, post, submission };
}

const replyRequest = (post: PostRef, parent: FakeRedditComment, over: Partial<PublishRequest> = {}): PublishRequest => ({
  text: 'Thanks **both** & <3',
  media: [],
  idempotencyKey: 'post-1:ch-rd:reply-1',
  credentials,
  replyTo: { root: post, parent: { platformPostId: parent.name, url: '' } },
  attempt: 1,
  ...over,
});

const target = (post: PostRef, id: string): CommentTarget => ({ platformCommentId: id, url: null, post });
const grant = (f: FakeReddit, scope: string) => f.tokens.get('good-token')!.scopes.push(scope);
const asked = (f: FakeReddit, method: string, test: (path: string) => boolean) =>
  f.requests.filter((r) => r.method === method && test(r.path));

/** `n` top-level comments by u/crowd, oldest first. */
function crowd(f: FakeReddit, post: FakeRedditPost, n: number): FakeRedditComment[] {
  return Array.from({ length: n }, (_, i) => f.addComment(post, `comment ${i}`, 'crowd'));
}

describe('Reddit comments read', () => {
  test('the tree: each comment with what it answers (fullnames), its author, its markdown as written, and whether the account wrote it', async () => {
    const { f, c, post, submission } = await published();
    const first = f.addComment(submission, 'Is it <free> & open?', 'alice');
    const second = f.addComment(submission, 'Replying to Alice', 'Bob_R', first);
    const ours = await c.publish(replyRequest(post, second));
    const later = f.addComment(submission, 'Another thought', 'alice');

    const read = await c.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    expect(read.comments.map((x) => [x.platformCommentId, x.parentPlatformId, x.ours])).toEqual([
      [first.name, post.platformPostId, false],
      [second.name, first.name, false],
      [ours.platformPostId, second.name, true],
      [later.name, post.platformPostId, false],
    ]);
    expect(read.comments[0]).toEqual({
      platformCommentId: first.name,
      parentPlatformId: post.platformPostId,
      author: { name: null, handle: 'alice', avatarUrl: null, profileUrl: 'https://www.reddit.com/user/alice/' },
      text: 'Is it <free> & open?',
      createdAt: new Date(first.createdUtc * 1000).toISOString(),
      url: `https://www.reddit.com${first.permalink}`,
      ours: false,
    });
    expect(read.comments[2]).toMatchObject({ text: 'Thanks **both** & <3', url: ours.url });

    const trees = asked(f, 'GET', (p) => p.startsWith('/comments/'));
    expect(trees.map((r) => r.path)).toEqual([`/comments/${submission.id}`]);
    expect(f.requests.some((r) => r.path === '/api/morechildren')).toBe(false);
  });

  test('comments the tree leaves out (its more stubs) are read with /api/morechildren, one call at a time, until none is left', async () => {
    const { f, c, post, submission } = await published();
    const all = crowd(f, submission, 545);
    const read = await c.readComments!({ ...credentials, username: 'poster' }, post);
    expect(read.comments.map((x) => x.platformCommentId)).toEqual(all.map((x) => x.name));
    // 500 in the tree; 45 named by a stub: 20, 20 and 5 over three calls.
    expect(asked(f, 'GET', (p) => p === '/api/morechildren')).toHaveLength(3);
    expect(f.requests.some((r) => r.path === '/api/v1/me')).toBe(false);
  });

  test('replies deeper than Reddit’s 10 levels are not read; a deleted comment is left out and its replies kept', async () => {
    const { f, c, post, submission } = await published();
    let parent = f.addComment(submission, 'level 0', 'alice');
    const chain = [parent];
    for (let i = 1; i < 12; i++) chain.push((parent = f.addComment(submission, `level ${i}`, i % 2 ? 'bob' : 'alice', parent)));
    const gone = f.addComment(submission, 'I said something', 'carol');
    const answer = f.addComment(submission, 'What did you say?', 'dave', gone);
    gone.deleted = true;

    const read = await c.readComments!(credentials, post);
    const ids = read.comments.map((x) => x.platformCommentId);
    expect(ids).toEqual([...chain.slice(0, 10).map((x) => x.name), answer.name]);
    expect(read.comments.at(-1)!.parentPlatformId).toBe(gone.name);
    expect(f.requests.some((r) => r.path === '/api/morechildren')).toBe(false);
  });

  test('a post Reddit does not have is gone; a rejected token is reauth; a token without the read scope is reauth', async () => {
    const { f, c, post } = await published();
    expect(await c.readComments!(credentials, { platformPostId: 't3_zzzzzz', url: '' })).toEqual({ comments: [], gone: true });
    const refused = await failure(c.readComments!({ accessToken: 'nope' }, post));
    expect([refused.kind, refused.opts.status]).toEqual(['reauth', 401]);
    f.tokens.set('no-read', { user: 'poster', scopes: ['submit', 'identity', 'history'] });
    const scoped = await failure(c.readComments!({ accessToken: 'no-read' }, post));
    expect([scoped.kind, scoped.opts.platformCode]).toEqual(['reauth', 'insufficient_scope']);
  });
});

describe('Reddit replies to comments', () => {
  test('a reply goes to the comment’s fullname; a deleted comment cannot be answered (permanent)', async () => {
    const { f, c, post, submission } = await published();
    const theirs = f.addComment(submission, 'Question', 'alice');
    const result = await c.publish(replyRequest(post, theirs));
    const made = f.comments.at(-1)!;
    expect(made).toMatchObject({ parentId: theirs.name, author: 'poster', body: 'Thanks **both** & <3' });
    expect(result).toEqual({
      platformPostId: made.name,
      url: `https://www.reddit.com${made.permalink}`,
      publishedAt: new Date(made.createdUtc * 1000).toISOString(),
    });

    const deleted = f.addComment(submission, 'Soon gone', 'bob');
    deleted.deleted = true;
    const err = await failure(c.publish(replyRequest(post, deleted, { idempotencyKey: 'k2' })));
    expect([err.kind, err.opts.platformCode]).toEqual(['permanent', 'DELETED_COMMENT']);
  });

  test('an answer lost after Reddit made the reply: findPublished on the next attempt finds it, and exactly one reply exists', async () => {
    const { f, post, submission } = await published();
    const theirs = f.addComment(submission, 'Question', 'alice');
    const other = f.addComment(submission, 'Another', 'alice');
    f.addComment(submission, 'Thanks **both** & <3', 'poster', other); // the same text under another comment is not it
    f.failNext(1, 'accept-then-hang', 'comment');
    const req = replyRequest(post, theirs);
    expect((await failure(connector(f, 300).publish(req))).kind).toBe('transient');

    const c = connector(f);
    const found = await c.findPublished!({ ...req, attempt: 2 });
    const mine = f.comments.filter((x) => x.parentId === theirs.name && x.author === 'poster');
    expect(mine).toHaveLength(1);
    expect(found).toEqual({
      platformPostId: mine[0]!.name,
      url: `https://www.reddit.com${mine[0]!.permalink}`,
      publishedAt: new Date(mine[0]!.createdUtc * 1000).toISOString(),
    });
    expect(asked(f, 'POST', (p) => p === '/api/comment')).toHaveLength(1);

    const fresh = f.addComment(submission, 'One more', 'bob');
    expect(await c.findPublished!({ ...replyRequest(post, fresh), attempt: 2 })).toBeNull();
  });
});

describe('Reddit delete', () => {
  test('delete our reply: Reddit shows it no more; deleting it again succeeds without asking Reddit to delete', async () => {
    const { f, c, post, submission } = await published();
    grant(f, 'edit');
    const theirs = f.addComment(submission, 'Question', 'alice');
    const ours = await c.publish(replyRequest(post, theirs));

    await c.deletePublished!(credentials, target(post, ours.platformPostId));
    expect(f.comments.find((x) => x.name === ours.platformPostId)!.deleted).toBe(true);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([theirs.name]);
    await c.deletePublished!(credentials, target(post, ours.platformPostId));
    expect(asked(f, 'POST', (p) => p === '/api/del')).toHaveLength(1);
    // Reddit no longer has it at all: deleted already.
    await c.deletePublished!(credentials, target(post, 't1_zzzzzz'));
  });

  test('someone else’s comment is refused (permanent; Reddit would ignore it silently); no edit scope is reauth', async () => {
    const { f, c, post, submission } = await published();
    grant(f, 'edit');
    const theirs = f.addComment(submission, 'Mine, not yours', 'alice');
    const err = await failure(c.deletePublished!(credentials, target(post, theirs.name)));
    expect([err.kind, err.opts.platformCode]).toEqual(['permanent', 'NOT_AUTHOR']);
    expect(theirs.deleted).toBe(false);
    expect(asked(f, 'POST', (p) => p === '/api/del')).toHaveLength(0);

    const ours = f.addComment(submission, 'Ours', 'poster');
    f.tokens.set('no-edit', { user: 'poster', scopes: ['submit', 'identity', 'read', 'history'] });
    const scoped = await failure(c.deletePublished!({ accessToken: 'no-edit' }, target(post, ours.name)));
    expect([scoped.kind, scoped.opts.platformCode]).toEqual(['reauth', 'insufficient_scope']);
    expect(ours.deleted).toBe(false);
  });
});

describe('the fake Reddit answers as Reddit does', () => {
  test('a parameter the tree does not take is refused; text is escaped without raw_json=1; /api/del ignores another’s comment', async () => {
    const { f, submission } = await published();
    grant(f, 'edit');
    const theirs = f.addComment(submission, 'a < b', 'alice');
    const headers = { authorization: 'Bearer good-token', 'user-agent': UA };
    expect((await fetch(`${f.url}/comments/${submission.id}?sort=oldest`, { headers })).status).toBe(400);
    expect((await fetch(`${f.url}/comments/${submission.id}?after=x`, { headers })).status).toBe(400);
    const plain = (await (await fetch(`${f.url}/comments/${submission.id}?sort=old`, { headers })).json()) as {
      data: { children: { data: { body: string } }[] };
    }[];
    expect(plain[1]!.data.children[0]!.data.body).toBe('a &lt; b');
    const del = await fetch(`${f.url}/api/del`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: `id=${theirs.name}`,
    });
    expect([del.status, await del.json()]).toEqual([200, {}]);
    expect(theirs.deleted).toBe(false);
  });
});
