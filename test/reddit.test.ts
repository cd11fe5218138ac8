import { describe, expect, test } from 'bun:test';
import { createRedditConnector, type RedditConnectorOptions } from '../platforms/reddit.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { startFakeReddit, type FakeReddit, redditRequest } from './fakes/reddit.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';
import { failureCodeOf } from '../platforms/failure-class.ts';

const fake = perTest(startFakeReddit);

const UA = 'server:postpilot-test:v1 (by /u/poster)';
const oauth = { clientId: 'client-id', clientSecret: 'client-secret' };

function connector(f: { url: string }, over: Partial<RedditConnectorOptions> = {}) {
  return createRedditConnector({
    baseUrl: f.url,
    authBaseUrl: f.url,
    userAgent: UA,
    oauth,
    timeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
    videoPoster: async () => ({ bytes: await png(), mimeType: 'image/png', fileName: 'poster.png' }),
    ...over,
  });
}

const request = redditRequest;

async function png(color = '#f00'): Promise<Uint8Array> {
  const sharp = (await import('sharp')).default;
  return new Uint8Array(
    await sharp({ create: { width: 8, height: 8, channels: 3, background: color } })
      .png()
      .toBuffer(),
  );
}

function image(id: string, altText = `alt ${id}`, mimeType = 'image/png'): MediaRef {
  return {
    id,
    type: 'image',
    mimeType,
    fileName: `${id}.${mimeType.split('/')[1]}`,
    altText,
    read: async () => {
      if (mimeType === 'image/webp') {
        const sharp = (await import('sharp')).default;
        return new Uint8Array(
          await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0f0' } })
            .webp()
            .toBuffer(),
        );
      }
      return png();
    },
  };
}

const video = (bytes: Uint8Array = new Uint8Array([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 1, 2, 3])): MediaRef => ({
  id: 'vid',
  type: 'video',
  mimeType: 'video/mp4',
  fileName: 'clip.mp4',
  read: async () => bytes,
});

const paths = (f: FakeReddit) => f.requests.map((r) => `${r.method} ${r.path}`);

