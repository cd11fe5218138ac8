// Reading what people answered under a published Facebook Page post, Instagram media or thread,
// on the local Graph fake: Facebook's GET /{post-id}/comments?filter=stream (every comment and
// reply, with `parent`), Instagram's GET /{ig-media-id}/comments (top level, replies as a field),
// Threads' GET /{media-id}/conversation (every reply at any depth, with `replied_to`), each paged
// by the `after` cursor; the fake refuses a field its node does not have, as Graph does.
import { describe, expect, test } from 'bun:test';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import { createThreadsConnector } from '../platforms/meta/threads.ts';
import { PlatformError } from '../platforms/types.ts';
import { type FakeMeta, startFakeMeta } from './fakes/meta.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakeMeta);

async function facebook() {
  const f = await fake('facebook');
  const c = createFacebookConnector({ baseUrl: f.url, timeoutMs: 2_000 });
  const credentials = { accessToken: 'EAAG-page-token', pageId: f.accountId };
  const post = await c.publish({ text: 'What do you think?', media: [], idempotencyKey: 'p1', credentials });
  return { f, c, credentials, post };
}

async function instagram() {
  const f = await fake('instagram');
  const c = createInstagramConnector({ baseUrl: f.url, timeoutMs: 2_000 });
  const credentials = { accessToken: 'IGAA-user-token', igUserId: f.accountId };
  const seeded = f.seedPost({ text: 'A photo', ageMs: 60_000, kind: 'IMAGE' });
  return { f, c, credentials, post: { platformPostId: seeded.id, url: seeded.permalink } };
}

const comments = (f: FakeMeta) => f.requests.filter((r) => r.path.endsWith('/comments') && r.method === 'GET');

describe('Facebook comments', () => {
  test('every comment and reply with its parent, its author as Facebook shows it, and whether the Page wrote it', async () => {
    const { f, c, credentials, post } = await facebook();
    const ann = { id: '5550000000000007', name: 'Ann Example' };
    const first = f.seedComment({ postId: post.platformPostId, text: 'Lovely', from: ann, ageMs: 3_000 });
    const reply = f.seedComment({ postId: post.platformPostId, text: 'Thanks Ann!', by: 'account', ageMs: 2_000, parentId: first.id });
    const second = f.seedComment({ postId: post.platformPostId, text: 'Where is this?', by: 'other', ageMs: 1_000 });

    const read = await c.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    expect(read.comments).toEqual([
      {
        platformCommentId: first.id,
        parentPlatformId: post.platformPostId,
        author: { name: 'Ann Example', handle: null, avatarUrl: null, profileUrl: null },
        text: 'Lovely',
        createdAt: new Date(Math.floor(first.created.getTime() / 1000) * 1000).toISOString(),
        url: first.permalink,
        ours: false,
      },
      expect.objectContaining({ platformCommentId: reply.id, parentPlatformId: first.id, text: 'Thanks Ann!', ours: true }),
      expect.objectContaining({ platformCommentId: second.id, parentPlatformId: post.platformPostId, ours: false }),
    ]);
    const asked = comments(f);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params).toMatchObject({
      filter: 'stream',
      order: 'chronological',
      fields: 'id,message,created_time,from,permalink_url,parent',
    });
  });

  test('a long conversation is read page by page, by the after cursor', async () => {
    const { f, c, credentials, post } = await facebook();
    for (let i = 0; i < 230; i++)
      f.seedComment({ postId: post.platformPostId, text: `comment ${i}`, by: 'other', ageMs: 300_000 - i * 1000 });
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => x.text)).toEqual(Array.from({ length: 230 }, (_, i) => `comment ${i}`));
    expect(comments(f).map((r) => r.params.after ?? null)).toEqual([null, expect.any(String), expect.any(String)]);
  });

  test('a deleted post is gone; a refused token is reauth', async () => {
    const { f, c, credentials } = await facebook();
    expect(await c.readComments!(credentials, { platformPostId: `${f.accountId}_404`, url: '' })).toEqual({ comments: [], gone: true });
    const refused = await c.readComments!(
      { ...credentials, accessToken: 'not-a-token' },
      { platformPostId: `${f.accountId}_1`, url: '' },
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PlatformError);
    expect((refused as PlatformError).kind).toBe('reauth');
  });
});

