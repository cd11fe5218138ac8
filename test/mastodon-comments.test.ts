// Reading what people answered under a published Mastodon status: GET /api/v1/statuses/:id/context
// on the local fake, which answers as Mastodon does (the tree in depth-first order, the Account
// entity, rendered HTML, 404 for a status it no longer has, 401 for a refused token).
import { describe, expect, test } from 'bun:test';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { PlatformError } from '../platforms/types.ts';
import { type FakeAccount, type FakeMastodon, startFakeMastodon } from './fakes/mastodon.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakeMastodon);

const connector = () => createMastodonConnector({ timeoutMs: 2_000, outbound: { allowPrivate: true } });

function person(f: FakeMastodon, id: string, username: string, domain?: string): FakeAccount {
  return {
    id,
    username,
    acct: domain ? `${username}@${domain}` : username,
    display_name: domain ? '' : `${username[0]!.toUpperCase()}${username.slice(1)}`,
    avatar: `${f.url}/avatars/${id}.png`,
    url: domain ? `https://${domain}/@${username}` : `${f.url}/@${username}`,
  };
}

async function published(f: FakeMastodon) {
  const c = connector();
  const credentials = { instanceUrl: f.url, accessToken: 'good-token' };
  const post = await c.publish({ text: 'What do you think?', media: [], idempotencyKey: 'post-1:ch-1', credentials });
  return { c, credentials, post };
}

describe('Mastodon comments', () => {
  test('the conversation under a post: each comment with its parent, author, text from HTML, URL, and whether it is ours', async () => {
    const f = await fake();
    const { c, credentials, post } = await published(f);
    const alice = person(f, '7', 'alice');
    const bob = person(f, '8', 'bob', 'other.example');
    const first = f.reply(post.platformPostId, alice, 'Love it <3 & more');
    const second = f.reply(first.id, bob, 'Agreed with @alice');
    const ours = await c.publish({
      text: 'Thank you both!',
      media: [],
      idempotencyKey: 'reply-1',
      credentials,
      replyTo: { root: post, parent: { platformPostId: second.id, url: second.url } },
    });
    const other = f.reply(post.platformPostId, alice, 'Second thought');

    const read = await c.readComments!(credentials, post);
    expect(read.gone).toBeUndefined();
    // Depth-first, as Mastodon orders descendants.
    expect(read.comments.map((x) => x.platformCommentId)).toEqual([first.id, second.id, ours.platformPostId, other.id]);
    expect(read.comments[0]).toEqual({
      platformCommentId: first.id,
      parentPlatformId: post.platformPostId,
      author: { name: 'Alice', handle: 'alice', avatarUrl: `${f.url}/avatars/7.png`, profileUrl: `${f.url}/@alice` },
      text: 'Love it <3 & more',
      createdAt: first.created_at,
      url: first.url,
      ours: false,
    });
    // A remote account without a display name: its full handle, no name.
    expect(read.comments[1]).toMatchObject({
      parentPlatformId: first.id,
      author: { name: null, handle: 'bob@other.example', profileUrl: 'https://other.example/@bob' },
      text: 'Agreed with @alice',
    });
    expect(read.comments[2]).toMatchObject({ parentPlatformId: second.id, text: 'Thank you both!', ours: true, url: ours.url });
    expect(read.comments.filter((x) => x.ours)).toHaveLength(1);
    // One request, signed in (a signed-in client gets the whole conversation).
    const asked = f.requests.filter((r) => r.path.endsWith('/context'));
    expect(asked.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /api/v1/statuses/${post.platformPostId}/context`]);
  });

  test('no answers yet: an empty list, without asking who the account is', async () => {
    const f = await fake();
    const { c, credentials, post } = await published(f);
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [] });
    expect(f.requests.some((r) => r.path === '/api/v1/accounts/verify_credentials')).toBe(false);
  });

  test('ours is by account id: a status of our account is ours, another account with our username is not', async () => {
    const f = await fake();
    const { c, credentials, post } = await published(f);
    const mine = f.reply(post.platformPostId, person(f, '1', 'user'), 'A note of our own');
    const namesake = f.reply(post.platformPostId, person(f, '99', 'user', 'other.example'), 'Same name, other account');
    const read = await c.readComments!(credentials, post);
    expect(read.comments.map((x) => [x.platformCommentId, x.ours])).toEqual([
      [mine.id, true],
      [namesake.id, false],
    ]);
  });

  test('a comment removed takes what answers it out of the conversation', async () => {
    const f = await fake();
    const { c, credentials, post } = await published(f);
    const alice = person(f, '7', 'alice');
    const hers = f.reply(post.platformPostId, alice, 'Hi');
    f.reply(hers.id, person(f, '8', 'bob'), 'Hi Alice');
    const kept = f.reply(post.platformPostId, alice, 'Still here');
    f.remove(hers.id);
    expect((await c.readComments!(credentials, post)).comments.map((x) => x.platformCommentId)).toEqual([kept.id]);
  });

  test('a post the instance no longer has is gone; a refused token is reauth', async () => {
    const f = await fake();
    const { c, credentials, post } = await published(f);
    f.remove(post.platformPostId);
    expect(await c.readComments!(credentials, post)).toEqual({ comments: [], gone: true });

    const again = await published(f);
    f.validTokens.delete('good-token');
    const refused = await c.readComments!(credentials, again.post).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PlatformError);
    expect((refused as PlatformError).kind).toBe('reauth');
  });

  test('an instance answering 503 is a transient failure with its Retry-After', async () => {
    const f = await fake();
    const { credentials, post } = await published(f);
    const flaky = createMastodonConnector({
      timeoutMs: 2_000,
      outbound: { allowPrivate: true },
      fetch: (async () =>
        new Response(JSON.stringify({ error: 'Service Unavailable' }), {
          status: 503,
          headers: { 'retry-after': '30', 'content-type': 'application/json' },
        })) as unknown as typeof fetch,
    });
    const err = (await flaky.readComments!(credentials, post).catch((e: unknown) => e)) as PlatformError;
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.kind).toBe('transient');
    expect(err.opts.retryAfterMs).toBe(30_000);
  });
});