describe('Reddit publish', () => {
  test('text post: POST /api/submit kind=self with api_type=json, the descriptive User-Agent and the bearer token', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ reddit: { subreddit: 'r/Test', title: 'Hello Reddit' } }));

    expect(f.posts).toHaveLength(1);
    const p = f.posts[0]!;
    expect(p).toMatchObject({ kind: 'self', subreddit: 'test', title: 'Hello Reddit', text: 'Body of the post, in **markdown**.' });
    expect(result).toEqual({ platformPostId: p.name, url: `https://www.reddit.com${p.permalink}` });
    expect(p.name).toMatch(/^t3_[a-z0-9]+$/);
    expect(f.requests[0]).toMatchObject({ path: '/api/submit', userAgent: UA, authorization: 'Bearer good-token' });
  });

  test('image: lease, upload to the bucket (fields in order, file last, no token), submit kind=image, found in the submissions', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ media: [image('img-a')] }));

    expect(f.uploads).toHaveLength(1);
    const up = f.uploads[0]!;
    expect(up).toMatchObject({ mimeType: 'image/png', fileName: 'img-a.png' });
    expect(up.fieldOrder.at(-1)).toBe('file');
    expect(f.requests.find((r) => r.path === '/media-bucket')!.authorization).toBeNull();

    const p = f.posts[0]!;
    expect(p).toMatchObject({ kind: 'image', url: up.url, title: 'A title for r/test', text: 'Body of the post, in **markdown**.' });
    expect(result.platformPostId).toBe(p.name);
    expect(result.url).toBe(`https://www.reddit.com${p.permalink}`);
    expect(result.publishedAt).toBe(new Date(p.createdUtc * 1000).toISOString());
    // Looked up the account (no username in the credentials), listed before and until the post appeared.
    expect(paths(f)).toEqual([
      'POST /api/media/asset.json',
      'POST /media-bucket',
      'GET /api/v1/me',
      'GET /user/poster/submitted',
      'POST /api/submit',
      'GET /user/poster/submitted',
      'GET /user/poster/submitted',
    ]);
  });

  test('credentials.username skips /api/v1/me; WebP is converted to JPEG for the lease', async () => {
    const f = await fake({ mediaPendingPolls: 0 });
    await connector(f).publish(
      request({ media: [image('pic', 'alt', 'image/webp')], credentials: { accessToken: 'good-token', username: 'poster' } }),
    );
    expect(paths(f)).not.toContain('GET /api/v1/me');
    expect(f.uploads[0]).toMatchObject({ mimeType: 'image/jpeg', fileName: 'pic.jpg' });
  });

  test('two images → gallery via /api/submit_gallery_post.json with the alt texts as captions', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ media: [image('a', 'First'), image('b', 'Second')] }));
    const p = f.posts[0]!;
    expect(p.kind).toBe('gallery');
    expect(p.galleryItems).toEqual(f.uploads.map((u, i) => ({ media_id: u.assetId, caption: ['First', 'Second'][i]! })));
    expect(p.text).toBe('Body of the post, in **markdown**.');
    expect(result).toEqual({ platformPostId: p.name, url: `https://www.reddit.com/gallery/${p.id}` });
  });

  test('video: video and poster uploaded, submit kind=video with video_poster_url', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ media: [video()] }));
    expect(f.uploads.map((u) => u.mimeType)).toEqual(['video/mp4', 'image/png']);
    const p = f.posts[0]!;
    expect(p).toMatchObject({ kind: 'video', url: f.uploads[0]!.url, videoPosterUrl: f.uploads[1]!.url });
    expect(result.platformPostId).toBe(p.name);
  });

  test('a poster of a type Reddit does not lease → permanent media refusal before any lease; a WebP image is sent as JPEG', async () => {
    const f = await fake();
    const bmp = async () => ({ bytes: new Uint8Array([66, 77, 0, 0]), mimeType: 'image/bmp', fileName: 'poster.bmp' });
    const err = await failure(connector(f, { videoPoster: bmp }).publish(request({ media: [video()] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('poster.bmp is image/bmp');
    expect(failureCodeOf('REDDIT', err)).toBe('media_rejected');
    expect(f.uploads.map((u) => u.mimeType)).toEqual(['video/mp4']);
    expect(f.posts).toHaveLength(0);
    await connector(f).publish(request({ media: [image('w', 'Green', 'image/webp')] }));
    expect(f.uploads.at(-1)!.mimeType).toBe('image/jpeg');
  });

  test('video without a poster function: the first frame is read with ffmpeg', async () => {
    const { ffmpegPath, run } = await import('../media/exec.ts');
    const r = await run([
      await ffmpegPath(),
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'color=c=blue:s=16x16:d=0.2',
      '-pix_fmt',
      'yuv420p',
      '-f',
      'mp4',
      '-movflags',
      'frag_keyframe+empty_moov',
      '-',
    ]);
    expect(r.exitCode).toBe(0);
    const f = await fake();
    await connector(f, { videoPoster: undefined }).publish(request({ media: [video(r.stdout)] }));
    expect(f.uploads.map((u) => [u.mimeType, u.fileName])).toEqual([
      ['video/mp4', 'clip.mp4'],
      ['image/jpeg', 'poster.jpg'],
    ]);
  });

  test('a video with other media, or a document → permanent before any request', async () => {
    const f = await fake();
    expect((await failure(connector(f).publish(request({ media: [video(), image('a')] })))).kind).toBe('permanent');
    const doc: MediaRef = {
      id: 'd',
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'a.pdf',
      read: async () => new Uint8Array([1]),
    };
    expect((await failure(connector(f).publish(request({ media: [doc] })))).kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });

  test('missing reddit.subreddit/title → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ reddit: null })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('reddit.subreddit');
  });
});

describe('Reddit no double post (findPublished)', () => {
  test('an accepted submit whose answer was lost: the retry finds the post instead of sending again', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const c = connector(f, { timeoutMs: 300 });
    const lost = await failure(c.publish(request()));
    expect(lost.kind).toBe('transient');
    expect(f.posts).toHaveLength(1);

    const again = request({ attempt: 2 });
    const found = await c.findPublished!(again);
    expect(found).toEqual({
      platformPostId: f.posts[0]!.name,
      url: `https://www.reddit.com${f.posts[0]!.permalink}`,
      publishedAt: new Date(f.posts[0]!.createdUtc * 1000).toISOString(),
    });
    expect(f.posts).toHaveLength(1);
  });

  test('nothing posted → null; same title with another body, another subreddit or too old does not count', async () => {
    const f = await fake();
    const c = connector(f);
    expect(await c.findPublished!(request())).toBeNull();
    f.addPost({ subreddit: 'test', title: 'A title for r/test', text: 'a different body' });
    f.addPost({ subreddit: 'pics', title: 'A title for r/test', text: 'Body of the post, in **markdown**.' });
    f.addPost({
      subreddit: 'test',
      title: 'A title for r/test',
      text: 'Body of the post, in **markdown**.',
      createdUtc: Date.now() / 1000 - 3 * 86400,
    });
    expect(await c.findPublished!(request())).toBeNull();
  });

  test('a media post still processing past pollTimeoutMs → transient; the retry finds it once Reddit shows it', async () => {
    const f = await fake({ mediaPendingPolls: 1_000 });
    const c = connector(f, { pollTimeoutMs: 50 });
    const err = await failure(c.publish(request({ media: [image('a')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('not in u/poster');
    expect(await c.findPublished!(request({ media: [image('a')], attempt: 2 }))).toBeNull();

    f.posts[0]!.pendingPolls = 0;
    const found = await c.findPublished!(request({ media: [image('a')], attempt: 2 }));
    expect(found?.platformPostId).toBe(f.posts[0]!.name);
    expect(f.posts).toHaveLength(1);
  });
});

describe('Reddit error classes', () => {
  test('invalid token (401) → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'revoked' } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts.status).toBe(401);
    expect(err.message).toBe('Reddit 401: Unauthorized');
  });

  test('expired token on the media lease → reauth before anything is uploaded', async () => {
    const f = await fake();
    f.expireToken('good-token');
    const err = await failure(connector(f).publish(request({ media: [image('a')] })));
    expect(err.kind).toBe('reauth');
    expect(paths(f)).toEqual(['POST /api/media/asset.json']);
  });

  test('a token without the history scope (403 insufficient_scope) → reauth', async () => {
    const f = await fake();
    f.tokens.set('narrow', { user: 'poster', scopes: ['submit'] });
    const err = await failure(
      connector(f).publish(request({ media: [image('a')], credentials: { accessToken: 'narrow', username: 'poster' } })),
    );
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('insufficient_scope');
  });

  test('403 on the subreddit → permanent', async () => {
    const f = await fake();
    f.failNext(1, { status: 403, body: { message: 'Forbidden', error: 403 } });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Reddit 403: Forbidden');
  });

  test.each([
    ['nosuchsub', 'SUBREDDIT_NOEXIST', "Reddit SUBREDDIT_NOEXIST: that subreddit doesn't exist"],
    ['pics', 'NO_SELFS', "Reddit NO_SELFS: this subreddit doesn't allow text posts"],
    ['secretclub', 'SUBREDDIT_NOTALLOWED', "Reddit SUBREDDIT_NOTALLOWED: you aren't allowed to post there."],
  ])('r/%s → permanent %s with Reddit message', async (subreddit, code, message) => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ reddit: { subreddit, title: 't' } })));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe(code);
    expect(err.message).toBe(message);
    expect(f.posts).toHaveLength(0);
  });

  test('title over 300 characters → permanent TOO_LONG', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ reddit: { subreddit: 'test', title: 'x'.repeat(301) } })));
    expect(err).toMatchObject({ kind: 'permanent', message: 'Reddit TOO_LONG: this is too long (max: 300)' });
  });

  test('ALREADY_SUB → permanent', async () => {
    const f = await fake();
    f.failNext(1, { status: 200, body: { json: { errors: [['ALREADY_SUB', 'that link has already been submitted', 'url']] } } });
    const err = await failure(connector(f).publish(request()));
    expect(err).toMatchObject({ kind: 'permanent', message: 'Reddit ALREADY_SUB: that link has already been submitted' });
  });

  test('RATELIMIT "try again in 9 minutes" → transient, retryAfterMs 540000', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 200,
      body: { json: { errors: [['RATELIMIT', 'you are doing that too much. try again in 9 minutes.', 'ratelimit']] } },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ platformCode: 'RATELIMIT', retryAfterMs: 540_000 });
    expect(err.message).toBe('Reddit RATELIMIT: you are doing that too much. try again in 9 minutes.');
  });

  test('RATELIMIT in the newer wording ("Take a break for 30 seconds") → retryAfterMs 30000', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 200,
      body: {
        json: {
          errors: [['RATELIMIT', "Looks like you've been doing that a lot. Take a break for 30 seconds before trying again.", 'ratelimit']],
        },
      },
    });
    expect((await failure(connector(f).publish(request()))).opts.retryAfterMs).toBe(30_000);
  });

  test('429 with Retry-After → transient with retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, { status: 429, body: { message: 'Too Many Requests', error: 429 }, headers: { 'Retry-After': '12' } });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 12_000 });
    expect(err.message).toBe('Reddit 429: Too Many Requests');
  });

  test('429 with only X-Ratelimit-Reset (seconds) → retryAfterMs from it', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { message: 'Too Many Requests', error: 429 },
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '37' },
    });
    expect((await failure(connector(f).publish(request()))).opts.retryAfterMs).toBe(37_000);
  });

  test('5xx → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: { message: 'Service Unavailable', error: 503 } });
    const err = await failure(connector(f).publish(request()));
    expect(err).toMatchObject({ kind: 'transient', message: 'Reddit 503: Service Unavailable' });
  });

  test('bucket errors: EntityTooLarge → permanent with the S3 message; expired lease (403) → transient', async () => {
    const f = await fake();
    f.failNext(
      1,
      {
        status: 400,
        body: '<Error><Code>EntityTooLarge</Code><Message>Your proposed upload exceeds the maximum allowed size</Message></Error>',
      },
      'bucket',
    );
    const big = await failure(connector(f).publish(request({ media: [image('a')] })));
    expect(big.kind).toBe('permanent');
    expect(big.message).toContain('EntityTooLarge');

    f.failNext(
      1,
      { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy expired.</Message></Error>' },
      'bucket',
    );
    expect((await failure(connector(f).publish(request({ media: [image('a')] })))).kind).toBe('transient');
    expect(f.posts).toHaveLength(0);
  });

  test('hang → transient after the timeout; network error → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(f, { timeoutMs: 200 }).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 200 ms');

    const closed = { url: `http://127.0.0.1:${await freePort()}` };
    expect((await failure(connector(closed).publish(request()))).kind).toBe('transient');
  });

  test('the fake rejects a generic User-Agent the way Reddit throttles it', async () => {
    const f = await fake();
    const res = await fetch(`${f.url}/api/v1/me`, { headers: { Authorization: 'Bearer good-token' } });
    expect(res.status).toBe(429);
  });
});

