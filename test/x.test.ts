import { describe, expect, test } from 'bun:test';
import { createXConnector, type XConnectorOptions } from '../platforms/x.ts';
import { PlatformError, type MediaRef, type PublishRequest } from '../platforms/types.ts';
import { startFakeX, type FakeX, xRequest } from './fakes/x.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeX);

function connector(f: FakeX | string, over: XConnectorOptions = {}) {
  const url = typeof f === 'string' ? f : f.url;
  const oauth = typeof f === 'string' ? undefined : { clientId: f.clientId, clientSecret: f.clientSecret ?? undefined };
  return createXConnector({
    baseUrl: url,
    timeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
    oauth,
    ...over,
  });
}

const request = xRequest;

let png: Uint8Array;
async function pngBytes(): Promise<Uint8Array> {
  png ??= new Uint8Array(
    await (await import('sharp'))
      .default({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
      .png()
      .toBuffer(),
  );
  return png;
}

async function image(id: string, altText: string | null = null): Promise<MediaRef> {
  const bytes = await pngBytes();
  return { id, type: 'image', mimeType: 'image/png', fileName: `${id}.png`, altText, read: async () => bytes };
}

function video(id: string, size = 10): MediaRef {
  const bytes = new Uint8Array(size).map((_, i) => i % 251);
  return { id, type: 'video', mimeType: 'video/mp4', fileName: `${id}.mp4`, read: async () => bytes };
}

const routes = (f: FakeX) => f.requests.map((r) => `${r.method} ${r.path}`);

describe('X publish', () => {
  test('text post: POST /2/tweets with the text, returns the id and the status url', async () => {
    const f = await fake();
    const result = await connector(f).publish(request());

    expect(f.tweets).toHaveLength(1);
    const t = f.tweets[0]!;
    expect(t).toMatchObject({ text: 'Hello from Postpilot', mediaIds: [] });
    expect(result).toEqual({ platformPostId: t.id, url: `https://x.com/i/web/status/${t.id}` });
    expect(f.requests[0]!.authorization).toBe('Bearer good-token');
  });

  test('url uses the username when the channel stored one', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ credentials: { accessToken: 'good-token', username: 'postpilot_test' } }));
    expect(result.url).toBe(`https://x.com/postpilot_test/status/${f.tweets[0]!.id}`);
  });

  test('two images: initialize → append → finalize each, alt text via metadata, attached in order', async () => {
    const f = await fake();
    const bytes = await pngBytes();
    await connector(f).publish(request({ media: [await image('a', 'A red square'), await image('b')] }));

    const [a, b] = f.media;
    expect(routes(f)).toEqual([
      'POST /2/media/upload/initialize',
      `POST /2/media/upload/${a!.id}/append`,
      `POST /2/media/upload/${a!.id}/finalize`,
      'POST /2/media/metadata',
      'POST /2/media/upload/initialize',
      `POST /2/media/upload/${b!.id}/append`,
      `POST /2/media/upload/${b!.id}/finalize`,
      'POST /2/tweets',
    ]);
    expect(a).toMatchObject({ mediaType: 'image/png', category: 'tweet_image', totalBytes: bytes.byteLength, altText: 'A red square' });
    expect(b!.altText).toBeNull();
    expect(f.tweets[0]!.mediaIds).toEqual([a!.id, b!.id]);
  });

  test('video: appended in segments, STATUS polled until succeeded, no alt text call', async () => {
    const f = await fake({ processingPolls: 2 });
    await connector(f, { chunkBytes: 4 }).publish(request({ text: 'A clip', media: [{ ...video('v', 10), altText: 'ignored' }] }));

    const m = f.media[0]!;
    expect(m).toMatchObject({ category: 'tweet_video', mediaType: 'video/mp4', totalBytes: 10, state: 'succeeded' });
    expect([...m.segments.entries()]).toEqual([
      [0, 4],
      [1, 4],
      [2, 2],
    ]);
    expect(f.count('status')).toBe(3);
    expect(f.count('metadata')).toBe(0);
    const status = f.requests.find((r) => r.path === '/2/media/upload')!;
    expect(new URLSearchParams(status.search).get('command')).toBe('STATUS');
    expect(f.tweets[0]!.mediaIds).toEqual([m.id]);
  });

  test('GIF is uploaded as tweet_gif', async () => {
    const f = await fake();
    const gif: MediaRef = {
      id: 'g',
      type: 'gif',
      mimeType: 'image/gif',
      fileName: 'g.gif',
      read: async () => new Uint8Array([71, 73, 70, 56, 57, 97]),
    };
    await connector(f).publish(request({ media: [gif] }));
    expect(f.media[0]!.category).toBe('tweet_gif');
    expect(f.tweets).toHaveLength(1);
  });

  test('video processing failure → permanent with X message, no post', async () => {
    const f = await fake({ failProcessing: 'Unsupported video format' });
    const err = await failure(connector(f).publish(request({ media: [video('v')] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('Unsupported video format');
    expect(f.tweets).toHaveLength(0);
  });

  test('video still processing past pollTimeoutMs → transient', async () => {
    const f = await fake({ processingPolls: 10_000 });
    const err = await failure(connector(f, { pollTimeoutMs: 60 }).publish(request({ media: [video('v')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('still processing');
  });

  test('a document attachment is refused before anything is uploaded', async () => {
    const f = await fake();
    const doc: MediaRef = {
      id: 'd',
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'd.pdf',
      read: async () => new Uint8Array(3),
    };
    const err = await failure(connector(f).publish(request({ media: [await image('a'), doc] })));
    expect(err.kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });
});

describe('X error classes', () => {
  test('revoked token (401) → reauth with X message', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'revoked' } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts.status).toBe(401);
    expect(err.message).toBe('X 401: Unauthorized');
  });

  test('expired token on media upload → reauth before any post', async () => {
    const f = await fake();
    f.validTokens.delete('good-token');
    const err = await failure(connector(f).publish(request({ media: [await image('a')] })));
    expect(err.kind).toBe('reauth');
    expect(routes(f)).toEqual(['POST /2/media/upload/initialize']);
  });

  test('missing accessToken → reauth without a request', async () => {
    const f = await fake();
    expect((await failure(connector(f).publish(request({ credentials: {} })))).kind).toBe('reauth');
    expect(f.requests).toHaveLength(0);
  });

  test('app-only token (403 unsupported-authentication) → reauth', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 403,
      body: {
        title: 'Unsupported Authentication',
        detail:
          'Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint.  Supported authentication types are [OAuth 1.0a User Context, OAuth 2.0 User Context].',
        type: 'https://api.twitter.com/2/problems/unsupported-authentication',
        status: 403,
      },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('https://api.twitter.com/2/problems/unsupported-authentication');
  });

  test('duplicate text (403) → permanent with X message', async () => {
    const f = await fake();
    const c = connector(f);
    await c.publish(request());
    const err = await failure(c.publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.opts.status).toBe(403);
    expect(err.message).toBe('X 403: You are not allowed to create a Tweet with duplicate content.');
    expect(f.tweets).toHaveLength(1);
  });

  test('invalid request (400) → permanent with detail and the field errors', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 400,
      body: {
        errors: [{ parameters: { 'media.media_ids': ['1'] }, message: 'Your media IDs are invalid.' }],
        title: 'Invalid Request',
        detail: 'One or more parameters to your request was invalid.',
        type: 'https://api.twitter.com/2/problems/invalid-request',
      },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('X 400: One or more parameters to your request was invalid. (Your media IDs are invalid.)');
    expect(err.opts.platformCode).toBe('https://api.twitter.com/2/problems/invalid-request');
  });

  test('credits depleted (402) → permanent', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 402,
      body: {
        title: 'CreditsDepleted',
        detail: 'Your enrolled account does not have any credits to fulfill this request.',
        type: 'https://api.twitter.com/2/problems/credits',
        status: 402,
      },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('does not have any credits');
  });

  test('429 with x-rate-limit-reset (epoch seconds) → transient, retryAfterMs until the reset', async () => {
    const f = await fake();
    const reset = Math.floor(Date.now() / 1000) + 120;
    f.failNext(1, {
      status: 429,
      body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
      headers: { 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('X 429: Too Many Requests');
    expect(err.opts.retryAfterMs).toBeGreaterThan(115_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  test('429 with the 24-hour user cap exhausted → waits for that reset, not the 15-minute one', async () => {
    const f = await fake();
    const now = Math.floor(Date.now() / 1000);
    f.failNext(1, {
      status: 429,
      body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
      headers: {
        'x-rate-limit-reset': String(now + 60),
        'x-user-limit-24hour-limit': '17',
        'x-user-limit-24hour-remaining': '0',
        'x-user-limit-24hour-reset': String(now + 36_000),
      },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.opts.retryAfterMs).toBeGreaterThan(35_990_000);
  });

  test('429 with Retry-After → retryAfterMs from it', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { title: 'Too Many Requests', detail: 'Too Many Requests', status: 429 },
      headers: { 'Retry-After': '9' },
    });
    expect((await failure(connector(f).publish(request()))).opts.retryAfterMs).toBe(9000);
  });

  test('503 → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('X 503: Service Unavailable');
  });

  test('5xx on a media append → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: { title: 'Internal Error', detail: 'Internal Error', status: 500 } }, 'append');
    expect((await failure(connector(f).publish(request({ media: [await image('a')] })))).kind).toBe('transient');
    expect(f.tweets).toHaveLength(0);
  });

  test('hang → transient after the request timeout; network error → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(f, { timeoutMs: 300 }).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');

    const closed = `http://127.0.0.1:${await freePort()}`;
    expect((await failure(connector(closed).publish(request()))).kind).toBe('transient');
  });
});

describe('X no double post (findPublished)', () => {
  test('an accepted post whose answer was lost is found on the retry instead of posted again', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const c = connector(f, { timeoutMs: 300 });
    const req = request({ text: 'Launch day & <everything> works: https://example.com/launch' });
    expect((await failure(c.publish(req))).kind).toBe('transient');
    expect(f.tweets).toHaveLength(1);

    const retry = { ...req, attempt: 2 };
    const found = await c.findPublished!(retry);
    expect(found).toEqual({
      platformPostId: f.tweets[0]!.id,
      url: `https://x.com/i/web/status/${f.tweets[0]!.id}`,
      publishedAt: f.tweets[0]!.createdAt,
    });
    expect(f.tweets).toHaveLength(1);
    const timeline = f.requests.find((r) => r.path.endsWith('/tweets') && r.method === 'GET')!;
    expect(timeline.path).toBe(`/2/users/${f.user.id}/tweets`);
    const q = new URLSearchParams(timeline.search);
    expect(q.get('exclude')).toBe('retweets,replies');
    expect(q.get('tweet.fields')).toContain('attachments');
  });

  test('matches a post with media (X appends a t.co link to its text) by text and attachment count', async () => {
    const f = await fake();
    const c = connector(f);
    const req = request({ text: 'With a picture', media: [await image('a')] });
    const first = await c.publish(req);
    expect(await c.findPublished!({ ...req, attempt: 2 })).toMatchObject({ platformPostId: first.platformPostId });
    // Same text without the picture is a different post.
    expect(await c.findPublished!({ ...req, media: [], attempt: 2 })).toBeNull();
  });

  test('nothing there (or only older than lookbackMs) → null, so the retry posts', async () => {
    const f = await fake();
    f.addTweet('Hello from Postpilot', { createdAt: new Date(Date.now() - 3 * 24 * 3600 * 1000) });
    f.addTweet('Something else');
    const c = connector(f);
    expect(await c.findPublished!(request({ attempt: 2 }))).toBeNull();
  });

  test('uses credentials.userId when present (no /2/users/me call)', async () => {
    const f = await fake();
    f.addTweet('Hello from Postpilot');
    const found = await connector(f).findPublished!(request({ credentials: { accessToken: 'good-token', userId: f.user.id } }));
    expect(found?.platformPostId).toBe(f.tweets[0]!.id);
    expect(f.count('me')).toBe(0);
  });

  test('a rate-limited lookup is transient (the retry waits rather than posting blind)', async () => {
    const f = await fake();
    const reset = Math.floor(Date.now() / 1000) + 600;
    f.failNext(
      1,
      {
        status: 429,
        body: { title: 'Too Many Requests', detail: 'Too Many Requests', status: 429 },
        headers: { 'x-rate-limit-reset': String(reset) },
      },
      'timeline',
    );
    const err = await failure(connector(f).findPublished!(request({ attempt: 2 })));
    expect(err.kind).toBe('transient');
    expect(err.opts.retryAfterMs).toBeGreaterThan(590_000);
  });
});

describe('X replies', () => {
  const ref = (t: { id: string }) => ({ platformPostId: t.id, url: `https://x.com/i/web/status/${t.id}` });

  test('a reply names its parent: POST /2/tweets with reply.in_reply_to_tweet_id, shown in its conversation', async () => {
    const f = await fake();
    const root = f.addTweet('The first post');
    const result = await connector(f).publish(
      request({ text: 'The second item', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: ref(root), parent: ref(root) } }),
    );

    const reply = f.tweets.find((t) => t.id === result.platformPostId)!;
    expect(reply).toMatchObject({ text: 'The second item', inReplyTo: root.id, conversationId: root.id });
    const res = await fetch(`${f.url}/2/tweets?ids=${reply.id}&tweet.fields=referenced_tweets,conversation_id`, {
      headers: { Authorization: 'Bearer good-token' },
    });
    expect(((await res.json()) as { data: unknown[] }).data[0]).toMatchObject({
      referenced_tweets: [{ type: 'replied_to', id: root.id }],
      conversation_id: root.id,
    });
  });

  test('a reply to a post X does not show (deleted, or not visible yet) → 403 transient with X message, asked once, nothing posted', async () => {
    const f = await fake();
    const gone = { platformPostId: '1990000000000009999', url: 'https://x.com/i/web/status/1990000000000009999' };
    const err = await failure(connector(f).publish(request({ text: 'Orphan', replyTo: { root: gone, parent: gone } })));
    // Transient: the workflow's retry policy asks again with its backoff; a parent really gone
    // fails the channel once the attempts run out.
    expect(err.kind).toBe('transient');
    expect(err.opts.status).toBe(403);
    expect(err.opts.retryAfterMs).toBeUndefined();
    expect(err.message).toBe(
      'X 403: You attempted to reply to a Tweet that is deleted or not visible to you. (the post replied to may not be visible yet; asked again later)',
    );
    expect(f.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets')).toHaveLength(1);
    expect(f.tweets).toHaveLength(0);
  });

  test('the same 403 on a post that answers nothing, or another 403 on a reply, stays permanent', async () => {
    const f = await fake();
    const unseen = {
      title: 'Forbidden',
      type: 'about:blank',
      status: 403,
      detail: 'You attempted to reply to a Tweet that is deleted or not visible to you.',
    };
    f.failNext(1, { status: 403, body: unseen }, 'tweets');
    expect((await failure(connector(f).publish(request()))).kind).toBe('permanent');

    const c = connector(f);
    const parent = await c.publish(request({ text: 'Just posted', idempotencyKey: 'post-2:channel-1' }));
    const duplicate = {
      title: 'Forbidden',
      type: 'about:blank',
      status: 403,
      detail: 'You are not allowed to create a Tweet with duplicate content.',
    };
    f.failNext(1, { status: 403, body: duplicate }, 'tweets');
    const err = await failure(
      c.publish(request({ text: 'Right after', idempotencyKey: 'post-2:channel-1:1', replyTo: { root: parent, parent } })),
    );
    expect([err.kind, err.opts.status]).toEqual(['permanent', 403]);
  });

  test('a reply refused once as if its parent were not visible (a post made seconds before): the retry posts it once', async () => {
    const f = await fake();
    const c = connector(f);
    const parent = await c.publish(request({ text: 'Just posted', idempotencyKey: 'post-2:channel-1' }));
    f.failNext(
      1,
      {
        status: 403,
        body: {
          title: 'Forbidden',
          type: 'about:blank',
          status: 403,
          detail: 'You attempted to reply to a Tweet that is deleted or not visible to you.',
        },
      },
      'tweets',
    );
    const req = request({ text: 'Right after', idempotencyKey: 'post-2:channel-1:1', replyTo: { root: parent, parent } });
    expect((await failure(c.publish(req))).kind).toBe('transient');
    // What the workflow's retry does: look before sending again, then send.
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();
    const reply = await c.publish({ ...req, attempt: 2 });
    expect(f.tweets.filter((t) => t.text === 'Right after')).toEqual([
      expect.objectContaining({ id: reply.platformPostId, inReplyTo: parent.platformPostId }),
    ]);
  });

  test('a thread of 3: each item answers the one before, all in the first post’s conversation', async () => {
    const f = await fake();
    const c = connector(f);
    const first = await c.publish(request({ text: 'Thread 1/3', idempotencyKey: 'post-1:channel-1' }));
    const second = await c.publish(
      request({ text: 'Thread 2/3', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: first, parent: first } }),
    );
    const third = await c.publish(
      request({ text: 'Thread 3/3', idempotencyKey: 'post-1:channel-1:3', replyTo: { root: first, parent: second } }),
    );

    expect(f.tweets.map((t) => [t.id, t.text, t.inReplyTo, t.conversationId])).toEqual([
      [first.platformPostId, 'Thread 1/3', null, first.platformPostId],
      [second.platformPostId, 'Thread 2/3', first.platformPostId, first.platformPostId],
      [third.platformPostId, 'Thread 3/3', second.platformPostId, first.platformPostId],
    ]);
  });

  test('findPublished: a reply accepted whose answer was lost is found (replies listed, referenced_tweets asked)', async () => {
    const f = await fake();
    const c = connector(f, { timeoutMs: 300 });
    const root = f.addTweet('The first post');
    const req = request({ text: 'The second item', idempotencyKey: 'post-1:channel-1:2', replyTo: { root: ref(root), parent: ref(root) } });
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const reply = f.tweets.find((t) => t.inReplyTo === root.id)!;

    expect(await c.findPublished!({ ...req, attempt: 2 })).toEqual({
      platformPostId: reply.id,
      url: `https://x.com/i/web/status/${reply.id}`,
      publishedAt: reply.createdAt,
    });
    expect(f.tweets).toHaveLength(2);
    const q = new URLSearchParams(f.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/tweets')).at(-1)!.search);
    expect(q.get('exclude')).toBe('retweets');
    expect(q.get('tweet.fields')).toContain('referenced_tweets');
  });

  test('findPublished: null when the reply is not there — the same text as a post, or answering another parent, is not it', async () => {
    const f = await fake();
    const c = connector(f);
    const root = f.addTweet('The first post');
    const other = f.addTweet('Another post');
    const req = request({ text: 'The second item', attempt: 2, replyTo: { root: ref(root), parent: ref(root) } });
    expect(await c.findPublished!(req)).toBeNull();

    f.addTweet('The second item');
    f.addTweet('The second item', { inReplyTo: other });
    expect(await c.findPublished!(req)).toBeNull();
    // Nor is a reply taken for the post itself.
    expect(await c.findPublished!(request({ text: 'The second item', attempt: 2 }))).toMatchObject({
      platformPostId: f.tweets.find((t) => t.text === 'The second item' && !t.inReplyTo)!.id,
    });
  });

  test('the fake refuses a malformed reply the way X does', async () => {
    const f = await fake();
    const root = f.addTweet('The first post');
    const post = (body: unknown) =>
      fetch(`${f.url}/2/tweets`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const messages = async (r: Response) => ((await r.json()) as { errors: { message: string }[] }).errors.map((e) => e.message);
    const missing = await post({ text: 'a', reply: {} });
    expect(missing.status).toBe(400);
    expect(await messages(missing)).toEqual(['$.reply.in_reply_to_tweet_id: is missing but it is required']);
    const numeric = await post({ text: 'b', reply: { in_reply_to_tweet_id: Number(root.id) } });
    expect(numeric.status).toBe(400);
    const flat = await post({ text: 'c', in_reply_to_tweet_id: root.id });
    expect(await messages(flat)).toEqual([
      '$.in_reply_to_tweet_id: is not defined in the schema and the schema does not allow additional properties',
    ]);
    expect(f.tweets).toHaveLength(1);
  });
});

describe('X token refresh', () => {
  test('refresh with Basic client auth: new access token, expiresAt, rotated refresh token', async () => {
    const f = await fake();
    const before = Date.now();
    const fresh = await connector(f).refreshCredentials!({
      accessToken: 'old',
      refreshToken: 'refresh-1',
      expiresAt: new Date().toISOString(),
    });
    expect(fresh).toEqual({ accessToken: 'access-2', refreshToken: 'refresh-2', expiresAt: expect.any(String) });
    const exp = Date.parse(fresh.expiresAt as string);
    expect(exp).toBeGreaterThanOrEqual(before + 7_200_000 - 1000);
    expect(exp).toBeLessThanOrEqual(Date.now() + 7_200_000);

    const tokenReq = f.requests.find((r) => r.path === '/2/oauth2/token')!;
    expect(tokenReq.authorization).toBe(`Basic ${Buffer.from(`${f.clientId}:${f.clientSecret}`).toString('base64')}`);
    // The new token works; the rotated-out refresh token does not.
    await connector(f).publish(request({ credentials: { accessToken: 'access-2' } }));
    expect(f.validRefreshTokens.has('refresh-1')).toBe(false);
  });

  test('rotation kept: refreshing twice uses the rotated token each time', async () => {
    const f = await fake();
    const c = connector(f);
    let creds: Record<string, unknown> = { accessToken: 'good-token', refreshToken: 'refresh-1' };
    creds = { ...creds, ...(await c.refreshCredentials!(creds)) };
    creds = { ...creds, ...(await c.refreshCredentials!(creds)) };
    expect(creds).toMatchObject({ accessToken: 'access-3', refreshToken: 'refresh-3' });
  });

  test('a used (rotated-out) refresh token → reauth with X message', async () => {
    const f = await fake();
    const c = connector(f);
    await c.refreshCredentials!({ refreshToken: 'refresh-1' });
    const err = await failure(c.refreshCredentials!({ refreshToken: 'refresh-1' }));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('X 400: Value passed for the token was invalid.');
  });

  test('public client: no Basic header, client_id in the body', async () => {
    const f = await fake({ clientSecret: null });
    const fresh = await connector(f).refreshCredentials!({ refreshToken: 'refresh-1' });
    expect(fresh.accessToken).toBe('access-2');
    expect(f.requests.find((r) => r.path === '/2/oauth2/token')!.authorization).toBeNull();
  });

  test('wrong client secret → permanent (the app, not the user, must fix it)', async () => {
    const f = await fake();
    const err = await failure(
      connector(f, { oauth: { clientId: f.clientId, clientSecret: 'wrong' } }).refreshCredentials!({ refreshToken: 'refresh-1' }),
    );
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('X 401: Missing valid authorization header');
    expect(f.validRefreshTokens.has('refresh-1')).toBe(true);
  });

  test('no refresh token → reauth; no client configured → permanent', async () => {
    const f = await fake();
    expect((await failure(connector(f).refreshCredentials!({ accessToken: 'x' }))).kind).toBe('reauth');
    expect((await failure(connector(f, { oauth: undefined }).refreshCredentials!({ refreshToken: 'refresh-1' }))).kind).toBe('permanent');
  });

  test('token endpoint 503 → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: { error: 'temporarily_unavailable' } }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'refresh-1' }))).kind).toBe('transient');
  });
});

describe('fake X contract', () => {
  test('rejects unknown tweet fields and numeric media ids the way X does', async () => {
    const f = await fake();
    const post = (body: unknown) =>
      fetch(`${f.url}/2/tweets`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const a = await post({ text: 'x', status: 'y' });
    expect(a.status).toBe(400);
    expect(((await a.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('$.status: is not defined');
    const b = await post({ text: 'x', media: { media_ids: [123] } });
    expect(b.status).toBe(400);
    expect(f.tweets).toHaveLength(0);
  });

  test('finalize with missing bytes fails; a media id not yet processed cannot be attached', async () => {
    const f = await fake();
    const h = { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' };
    const init = await fetch(`${f.url}/2/media/upload/initialize`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ media_type: 'video/mp4', total_bytes: 10, media_category: 'tweet_video' }),
    });
    const { data } = (await init.json()) as { data: { id: string } };
    expect((await fetch(`${f.url}/2/media/upload/${data.id}/finalize`, { method: 'POST', headers: h })).status).toBe(400);
    const tweet = await fetch(`${f.url}/2/tweets`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ text: 'v', media: { media_ids: [data.id] } }),
    });
    expect(tweet.status).toBe(400);
    expect(((await tweet.json()) as { errors: { message: string }[] }).errors[0]!.message).toBe('Your media IDs are invalid.');
  });
});

