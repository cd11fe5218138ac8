// Reading what people answered under a published X post: GET /2/tweets/search/recent with
// `conversation_id:<id>` on the local fake, which answers as X does (newest first, next_token
// pages, the authors in includes.users, escaped text, the last 7 days only) and refuses what X
// refuses (max_results outside 10–100, unknown fields).
import { describe, expect, test } from 'bun:test';
import { createXConnector } from '../platforms/x.ts';
import { PlatformError } from '../platforms/types.ts';
import { startFakeX } from './fakes/x.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakeX);

const credentials = { accessToken: 'good-token' };

async function published() {
  const f = await fake();
  const c = createXConnector({ baseUrl: f.url, timeoutMs: 2_000 });
  const post = await c.publish({ text: 'Ask me anything', media: [], idempotencyKey: 'x1', credentials });
  return { f, c, post, root: f.tweets.find((t) => t.id === post.platformPostId)! };
}

const ann = { id: '4001', username: 'ann_x', name: 'Ann', profile_image_url: 'https://pbs.twimg.com/profile_images/4001/a.jpg' };
const ben = { id: '4002', username: 'ben_x', name: 'Ben' };

describe('X comments', () => {
  test('the conversation oldest first: each reply with what it answers, its author, its text as written; ours by user id', async () => {
    const { f, c, post, root } = await published();
    const first = f.reply(root, ann, 'Is it <free> & open?', new Date(Date.now() - 3_000));
    const second = f.reply(first, ben, 'Asking too', new Date(Date.now() - 2_000));
    const ours = await c.publish({
      text: 'Yes, both!',
      media: [],
      idempotencyKey: 'x2',
      credentials,
      replyTo: { root: post, parent: { platformPostId: first.id, url: '' } },
    });

    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => [x.platformCommentId, x.parentPlatformId, x.ours])).toEqual([
      [first.id, post.platformPostId, false],
      [second.id, first.id, false],
      [ours.platformPostId, first.id, true],
    ]);
    expect(read.comments[0]).toEqual({
      platformCommentId: first.id,
      parentPlatformId: post.platformPostId,
      author: { name: 'Ann', handle: 'ann_x', avatarUrl: ann.profile_image_url, profileUrl: 'https://x.com/ann_x' },
      text: 'Is it <free> & open?',
      createdAt: first.createdAt,
      url: `https://x.com/ann_x/status/${first.id}`,
      ours: false,
    });
    expect(read.comments[1]!.author.avatarUrl).toBeNull();
    const searches = f.requests.filter((r) => r.path === '/2/tweets/search/recent');
    expect(searches).toHaveLength(1);
    expect(new URLSearchParams(searches[0]!.search).get('query')).toBe(`conversation_id:${post.platformPostId}`);
  });

  test('a long conversation in pages by next_token', async () => {
    const { f, c, post, root } = await published();
    for (let i = 0; i < 150; i++) f.reply(root, ann, `reply ${i}`, new Date(Date.now() - 200_000 + i * 1000));
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => x.text)).toEqual(Array.from({ length: 150 }, (_, i) => `reply ${i}`));
    expect(f.requests.filter((r) => r.path === '/2/tweets/search/recent')).toHaveLength(2);
  });

  test('no reply: looked up, quiet or gone; a refused token is reauth', async () => {
    const { f, c, post } = await published();
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [] });
    f.tweets.splice(0, f.tweets.length);
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [], gone: true });
    const refused = (await c.readComments!({ accessToken: 'bad' }, post).catch((e: unknown) => e)) as PlatformError;
    expect(refused).toBeInstanceOf(PlatformError);
    expect(refused.kind).toBe('reauth');
  });

  test('the fake refuses what X refuses', async () => {
    const { f, post } = await published();
    const ask = (q: Record<string, string>) =>
      fetch(`${f.url}/2/tweets/search/recent?${new URLSearchParams(q)}`, { headers: { authorization: 'Bearer good-token' } });
    expect((await ask({ query: `conversation_id:${post.platformPostId}`, max_results: '5' })).status).toBe(400);
    expect((await ask({ query: `conversation_id:${post.platformPostId}`, 'tweet.fields': 'bogus' })).status).toBe(400);
  });
});