describe('Reddit token refresh', () => {
  test('refresh_token grant with Basic client auth → new access token valid on the API; refresh token kept', async () => {
    const f = await fake();
    const c = connector(f);
    const fresh = await c.refreshCredentials!({ accessToken: 'old', refreshToken: 'refresh-1', expiresAt: new Date().toISOString() });
    expect(Object.keys(fresh).sort()).toEqual(['accessToken', 'expiresAt']);
    const left = Date.parse(fresh.expiresAt as string) - Date.now();
    expect(left).toBeGreaterThan(86_000_000);
    expect(left).toBeLessThanOrEqual(86_400_000);
    const req = f.requests.find((r) => r.path === '/api/v1/access_token')!;
    expect(req).toMatchObject({ authorization: `Basic ${btoa('client-id:client-secret')}`, userAgent: UA });

    await c.publish(request({ credentials: { ...fresh, refreshToken: 'refresh-1' } }));
    expect(f.posts).toHaveLength(1);
  });

  test('a rotated refresh token is returned so it is stored', async () => {
    const f = await fake({ rotateRefreshTokens: true });
    const fresh = await connector(f).refreshCredentials!({ refreshToken: 'refresh-1' });
    expect(fresh.refreshToken).toMatch(/^refresh-/);
    expect(fresh.refreshToken).not.toBe('refresh-1');
    expect(f.refreshTokens.has(fresh.refreshToken as string)).toBe(true);
  });

  test('rejected refresh token (200 {"error":"invalid_grant"}) → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).refreshCredentials!({ refreshToken: 'revoked' }));
    expect(err).toMatchObject({ kind: 'reauth', message: 'Reddit token refresh failed: invalid_grant' });
  });

  test('no refresh token → reauth; app credentials rejected (401) → permanent; no app credentials → permanent; 503 → transient', async () => {
    const f = await fake();
    expect((await failure(connector(f).refreshCredentials!({ accessToken: 'x' }))).kind).toBe('reauth');
    const badApp = await failure(
      connector(f, { oauth: { clientId: 'client-id', clientSecret: 'wrong' } }).refreshCredentials!({ refreshToken: 'refresh-1' }),
    );
    expect(badApp.kind).toBe('permanent');
    expect(badApp.message).toContain('REDDIT_CLIENT_SECRET');
    expect((await failure(connector(f, { oauth: undefined }).refreshCredentials!({ refreshToken: 'refresh-1' }))).kind).toBe('permanent');
    f.failNext(1, { status: 503, body: { message: 'Service Unavailable', error: 503 } }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'refresh-1' }))).kind).toBe('transient');
  });
});