describe('X metrics', () => {
  test('public_metrics of up to 100 posts in one GET /2/tweets; a post X no longer has is left out', async () => {
    const f = await fake();
    const c = connector(f);
    const a = f.addTweet('first');
    const b = f.addTweet('second');
    Object.assign(a.metrics, { like_count: 7, reply_count: 2, retweet_count: 3, quote_count: 1, bookmark_count: 4, impression_count: 900 });
    const before = f.count('lookup');
    const read = await c.readMetrics!({ accessToken: 'good-token' }, [a.id, b.id, '1234567890123']);
    expect(f.count('lookup') - before).toBe(1);
    expect(c.metricsBatch).toBe(100);
    expect(read).toEqual({
      [a.id]: { likes: 7, replies: 2, reposts: 3, quotes: 1, saves: 4, impressions: 900 },
      [b.id]: { likes: 0, replies: 0, reposts: 0, quotes: 0, saves: 0, impressions: 0 },
    });
  });

  test('a dead token is reauth, a rate limit transient with its reset', async () => {
    const f = await fake();
    const c = connector(f);
    const t = f.addTweet('x');
    const dead = await c.readMetrics!({ accessToken: 'dead' }, [t.id]).catch((e) => e);
    expect(dead).toBeInstanceOf(PlatformError);
    expect(dead.kind).toBe('reauth');
    f.failNext(
      1,
      {
        status: 429,
        body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
        headers: { 'retry-after': '30' },
      },
      'lookup',
    );
    const limited = await c.readMetrics!({ accessToken: 'good-token' }, [t.id]).catch((e) => e);
    expect(limited.kind).toBe('transient');
    expect(limited.opts.retryAfterMs).toBe(30_000);
  });
});