describe('Instagram comments', () => {
  test('top-level comments with their replies one level deep, by username; ours by the account id', async () => {
    const { f, c, credentials, post } = await instagram();
    const sam = { id: '17850000000000009', name: 'sam.example' };
    const first = f.seedComment({ postId: post.platformPostId, text: 'So good', from: sam, ageMs: 3_000 });
    const ours = f.seedComment({
      postId: post.platformPostId,
      text: '@sam.example thank you',
      by: 'account',
      ageMs: 2_000,
      parentId: first.id,
    });
    const other = f.seedComment({ postId: post.platformPostId, text: 'Nice', by: 'other', ageMs: 1_000 });

    const read = await c.readComments!(credentials, post);
    expect(read.comments).toEqual([
      {
        platformCommentId: first.id,
        parentPlatformId: post.platformPostId,
        author: { name: null, handle: 'sam.example', avatarUrl: null, profileUrl: 'https://www.instagram.com/sam.example/' },
        text: 'So good',
        createdAt: new Date(Math.floor(first.created.getTime() / 1000) * 1000).toISOString(),
        url: null,
        ours: false,
      },
      expect.objectContaining({
        platformCommentId: ours.id,
        parentPlatformId: first.id,
        ours: true,
        author: expect.objectContaining({ handle: 'fakeaccount' }),
      }),
      expect.objectContaining({ platformCommentId: other.id, parentPlatformId: post.platformPostId, ours: false }),
    ]);
    // The top level only: the reply came inside its parent.
    expect(comments(f)).toHaveLength(1);
    expect(comments(f)[0]!.params.fields).toBe('id,text,timestamp,username,from,replies{id,text,timestamp,username,from}');
  });

  test('a field the comment node does not have is refused by Graph (the fake as well), permanently', async () => {
    const { f, credentials, post } = await instagram();
    const res = await fetch(`${f.url}/v21.0/${post.platformPostId}/comments?fields=id,message&access_token=${credentials.accessToken}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: 100 });
  });
});

describe('Threads comments', () => {
  test('the whole conversation, flat and oldest first: each reply with what it answers; our own thread item is ours', async () => {
    const f = await fake('threads');
    const c = createThreadsConnector({ baseUrl: f.url, timeoutMs: 2_000, pollIntervalMs: 5 });
    const credentials = { accessToken: 'THAA-user-token', threadsUserId: f.accountId };
    const post = await c.publish({ text: 'Thoughts?', media: [], idempotencyKey: 't1', credentials });
    const item = await c.publish({
      text: 'and more',
      media: [],
      idempotencyKey: 't2',
      credentials,
      replyTo: { root: post, parent: post },
    });
    const first = f.seedReply({ parentId: post.platformPostId, text: 'Nice one', username: 'dana', ageMs: 0 });
    const deeper = f.seedReply({ parentId: first.id, text: 'Agreed', username: 'eli', ageMs: 0 });
    const onItem = f.seedReply({ parentId: item.platformPostId, text: 'About the second part', username: 'dana', ageMs: 0 });

    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => [x.platformCommentId, x.parentPlatformId, x.ours])).toEqual([
      [item.platformPostId, post.platformPostId, true],
      [first.id, post.platformPostId, false],
      [deeper.id, first.id, false],
      [onItem.id, item.platformPostId, false],
    ]);
    expect(read.comments[1]).toMatchObject({
      author: { name: null, handle: 'dana', avatarUrl: null, profileUrl: 'https://www.threads.com/@dana' },
      text: 'Nice one',
      url: first.permalink,
    });
    const asked = f.requests.filter((r) => r.path.endsWith('/conversation'));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params).toMatchObject({
      reverse: 'false',
      fields: 'id,text,timestamp,username,permalink,replied_to,is_reply_owned_by_me',
    });
  });

  test('a thread the platform no longer has is gone', async () => {
    const f = await fake('threads');
    const c = createThreadsConnector({ baseUrl: f.url, timeoutMs: 2_000 });
    expect(
      await c.readComments!({ accessToken: 'THAA-user-token', threadsUserId: f.accountId }, { platformPostId: '404', url: '' }),
    ).toEqual({
      comments: [],
      gone: true,
    });
  });
});