describe('Reddit metrics', () => {
  test('GET /api/info for up to 100 fullnames: score as likes, comments as replies; a deleted post is left out', async () => {
    const f = await fake();
    const c = connector(f);
    const a = f.addPost({ subreddit: 'test', title: 'a', score: 42, numComments: 7 });
    const b = f.addPost({ subreddit: 'test', title: 'b', score: -3, numComments: 1 });
    const read = await c.readMetrics!({ accessToken: 'good-token' }, [a.name, b.name, 't3_gone']);
    expect(c.metricsBatch).toBe(100);
    // A score below zero is no count of likes.
    expect(read).toEqual({ [a.name]: { likes: 42, replies: 7 }, [b.name]: { replies: 1 } });
  });

  test('a token without the read scope is reauth: the channel must be connected again', async () => {
    const f = await fake();
    f.tokens.set('no-read', { user: 'poster', scopes: ['submit', 'identity', 'history'] });
    const err = await connector(f).readMetrics!({ accessToken: 'no-read' }, ['t3_x']).catch((e) => e);
    expect(err.kind).toBe('reauth');
  });
});

describe('Reddit first comment', () => {
  async function published(f: FakeReddit, c: ReturnType<typeof connector>) {
    const post = await c.publish(request());
    return { root: post, parent: post };
  }
  const commentRequest = (replyTo: PublishRequest['replyTo'], over: Partial<PublishRequest> = {}) =>
    request({ text: 'Sources, in *markdown*:\n\n- https://example.com', replyTo, idempotencyKey: 'post-1:channel-1:1', ...over });

  test('comment: POST /api/comment with thing_id = the submission fullname, api_type=json; t1 fullname and permalink from json.data.things', async () => {
    const f = await fake();
    const c = connector(f);
    const replyTo = await published(f, c);
    const result = await c.publish(commentRequest(replyTo));

    expect(f.comments).toHaveLength(1);
    const cm = f.comments[0]!;
    expect(cm).toMatchObject({
      parentId: replyTo.parent.platformPostId,
      linkId: replyTo.parent.platformPostId,
      body: 'Sources, in *markdown*:\n\n- https://example.com',
      author: 'poster',
    });
    expect(result).toEqual({
      platformPostId: cm.name,
      url: `https://www.reddit.com${cm.permalink}`,
      publishedAt: new Date(cm.createdUtc * 1000).toISOString(),
    });
    expect(cm.name).toMatch(/^t1_[a-z0-9]+$/);
    expect(f.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/comment', userAgent: UA, authorization: 'Bearer good-token' });
    expect(f.posts).toHaveLength(1);
  });

  test('a submission Reddit does not have → 403 forbidden, permanent', async () => {
    const f = await fake();
    const gone = { platformPostId: 't3_zzzzzz', url: 'https://www.reddit.com/r/test/comments/zzzzzz/x/' };
    const err = await failure(connector(f).publish(commentRequest({ root: gone, parent: gone })));
    expect(err.kind).toBe('permanent');
    expect(err.opts.status).toBe(403);
    expect(err.message).toBe('Reddit 403: Forbidden');
    expect(f.comments).toHaveLength(0);
  });

  test('a locked thread → THREAD_LOCKED, permanent', async () => {
    const f = await fake();
    const c = connector(f);
    const replyTo = await published(f, c);
    f.posts[0]!.locked = true;
    const err = await failure(c.publish(commentRequest(replyTo)));
    expect(err.kind).toBe('permanent');
    expect(err.opts.platformCode).toBe('THREAD_LOCKED');
    expect(err.message).toBe('Reddit THREAD_LOCKED: Comments are locked.');
  });

  test('findPublished finds the comment an earlier attempt created although its answer was lost', async () => {
    const f = await fake();
    const c = connector(f, { timeoutMs: 300 });
    const replyTo = await published(f, c);
    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(commentRequest(replyTo)))).kind).toBe('transient');
    expect(f.comments).toHaveLength(1);

    const cm = f.comments[0]!;
    const found = await c.findPublished!(commentRequest(replyTo, { attempt: 2 }));
    expect(found).toEqual({
      platformPostId: cm.name,
      url: `https://www.reddit.com${cm.permalink}`,
      publishedAt: new Date(cm.createdUtc * 1000).toISOString(),
    });
    expect(paths(f).slice(-2)).toEqual(['GET /api/v1/me', 'GET /user/poster/comments']);
    expect(f.comments).toHaveLength(1);
  });

  test('findPublished: null when absent; another body, another submission or another author does not count', async () => {
    const f = await fake();
    const c = connector(f);
    const replyTo = await published(f, c);
    const other = f.addPost({ subreddit: 'test', title: 'Another post' });
    const text = 'Sources, in *markdown*:\n\n- https://example.com';
    expect(await c.findPublished!(commentRequest(replyTo, { attempt: 2 }))).toBeNull();
    f.addComment(f.posts[0]!, 'a different body');
    f.addComment(other, text);
    f.addComment(f.posts[0]!, text, 'someone_else');
    expect(
      await c.findPublished!(commentRequest(replyTo, { attempt: 2, credentials: { accessToken: 'good-token', username: 'poster' } })),
    ).toBeNull();
  });
});