describe('X options', () => {
  const poll = { options: ['Red', 'Blue', 'Green'], durationMinutes: 1440 };

  test('replySettings and poll reach the post (reply_settings, poll.options, poll.duration_minutes)', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: { replySettings: 'mentionedUsers', poll } }));
    expect(f.tweets[0]).toMatchObject({
      replySettings: 'mentionedUsers',
      poll: { options: ['Red', 'Blue', 'Green'], durationMinutes: 1440 },
    });
  });

  test('without options the post has neither', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: {} }));
    expect(f.tweets[0]).toMatchObject({ replySettings: null, poll: null });
  });

  test('X’s schema refusals (400) → permanent: reply settings, poll size, option length, duration', async () => {
    const f = await fake();
    const cases: [unknown, string][] = [
      [{ replySettings: 'everyone' }, '$.reply_settings'],
      [{ poll: { options: ['Only one'], durationMinutes: 60 } }, '$.poll.options: must have between 2 and 4 items'],
      [{ poll: { options: ['a', 'b', 'c', 'd', 'e'], durationMinutes: 60 } }, '$.poll.options: must have between 2 and 4 items'],
      [{ poll: { options: ['Red', 'x'.repeat(26)], durationMinutes: 60 } }, '$.poll.options[1]'],
      [{ poll: { options: ['Red', 'Blue'], durationMinutes: 4 } }, '$.poll.duration_minutes'],
      [{ poll: { options: ['Red', 'Blue'], durationMinutes: 10081 } }, '$.poll.duration_minutes'],
    ];
    for (const [options, field] of cases) {
      const err = await failure(connector(f).publish(request({ options: options as PublishRequest['options'] })));
      expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400 } });
      expect(err.message).toContain(field);
    }
    expect(f.tweets).toHaveLength(0);
  });

  test('a poll with media → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ media: [await image('img-1')], options: { poll } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400 } });
    expect(err.message).toContain('poll.options');
    expect(f.tweets).toHaveLength(0);
  });
});