describe('Reddit capabilities', () => {
  const creds = { accessToken: 'good-token' };

  test('about, link flairs and post requirements of the subreddit asked about', async () => {
    const f = await fake();
    f.subreddits.kites = {
      submissionType: 'any',
      allowVideos: false,
      over18: true,
      flairs: [
        { id: 'b8c1a2f0-flair-1', text: 'Build log' },
        { id: 'b8c1a2f0-flair-2', text: 'Question' },
      ],
      flairRequired: true,
      titleMin: 10,
      titleMax: 120,
    };
    const caps = await connector(f).readCapabilities!(creds, { subreddit: 'r/kites' });
    expect(caps).toEqual({
      platform: 'REDDIT',
      subreddit: 'kites',
      flairs: [
        { id: 'b8c1a2f0-flair-1', text: 'Build log' },
        { id: 'b8c1a2f0-flair-2', text: 'Question' },
      ],
      flairRequired: true,
      allows: { text: true, link: true, image: true, video: false, gallery: true },
      over18: true,
      titleMinChars: 10,
      titleMaxChars: 120,
    });
    expect(paths(f).sort()).toEqual(['GET /api/v1/kites/post_requirements', 'GET /r/kites/about', 'GET /r/kites/api/link_flair_v2']);
  });

  test('a text-only subreddit takes no links or media; one without bounds reports none', async () => {
    const f = await fake();
    f.subreddits.essays = { submissionType: 'self' };
    const caps = await connector(f).readCapabilities!(creds, { subreddit: 'essays' });
    expect(caps).toMatchObject({
      allows: { text: true, link: false, image: false, video: false, gallery: false },
      flairs: [],
      flairRequired: false,
      titleMinChars: null,
      titleMaxChars: null,
    });
  });

  test('flairs the user may not pick (403) are no flairs, not a failure', async () => {
    const f = await fake();
    f.subreddits.modflair = { flairs: [{ id: 'f1', text: 'Mod pick' }], flairsHidden: true };
    const caps = await connector(f).readCapabilities!(creds, { subreddit: 'modflair' });
    expect(caps).toMatchObject({ platform: 'REDDIT', flairs: [] });
  });

  test('no subreddit, an unknown one, a private one → permanent', async () => {
    const f = await fake();
    const none = await failure(connector(f).readCapabilities!(creds, {}));
    expect(none).toMatchObject({ kind: 'permanent', message: 'Reddit capabilities need a subreddit' });

    const unknown = await failure(connector(f).readCapabilities!(creds, { subreddit: 'nosuchsub' }));
    expect(unknown).toMatchObject({ kind: 'permanent', message: 'Reddit has no subreddit r/nosuchsub' });
    // Reddit sends an unknown name on to its subreddit search.
    expect(paths(f)).toEqual(['GET /r/nosuchsub/about', 'GET /subreddits/search.json']);

    f.subreddits.hidden = { private: true };
    const closed = await failure(connector(f).readCapabilities!(creds, { subreddit: 'hidden' }));
    expect(closed).toMatchObject({ kind: 'permanent', message: 'Reddit 403: Forbidden (r/hidden is private)' });
    expect(closed.opts).toMatchObject({ status: 403, platformCode: 'private' });
  });

  test('an invalid token (401) → reauth; a token without the flair scope → reauth', async () => {
    const f = await fake();
    expect((await failure(connector(f).readCapabilities!({ accessToken: 'revoked' }, { subreddit: 'test' }))).kind).toBe('reauth');
    f.tokens.set('no-flair', { user: 'poster', scopes: ['submit', 'identity', 'read', 'history'] });
    const err = await failure(connector(f).readCapabilities!({ accessToken: 'no-flair' }, { subreddit: 'test' }));
    expect(err).toMatchObject({ kind: 'reauth', opts: { platformCode: 'insufficient_scope' } });
  });
});

describe('Reddit options', () => {
  const kites = { flairs: [{ id: 'b8c1a2f0-flair-1', text: 'Build log' }], flairRequired: true };

  test('flairId, nsfw and spoiler reach the submit (flair_id, nsfw=true, spoiler=true)', async () => {
    const f = await fake();
    f.subreddits.kites = kites;
    const options = { flairId: 'b8c1a2f0-flair-1', nsfw: true, spoiler: true };
    await connector(f).publish(request({ reddit: { subreddit: 'kites', title: 'My first kite' }, options }));
    expect(f.posts[0]).toMatchObject({ subreddit: 'kites', flairId: 'b8c1a2f0-flair-1', nsfw: true, spoiler: true });
  });

  test('a gallery carries them too', async () => {
    const f = await fake();
    f.subreddits.kites = kites;
    const options = { flairId: 'b8c1a2f0-flair-1', nsfw: true, spoiler: true };
    const media = [image('img-a', 'First'), image('img-b', 'Second')];
    await connector(f).publish(request({ reddit: { subreddit: 'kites', title: 'Two kites' }, media, options }));
    expect(f.posts[0]).toMatchObject({ kind: 'gallery', flairId: 'b8c1a2f0-flair-1', nsfw: true, spoiler: true });
  });

  test('without options the post has no flair and is neither NSFW nor a spoiler', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: {} }));
    expect(f.posts[0]).toMatchObject({ flairId: null, nsfw: false, spoiler: false });
  });

  test('a flair the subreddit does not have (BAD_FLAIR_TEMPLATE_ID) → permanent', async () => {
    const f = await fake();
    f.subreddits.kites = kites;
    const req = request({ reddit: { subreddit: 'kites', title: 'My first kite' }, options: { flairId: 'nope' } });
    const err = await failure(connector(f).publish(req));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'BAD_FLAIR_TEMPLATE_ID' } });
    expect(f.posts).toHaveLength(0);
  });

  test('no flair where the subreddit requires one (SUBMIT_VALIDATION_FLAIR_REQUIRED) → permanent', async () => {
    const f = await fake();
    f.subreddits.kites = kites;
    const err = await failure(connector(f).publish(request({ reddit: { subreddit: 'kites', title: 'My first kite' } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'SUBMIT_VALIDATION_FLAIR_REQUIRED' } });
    expect(f.posts).toHaveLength(0);
  });
});
