import { describe, expect, test } from 'bun:test';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import { createThreadsConnector } from '../platforms/meta/threads.ts';
import { classifyGraph, createGraphClient, graphRetryAfterMs, matchRecent, parseGraphTime } from '../platforms/meta/graph.ts';
import type { Connector, MediaRef, PostRef, PublishRequest } from '../platforms/types.ts';
import { coded, startFakeMeta, type FakeMeta } from './fakes/meta.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeMeta);

const sharp = (await import('sharp')).default;
const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
  .png()
  .toBuffer();
const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00f' } })
  .jpeg()
  .toBuffer();
const videoBytes = new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x6d, 0x70, 0x34, 0x32]);

function image(id: string, altText: string | null = null, kind: 'png' | 'jpeg' = 'png'): MediaRef {
  const bytes = kind === 'png' ? png : jpeg;
  return {
    id,
    type: 'image',
    mimeType: `image/${kind}`,
    fileName: `${id}.${kind === 'png' ? 'png' : 'jpg'}`,
    altText,
    read: async () => new Uint8Array(bytes),
  };
}

function video(id: string): MediaRef {
  return { id, type: 'video', mimeType: 'video/mp4', fileName: `${id}.mp4`, read: async () => videoBytes };
}

const TOKENS = { facebook: 'EAAG-page-token', instagram: 'IGAA-user-token', threads: 'THAA-user-token' } as const;

function creds(f: FakeMeta, token: string = TOKENS[f.flavor]): Record<string, unknown> {
  const key = f.flavor === 'facebook' ? 'pageId' : f.flavor === 'instagram' ? 'igUserId' : 'threadsUserId';
  return { accessToken: token, [key]: f.accountId };
}

function request(f: FakeMeta, over: Partial<PublishRequest> = {}): PublishRequest {
  return { text: 'Hello from the scheduler', media: [], idempotencyKey: 'post-1:channel-1', credentials: creds(f), ...over };
}

/** The hosted-media resolver a test wires in place of signed storage URLs. */
const hosting = (f: FakeMeta) => async (item: MediaRef) => f.hostMedia(await item.read(), item.mimeType);

function connectorFor(f: FakeMeta, o: { timeoutMs?: number; pollTimeoutMs?: number; mediaUrl?: boolean } = {}): Connector {
  const common = { baseUrl: f.url, timeoutMs: o.timeoutMs ?? 2_000 };
  const poll = { pollIntervalMs: 5, pollTimeoutMs: o.pollTimeoutMs ?? 2_000, mediaUrl: o.mediaUrl === false ? undefined : hosting(f) };
  if (f.flavor === 'facebook') return createFacebookConnector(common);
  if (f.flavor === 'instagram') return createInstagramConnector({ ...common, ...poll });
  return createThreadsConnector({ ...common, ...poll });
}

const routes = (f: FakeMeta) => f.requests.map((r) => `${r.method} ${r.path.replace(/\/v\d+\.\d+/, '')}`);

// ---------------------------------------------------------------------------------------------

describe('Facebook Page publish', () => {
  test('text post: POST /v26.0/{page-id}/feed with the message and the Page token', async () => {
    const f = await fake('facebook');
    const result = await connectorFor(f).publish(request(f));

    expect(f.posts).toHaveLength(1);
    const post = f.posts[0]!;
    expect(post).toMatchObject({ text: 'Hello from the scheduler', kind: 'mobile_status_update' });
    expect(result).toEqual({ platformPostId: post.id, url: `https://www.facebook.com/${post.id}` });
    expect(post.id).toMatch(new RegExp(`^${f.accountId}_\\d+$`));
    expect(f.requests).toHaveLength(1);
    expect(f.requests[0]).toMatchObject({ method: 'POST', path: `/v26.0/${f.accountId}/feed`, version: 'v26.0' });
    expect(f.requests[0]!.params).toEqual({ message: 'Hello from the scheduler', access_token: TOKENS.facebook });
  });

  test('two photos: uploaded unpublished (multipart source), then one feed post with attached_media in order', async () => {
    const f = await fake('facebook');
    const result = await connectorFor(f).publish(request(f, { media: [image('a'), image('b')] }));

    expect(routes(f)).toEqual([`POST /${f.accountId}/photos`, `POST /${f.accountId}/photos`, `POST /${f.accountId}/feed`]);
    expect(f.uploads.map((u) => [u.kind, u.fileName, u.mimeType, u.size, u.published])).toEqual([
      ['photo', 'a.png', 'image/png', png.length, false],
      ['photo', 'b.png', 'image/png', png.length, false],
    ]);
    const post = f.posts[0]!;
    expect(post.kind).toBe('added_photos');
    expect(post.media).toEqual(f.uploads.map((u) => u.id));
    expect(f.uploads.every((u) => u.attachedTo === post.id)).toBe(true);
    expect(result.platformPostId).toBe(post.id);
  });

  test('a video: one multipart upload to /{page-id}/videos with the text as description', async () => {
    const f = await fake('facebook');
    const result = await connectorFor(f).publish(request(f, { text: 'Watch this', media: [video('v')] }));

    expect(routes(f)).toEqual([`POST /${f.accountId}/videos`]);
    expect(f.uploads).toHaveLength(1);
    expect(f.uploads[0]).toMatchObject({ kind: 'video', fileName: 'v.mp4', mimeType: 'video/mp4', size: videoBytes.length });
    expect(f.uploads[0]!.params).toEqual({ description: 'Watch this' });
    expect(result).toEqual({ platformPostId: f.uploads[0]!.id, url: `https://www.facebook.com/${f.accountId}/videos/${f.uploads[0]!.id}` });
    expect(f.posts[0]).toMatchObject({ text: 'Watch this', kind: 'added_video' });
  });

  test('a video with another attachment → permanent, nothing sent', async () => {
    const f = await fake('facebook');
    const err = await failure(connectorFor(f).publish(request(f, { media: [video('v'), image('a')] })));
    expect(err.kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });
});

describe('Facebook error classes', () => {
  test('invalid token → reauth with Meta’s message and code 190', async () => {
    const f = await fake('facebook');
    const err = await failure(connectorFor(f).publish(request(f, { credentials: creds(f, 'revoked') })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('Facebook 400: Invalid OAuth access token - Cannot parse access token');
    expect(err.opts).toMatchObject({ status: 400, platformCode: '190' });
    expect(f.posts).toHaveLength(0);
  });

  test('expired token (190/463) on a photo upload → reauth before any post', async () => {
    const f = await fake('facebook');
    f.expireToken(TOKENS.facebook);
    const err = await failure(connectorFor(f).publish(request(f, { media: [image('a')] })));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('190/463');
    expect(err.message).toContain('Session has expired');
    expect(routes(f)).toEqual([`POST /${f.accountId}/photos`]);
  });

  test('missing permission (Graph code 200) → reauth', async () => {
    const f = await fake('facebook');
    f.failNext(1, {
      status: 403,
      body: {
        error: {
          message: coded(200, "The user hasn't authorized the application to perform this action"),
          type: 'OAuthException',
          code: 200,
        },
      },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('200');
  });

  test('duplicate status (506) → permanent with Meta’s message and user message', async () => {
    const f = await fake('facebook');
    const c = connectorFor(f);
    await c.publish(request(f));
    const err = await failure(c.publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe(
      `Facebook 400: ${coded(506, 'Duplicate status message (This status update is identical to the last one you posted. Try posting something different, or delete your previous update.)')}`,
    );
    expect(err.opts.platformCode).toBe('506/1455006');
    expect(f.posts).toHaveLength(1);
  });

  test('blocked for policy (368) → permanent', async () => {
    const f = await fake('facebook');
    f.failNext(1, {
      status: 400,
      body: {
        error: {
          message: 'It looks like you were misusing this feature by going too fast.',
          type: 'OAuthException',
          code: 368,
          error_subcode: 1390008,
        },
      },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Facebook 400: It looks like you were misusing this feature by going too fast.');
  });

  test('Page rate limit (32) with X-Business-Use-Case-Usage → transient, retryAfterMs from estimated_time_to_regain_access', async () => {
    const f = await fake('facebook');
    const usage = {
      [f.accountId]: [{ type: 'pages', call_count: 100, total_cputime: 12, total_time: 20, estimated_time_to_regain_access: 7 }],
    };
    f.failNext(1, {
      status: 403,
      body: { error: { message: coded(32, 'Page request limit reached'), type: 'OAuthException', code: 32, fbtrace_id: 'Abc' } },
      headers: { 'X-Business-Use-Case-Usage': JSON.stringify(usage) },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 403, retryAfterMs: 7 * 60_000, platformCode: '32' });
    expect(err.message).toBe(`Facebook 403: ${coded(32, 'Page request limit reached')}`);
  });

  test('429 with Retry-After → transient, retryAfterMs 9000', async () => {
    const f = await fake('facebook');
    f.failNext(1, {
      status: 429,
      body: { error: { message: coded(4, 'Application request limit reached'), type: 'OAuthException', code: 4, is_transient: true } },
      headers: { 'Retry-After': '9' },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 9000 });
  });

  test('500 (code 2, is_transient) and a bare 503 → transient', async () => {
    const f = await fake('facebook');
    f.failNext(1, {
      status: 500,
      body: {
        error: {
          message: 'An unexpected error has occurred. Please retry your request later.',
          type: 'OAuthException',
          code: 2,
          is_transient: true,
        },
      },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('Facebook 500: An unexpected error has occurred. Please retry your request later.');

    f.failNext(1, { status: 503, body: '<html>down</html>' });
    expect((await failure(connectorFor(f).publish(request(f)))).kind).toBe('transient');
  });

  test('hang → transient after the request timeout; closed port → transient', async () => {
    const f = await fake('facebook');
    f.failNext(1, 'hang');
    const err = await failure(connectorFor(f, { timeoutMs: 300 }).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');

    const closed = `http://127.0.0.1:${await freePort()}`;
    const c = createFacebookConnector({ baseUrl: closed, timeoutMs: 1_000 });
    expect((await failure(c.publish(request(f)))).kind).toBe('transient');
  });
});

describe('Facebook no double post (findPublished)', () => {
  test('a publish whose answer was lost is found by its text on the Page’s posts', async () => {
    const f = await fake('facebook');
    f.failNext(1, 'accept-then-hang');
    const c = connectorFor(f, { timeoutMs: 300 });
    expect((await failure(c.publish(request(f)))).kind).toBe('transient');
    expect(f.posts).toHaveLength(1);

    const found = await c.findPublished!(request(f, { attempt: 2 }));
    const post = f.posts[0]!;
    expect(found).toMatchObject({ platformPostId: post.id, url: post.permalink });
    expect(Date.parse(found!.publishedAt!)).toBe(Math.floor(post.created.getTime() / 1000) * 1000);
    const list = f.requests.at(-1)!;
    expect(list.path).toBe(`/v26.0/${f.accountId}/posts`);
    expect(list.params.fields).toContain('message');
    expect(Number(list.params.since)).toBeGreaterThan(Date.now() / 1000 - 24 * 3600 - 5);
  });

  test('other text, or the same text older than 24 h → null (publish proceeds)', async () => {
    const f = await fake('facebook');
    f.seedPost({ text: 'Hello from the scheduler', ageMs: 2 * 24 * 3600_000 });
    f.seedPost({ text: 'Something else', ageMs: 60_000 });
    const c = connectorFor(f);
    expect(await c.findPublished!(request(f))).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('Instagram publish (container flow)', () => {
  test('one image: container with image_url, caption and alt_text → FINISHED → media_publish → permalink', async () => {
    const f = await fake('instagram');
    const result = await connectorFor(f).publish(request(f, { text: 'Caption one', media: [image('a', 'A blue square', 'jpeg')] }));

    const [c] = f.containers;
    expect(c!.params).toEqual({ image_url: c!.fetched!.url, caption: 'Caption one', alt_text: 'A blue square' });
    expect(c!.fetched).toMatchObject({ contentType: 'image/jpeg', size: jpeg.length });
    expect(c!.status).toBe('PUBLISHED');
    expect(routes(f)).toEqual([
      `POST /${f.accountId}/media`,
      `GET /${c!.id}`,
      `POST /${f.accountId}/media_publish`,
      `GET /${f.posts[0]!.id}`,
    ]);
    expect(f.requests[1]!.params.fields).toBe('status_code,status');
    expect(f.requests.every((r) => r.version === 'v26.0')).toBe(true);
    const post = f.posts[0]!;
    expect(post).toMatchObject({ text: 'Caption one', kind: 'IMAGE' });
    expect(result).toEqual({
      platformPostId: post.id,
      url: post.permalink,
      publishedAt: new Date(Math.floor(post.created.getTime() / 1000) * 1000).toISOString(),
    });
    expect(result.url).toMatch(/^https:\/\/www\.instagram\.com\/p\/[^/]+\/$/);
  });

  test('a single video is published as REELS after the container finishes processing', async () => {
    const f = await fake('instagram', { videoPendingPolls: 2 });
    await connectorFor(f).publish(request(f, { media: [video('v')] }));
    const [c] = f.containers;
    expect(c!.params).toMatchObject({ media_type: 'REELS', caption: 'Hello from the scheduler' });
    expect(routes(f).filter((r) => r === `GET /${c!.id}`)).toHaveLength(3); // IN_PROGRESS ×2, FINISHED
    expect(f.posts[0]!.kind).toBe('VIDEO');
  });

  test('carousel: item containers (VIDEO for the video), each finished, then CAROUSEL with children in order', async () => {
    const f = await fake('instagram');
    const result = await connectorFor(f).publish(request(f, { media: [image('a', null, 'jpeg'), video('v'), image('b', null, 'jpeg')] }));
    const items = f.containers.filter((c) => c.carouselItem);
    expect(items.map((c) => [c.mediaType, c.params.is_carousel_item, c.params.caption])).toEqual([
      ['IMAGE', 'true', undefined],
      ['VIDEO', 'true', undefined],
      ['IMAGE', 'true', undefined],
    ]);
    const parent = f.containers.find((c) => c.mediaType === 'CAROUSEL')!;
    expect(parent.params).toEqual({
      media_type: 'CAROUSEL',
      children: items.map((c) => c.id).join(','),
      caption: 'Hello from the scheduler',
    });
    expect(f.posts[0]).toMatchObject({ kind: 'CAROUSEL_ALBUM', media: [parent.id, ...items.map((c) => c.id)] });
    expect(result.platformPostId).toBe(f.posts[0]!.id);
  });

  test('no media, or no mediaUrl resolver → permanent, nothing sent', async () => {
    const f = await fake('instagram');
    expect((await failure(connectorFor(f).publish(request(f)))).kind).toBe('permanent');
    const err = await failure(connectorFor(f, { mediaUrl: false }).publish(request(f, { media: [image('a')] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('mediaUrl');
    expect(f.requests).toHaveLength(0);
  });

  test('a permalink lookup that fails after publishing does not fail the publish', async () => {
    const f = await fake('instagram');
    f.failNext(1, { status: 500, body: { error: { message: 'An unknown error has occurred.', type: 'OAuthException', code: 1 } } }, 'read');
    const result = await connectorFor(f).publish(request(f, { media: [image('a', null, 'jpeg')] }));
    expect(result).toEqual({ platformPostId: f.posts[0]!.id, url: 'https://www.instagram.com/' });
  });
});

describe('Instagram error classes', () => {
  test('invalid and expired tokens → reauth', async () => {
    const f = await fake('instagram');
    const bad = await failure(connectorFor(f).publish(request(f, { credentials: creds(f, 'nope'), media: [image('a')] })));
    expect(bad).toMatchObject({ kind: 'reauth', message: 'Instagram 400: Invalid OAuth access token - Cannot parse access token' });

    f.expireToken(TOKENS.instagram);
    const expired = await failure(connectorFor(f).publish(request(f, { media: [image('a')] })));
    expect(expired.kind).toBe('reauth');
    expect(expired.opts.platformCode).toBe('190/463');
    expect(f.posts).toHaveLength(0);
  });

  test('container ERROR with an unsupported format → permanent, never published', async () => {
    const f = await fake('instagram', {
      containerError: 'Error: The video format is not supported. Please check spec for supported format (2207026)',
    });
    const err = await failure(connectorFor(f).publish(request(f, { media: [video('v')] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('ERROR: Error: The video format is not supported');
    expect(routes(f)).not.toContain(`POST /${f.accountId}/media_publish`);
  });

  test('media URL Instagram cannot fetch (9004/2207052) → transient', async () => {
    const f = await fake('instagram');
    const c = createInstagramConnector({ baseUrl: f.url, mediaUrl: async () => `${f.url}/__media/missing`, pollIntervalMs: 5 });
    const err = await failure(c.publish(request(f, { media: [image('a')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe(
      `Instagram 400: Only photo or video can be accepted as media type. (The media could not be fetched from this uri: ${f.url}/__media/missing)`,
    );
    expect(err.opts.platformCode).toBe('9004/2207052');
  });

  test('a video still processing past pollTimeoutMs → transient, not published', async () => {
    const f = await fake('instagram', { videoPendingPolls: 10_000 });
    const err = await failure(connectorFor(f, { pollTimeoutMs: 100 }).publish(request(f, { media: [video('v')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('still processing');
    expect(f.posts).toHaveLength(0);
  });

  test('daily publishing limit (9/2207042) → transient; spam restriction (4/2207051) → permanent', async () => {
    const f = await fake('instagram');
    f.failNext(1, {
      status: 400,
      body: {
        error: {
          message: 'Application request limit reached',
          type: 'OAuthException',
          code: 9,
          error_subcode: 2207042,
          error_user_msg: 'You reached maximum number of posts that is allowed to be published by Content Publishing API.',
        },
      },
    });
    const limit = await failure(connectorFor(f).publish(request(f, { media: [image('a')] })));
    expect(limit.kind).toBe('transient');
    expect(limit.message).toContain('You reached maximum number of posts');

    f.failNext(1, {
      status: 400,
      body: {
        error: {
          message: 'Application request limit reached',
          type: 'OAuthException',
          code: 4,
          error_subcode: 2207051,
          error_user_msg: 'We restrict certain activity to protect our community. Tell us if you think we made a mistake.',
        },
      },
    });
    const spam = await failure(connectorFor(f).publish(request(f, { media: [image('a')] })));
    expect(spam.kind).toBe('permanent');
    expect(spam.opts.platformCode).toBe('4/2207051');
  });

  test('BUC rate limit (80002) with X-Business-Use-Case-Usage → transient with retryAfterMs', async () => {
    const f = await fake('instagram');
    const usage = {
      [f.accountId]: [{ type: 'instagram', call_count: 100, total_cputime: 5, total_time: 5, estimated_time_to_regain_access: 3 }],
    };
    f.failNext(
      1,
      {
        status: 400,
        body: {
          error: {
            message: 'There have been too many calls to this Instagram account. Wait a bit and try again.',
            type: 'OAuthException',
            code: 80002,
          },
        },
        headers: { 'x-business-use-case-usage': JSON.stringify(usage) },
      },
      'container',
    );
    const err = await failure(connectorFor(f).publish(request(f, { media: [image('a')] })));
    expect(err).toMatchObject({
      kind: 'transient',
      message: 'Instagram 400: There have been too many calls to this Instagram account. Wait a bit and try again.',
    });
    expect(err.opts.retryAfterMs).toBe(180_000);
  });

  test('a hanging media_publish → transient (timeout)', async () => {
    const f = await fake('instagram');
    f.failNext(1, 'hang');
    const err = await failure(connectorFor(f, { timeoutMs: 300 }).publish(request(f, { media: [image('a')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out');
  });
});

describe('Instagram token refresh and no double post', () => {
  test('refresh: ig_refresh_token → new token and expiresAt in 60 days; the new token publishes', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    const fresh = await c.refreshCredentials!(creds(f));
    expect(fresh).toEqual({ accessToken: f.refreshed[0], expiresAt: expect.any(String) });
    expect(Object.values(fresh).every((v) => v !== undefined)).toBe(true);
    const days = (Date.parse(fresh.expiresAt as string) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(59.9);
    expect(days).toBeLessThan(60.1);
    const refresh = f.requests.at(-1)!;
    expect(refresh).toMatchObject({ method: 'GET', path: '/refresh_access_token', version: null });
    expect(refresh.params).toEqual({ grant_type: 'ig_refresh_token', access_token: TOKENS.instagram });

    // The caller merges the answer over the stored credentials.
    const merged = { ...creds(f), ...fresh };
    f.validTokens.delete(TOKENS.instagram);
    await c.publish(request(f, { credentials: merged, media: [image('a')] }));
    expect(f.posts).toHaveLength(1);
  });

  test('a rejected (expired) token on refresh → reauth', async () => {
    const f = await fake('instagram');
    f.expireToken(TOKENS.instagram);
    const err = await failure(connectorFor(f).refreshCredentials!(creds(f)));
    expect(err.kind).toBe('reauth');
    expect(err.message).toContain('Session has expired');
  });

  test('a lost media_publish answer is found by caption; media-only posts match by media type', async () => {
    const f = await fake('instagram');
    f.failNext(1, 'accept-then-hang');
    const c = connectorFor(f, { timeoutMs: 300 });
    const req = request(f, { media: [image('a', null, 'jpeg')] });
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toMatchObject({ platformPostId: f.posts[0]!.id, url: f.posts[0]!.permalink });
    expect(f.requests.at(-1)!.params).toMatchObject({ fields: 'id,caption,timestamp,permalink,media_type' });

    expect(await c.findPublished!({ ...req, text: 'Another caption' })).toBeNull();

    const g = await fake('instagram');
    g.seedPost({ text: '', ageMs: 60_000, kind: 'VIDEO' });
    const d = connectorFor(g);
    expect(await d.findPublished!(request(g, { text: '', media: [image('a')] }))).toBeNull();
    expect(await d.findPublished!(request(g, { text: '', media: [video('v')] }))).not.toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('Threads publish', () => {
  test('text post: TEXT container then threads_publish on graph.threads.net/v1.0; permalink returned', async () => {
    const f = await fake('threads');
    const result = await connectorFor(f).publish(request(f));
    const [c] = f.containers;
    expect(c!.params).toEqual({ media_type: 'TEXT', text: 'Hello from the scheduler' });
    expect(routes(f)).toEqual([`POST /${f.accountId}/threads`, `POST /${f.accountId}/threads_publish`, `GET /${f.posts[0]!.id}`]);
    expect(f.requests.every((r) => r.version === 'v1.0')).toBe(true);
    expect(f.requests[1]!.params).toEqual({ creation_id: c!.id, access_token: TOKENS.threads });
    const post = f.posts[0]!;
    expect(post).toMatchObject({ text: 'Hello from the scheduler', kind: 'TEXT_POST' });
    expect(result.platformPostId).toBe(post.id);
    expect(result.url).toBe(post.permalink);
    expect(result.url).toMatch(/^https:\/\/www\.threads\.com\/@fakeaccount\/post\//);
  });

  test('one image with alt text; one video polled until FINISHED', async () => {
    const f = await fake('threads', { videoPendingPolls: 1 });
    const c = connectorFor(f);
    await c.publish(request(f, { media: [image('a', 'Red square')] }));
    expect(f.containers[0]!.params).toEqual({
      media_type: 'IMAGE',
      image_url: f.containers[0]!.fetched!.url,
      alt_text: 'Red square',
      text: 'Hello from the scheduler',
    });
    expect(f.containers[0]!.fetched).toMatchObject({ contentType: 'image/png', size: png.length });

    await c.publish(request(f, { text: 'A clip', media: [video('v')] }));
    const vid = f.containers[1]!;
    expect(vid.params).toMatchObject({ media_type: 'VIDEO', text: 'A clip' });
    expect(f.requests.filter((r) => r.route === 'status' && r.path.endsWith(vid.id)).map((r) => r.params.fields)).toEqual([
      'status,error_message',
      'status,error_message',
    ]);
    expect(f.posts.map((p) => p.kind)).toEqual(['IMAGE', 'VIDEO']);
  });

  test('carousel: items with is_carousel_item, then CAROUSEL with children and text', async () => {
    const f = await fake('threads');
    await connectorFor(f).publish(request(f, { media: [image('a'), image('b'), video('v')] }));
    const items = f.containers.filter((c) => c.carouselItem);
    expect(items.map((c) => c.mediaType)).toEqual(['IMAGE', 'IMAGE', 'VIDEO']);
    expect(f.containers.at(-1)!.params).toEqual({
      media_type: 'CAROUSEL',
      children: items.map((c) => c.id).join(','),
      text: 'Hello from the scheduler',
    });
    expect(f.posts[0]!.kind).toBe('CAROUSEL_ALBUM');
  });
});

describe('Threads error classes, refresh and no double post', () => {
  test('text over 500 characters → permanent with the platform’s message', async () => {
    const f = await fake('threads');
    const err = await failure(connectorFor(f).publish(request(f, { text: 'x'.repeat(501) })));
    expect(err).toMatchObject({ kind: 'permanent', message: 'Threads 400: Param text must be at most 500 characters long.' });
    expect(f.posts).toHaveLength(0);
  });

  test('invalid token → reauth; expired token → reauth', async () => {
    const f = await fake('threads');
    expect((await failure(connectorFor(f).publish(request(f, { credentials: creds(f, 'bad') })))).kind).toBe('reauth');
    f.expireToken(TOKENS.threads);
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('190/463');
  });

  test('container FAILED_DOWNLOADING_VIDEO → transient; INVALID_DURATION → permanent', async () => {
    const f = await fake('threads');
    const unreachable = createThreadsConnector({ baseUrl: f.url, mediaUrl: async () => `${f.url}/__media/gone`, pollIntervalMs: 5 });
    const err = await failure(unreachable.publish(request(f, { media: [video('v')] })));
    expect(err).toMatchObject({ kind: 'transient' });
    expect(err.message).toContain('ERROR: FAILED_DOWNLOADING_VIDEO');

    const g = await fake('threads', { containerError: 'INVALID_DURATION' });
    const bad = await failure(connectorFor(g).publish(request(g, { media: [video('v')] })));
    expect(bad.kind).toBe('permanent');
    expect(bad.message).toContain('INVALID_DURATION');
    expect(g.posts).toHaveLength(0);
  });

  test('throttled (613) with X-App-Usage regain time → transient with retryAfterMs; 502 → transient', async () => {
    const f = await fake('threads');
    f.failNext(1, {
      status: 400,
      body: { error: { message: 'Calls to this api have exceeded the rate limit.', type: 'OAuthException', code: 613 } },
      headers: { 'x-app-usage': JSON.stringify({ call_count: 100, total_cputime: 3, total_time: 4, estimated_time_to_regain_access: 2 }) },
    });
    const err = await failure(connectorFor(f).publish(request(f)));
    expect(err).toMatchObject({ kind: 'transient', message: 'Threads 400: Calls to this api have exceeded the rate limit.' });
    expect(err.opts.retryAfterMs).toBe(120_000);

    f.failNext(1, { status: 502, body: '' }, 'container');
    expect((await failure(connectorFor(f).publish(request(f)))).kind).toBe('transient');
  });

  test('refresh: th_refresh_token rotates the token; the rotated token publishes; an invalid one → reauth', async () => {
    const f = await fake('threads');
    const c = connectorFor(f);
    const fresh = await c.refreshCredentials!(creds(f));
    expect(fresh.accessToken).toBe(f.refreshed[0]!);
    expect(f.requests.at(-1)!.params).toEqual({ grant_type: 'th_refresh_token', access_token: TOKENS.threads });
    f.validTokens.delete(TOKENS.threads);
    await c.publish(request(f, { credentials: { ...creds(f), ...fresh } }));
    expect(f.posts).toHaveLength(1);

    const err = await failure(c.refreshCredentials!(creds(f, 'THAA-revoked')));
    expect(err.kind).toBe('reauth');
  });

  test('findPublished finds a thread published by an attempt whose answer was lost', async () => {
    const f = await fake('threads');
    f.failNext(1, 'accept-then-hang');
    const c = connectorFor(f, { timeoutMs: 300 });
    expect((await failure(c.publish(request(f)))).kind).toBe('transient');
    const found = await c.findPublished!(request(f, { attempt: 2 }));
    expect(found).toMatchObject({ platformPostId: f.posts[0]!.id, url: f.posts[0]!.permalink });
    expect(f.requests.at(-1)!).toMatchObject({ path: `/v1.0/${f.accountId}/threads` });
    expect(await c.findPublished!(request(f, { text: 'not posted' }))).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('Graph helpers', () => {
  const reply = (status: number, error: unknown, headers: Record<string, string> = {}) => ({
    status,
    headers: new Headers(headers),
    body: { error },
    text: JSON.stringify({ error }),
  });

  test('classification table', () => {
    const kind = (code: number, sub?: number, extra: object = {}) =>
      classifyGraph('X', reply(400, { message: 'm', code, error_subcode: sub, ...extra })).kind;
    expect([kind(190), kind(102), kind(10), kind(200), kind(299), kind(100, 463), kind(100, 467)]).toEqual(Array(7).fill('reauth'));
    expect([kind(4), kind(17), kind(32), kind(341), kind(613), kind(80001), kind(1), kind(100, undefined, { is_transient: true })]).toEqual(
      Array(8).fill('transient'),
    );
    expect([kind(506), kind(368), kind(100), kind(4, 2207051), kind(100, 33)]).toEqual(Array(5).fill('permanent'));
    expect(classifyGraph('X', { status: 401, headers: new Headers(), body: null, text: '' }).kind).toBe('reauth');
  });

  test('retry delay: Retry-After wins, else the largest estimated_time_to_regain_access', () => {
    expect(graphRetryAfterMs(new Headers({ 'retry-after': '3', 'x-app-usage': '{"estimated_time_to_regain_access":9}' }))).toBe(3000);
    const buc = JSON.stringify({
      '1': [
        { type: 'pages', estimated_time_to_regain_access: 2 },
        { type: 'x', estimated_time_to_regain_access: 4 },
      ],
    });
    expect(graphRetryAfterMs(new Headers({ 'x-business-use-case-usage': buc }))).toBe(240_000);
    expect(graphRetryAfterMs(new Headers({ 'x-app-usage': '{"call_count":100}' }))).toBeUndefined();
    expect(graphRetryAfterMs(new Headers({ 'x-app-usage': 'not json' }))).toBeUndefined();
  });

  test('Graph timestamps (+0000) parse; matchRecent picks the newest same-text post in the window', () => {
    expect(parseGraphTime('2026-11-02T10:00:00+0000')).toBe(Date.UTC(2026, 10, 2, 10));
    const now = Date.UTC(2026, 10, 2, 12);
    const posts = [
      { id: 'old', text: 'hi', time: '2026-10-30T10:00:00+0000' },
      { id: 'a', text: 'hi\r\n', time: '2026-11-02T09:00:00+0000' },
      { id: 'b', text: 'hi', time: '2026-11-02T11:00:00+0000' },
    ];
    expect(matchRecent(posts, 'hi', undefined, now)?.id).toBe('b');
    expect(matchRecent(posts, 'bye', undefined, now)).toBeNull();
  });
});

describe('fake Graph contract', () => {
  const post = (url: string, form: Record<string, string>) =>
    fetch(url, { method: 'POST', body: new URLSearchParams(form) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));

  test('rejects a misnamed field, an unknown Page and attached_media that is not an unpublished photo', async () => {
    const f = await fake('facebook');
    const token = { access_token: TOKENS.facebook };
    const wrong = await post(`${f.url}/v26.0/${f.accountId}/feed`, { caption: 'hi', ...token });
    expect(wrong).toMatchObject({
      status: 400,
      body: { error: { code: 100, message: coded(100, 'Param caption is not a valid parameter') } },
    });

    const other = await post(`${f.url}/v26.0/999/feed`, { message: 'hi', ...token });
    expect(other.body.error).toMatchObject({ code: 100, error_subcode: 33, type: 'GraphMethodException' });

    const bogus = await post(`${f.url}/v26.0/${f.accountId}/feed`, { message: 'hi', 'attached_media[0]': '{"media_fbid":"1"}', ...token });
    expect(bogus.body.error.code).toBe(100);
    expect(f.posts).toHaveLength(0);
  });

  test('accepts the token in an Authorization header and JSON bodies; refuses to publish a container still processing', async () => {
    const f = await fake('instagram', { videoPendingPolls: 5 });
    const res = await fetch(`${f.url}/v26.0/${f.accountId}/media`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.instagram}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ media_type: 'REELS', video_url: f.hostMedia(videoBytes, 'video/mp4'), caption: 'x' }),
    });
    const { id } = (await res.json()) as { id: string };
    const early = await post(`${f.url}/v26.0/${f.accountId}/media_publish`, { creation_id: id, access_token: TOKENS.instagram });
    expect(early.body.error).toMatchObject({ code: 9007, error_subcode: 2207027 });
    const single = await post(`${f.url}/v26.0/${f.accountId}/media`, {
      media_type: 'VIDEO',
      video_url: 'http://x',
      access_token: TOKENS.instagram,
    });
    expect(single.status).toBe(400);
    expect(f.posts).toHaveLength(0);
  });
});

describe('Meta metrics', () => {
  test('Facebook: reactions, comments and shares of a Page post, as fields; a deleted post is left out', async () => {
    const f = await fake('facebook');
    const c = connectorFor(f);
    const { platformPostId } = await c.publish(request(f));
    Object.assign(f.posts.find((p) => p.id === platformPostId)!.stats, { likes: 12, comments: 3, shares: 2 });
    const read = await c.readMetrics!(creds(f), [platformPostId, `${f.accountId}_404`]);
    expect(read).toEqual({ [platformPostId]: { likes: 12, replies: 3, reposts: 2 } });
    // Nobody shared it: Graph leaves `shares` out, which is 0 shares.
    Object.assign(f.posts.find((p) => p.id === platformPostId)!.stats, { shares: 0 });
    expect((await c.readMetrics!(creds(f), [platformPostId]))[platformPostId]!.reposts).toBe(0);
  });

  test('Instagram: like_count and comments_count; a hidden like count is left out (null), never 0', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f, { mediaUrl: true });
    const { platformPostId } = await c.publish(request(f, { media: [image('m1')] }));
    Object.assign(f.posts.find((p) => p.id === platformPostId)!.stats, { likes: 40, comments: 5 });
    expect(await c.readMetrics!(creds(f), [platformPostId])).toEqual({ [platformPostId]: { likes: 40, replies: 5 } });
    Object.assign(f.posts.find((p) => p.id === platformPostId)!.stats, { likes: null });
    expect(await c.readMetrics!(creds(f), [platformPostId])).toEqual({ [platformPostId]: { replies: 5 } });
  });

  test('Threads: the media insights views, likes, replies, reposts and quotes', async () => {
    const f = await fake('threads');
    const c = connectorFor(f);
    const { platformPostId } = await c.publish(request(f));
    Object.assign(f.posts.find((p) => p.id === platformPostId)!.stats, { views: 900, likes: 30, comments: 4, reposts: 2, quotes: 1 });
    expect(await c.readMetrics!(creds(f), [platformPostId])).toEqual({
      [platformPostId]: { views: 900, likes: 30, replies: 4, reposts: 2, quotes: 1 },
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('Meta follow-ups: Threads replies, Facebook and Instagram comments', () => {
  /** The follow-up at `position` after the post: a reply to `parent` in the conversation of `root`. */
  function followUp(f: FakeMeta, root: PostRef, parent: PostRef, position: number, over: Partial<PublishRequest> = {}): PublishRequest {
    return request(f, { idempotencyKey: `post-1:channel-1:${position}`, replyTo: { root, parent }, ...over });
  }
  const ref = (r: PostRef): PostRef => ({ platformPostId: r.platformPostId, url: r.url });

  test('Threads: a thread of 3, each a container with reply_to_id = the item before, then threads_publish', async () => {
    const f = await fake('threads');
    const c = connectorFor(f);
    const root = ref(await c.publish(request(f, { text: 'One' })));
    const second = ref(await c.publish(followUp(f, root, root, 1, { text: 'Two' })));
    const before = f.requests.length;
    const third = await c.publish(followUp(f, root, second, 2, { text: 'Three', media: [image('a')] }));

    expect(f.containers.map((x) => x.params.reply_to_id)).toEqual([undefined, root.platformPostId, second.platformPostId]);
    expect(f.containers[1]!.params).toEqual({ media_type: 'TEXT', text: 'Two', reply_to_id: root.platformPostId });
    expect(f.containers[2]!.params).toMatchObject({ media_type: 'IMAGE', text: 'Three', reply_to_id: second.platformPostId });
    expect(routes(f).slice(before)).toEqual([
      `POST /${f.accountId}/threads`,
      `GET /${f.containers[2]!.id}`,
      `POST /${f.accountId}/threads_publish`,
      `GET /${third.platformPostId}`,
    ]);
    expect(f.posts.map((p) => [p.text, p.replyTo, p.rootId])).toEqual([
      ['One', undefined, undefined],
      ['Two', root.platformPostId, root.platformPostId],
      ['Three', second.platformPostId, root.platformPostId],
    ]);
    expect(third.url).toBe(f.posts[2]!.permalink);
    expect(f.posts[0]!.stats.comments).toBe(1);
  });

  test('Threads: a carousel reply names its parent on the carousel container, not on the items', async () => {
    const f = await fake('threads');
    const c = connectorFor(f);
    const root = ref(await c.publish(request(f)));
    await c.publish(followUp(f, root, root, 1, { media: [image('a'), image('b')] }));
    const [items, carousel] = [f.containers.filter((x) => x.carouselItem), f.containers.at(-1)!];
    expect(items.map((x) => x.params.reply_to_id)).toEqual([undefined, undefined]);
    expect(carousel.params).toMatchObject({ media_type: 'CAROUSEL', reply_to_id: root.platformPostId });
    expect(f.posts.at(-1)).toMatchObject({ kind: 'CAROUSEL_ALBUM', replyTo: root.platformPostId });
  });

  test('Threads: a reply to a thread that does not exist → permanent (100/33), nothing published', async () => {
    const f = await fake('threads');
    const gone = { platformPostId: '25000000000099999', url: 'https://www.threads.com/@fakeaccount/post/gone' };
    const err = await failure(connectorFor(f).publish(followUp(f, gone, gone, 1)));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100/33' } });
    expect(err.message).toContain(`Unsupported post request. Object with ID '${gone.platformPostId}' does not exist`);
    expect(f.containers).toHaveLength(0);
    expect(f.posts).toHaveLength(0);
  });

  test('Threads: findPublished finds a reply whose answer was lost among the user’s replies; null for another parent', async () => {
    const f = await fake('threads');
    const c = connectorFor(f, { timeoutMs: 300 });
    const root = ref(await c.publish(request(f, { text: 'Root' })));
    const other = ref(await c.publish(request(f, { text: 'Another thread' })));
    f.failNext(1, 'accept-then-hang');
    const req = followUp(f, root, root, 1, { text: 'The reply' });
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const reply = f.posts.at(-1)!;
    expect(reply.replyTo).toBe(root.platformPostId);

    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toMatchObject({ platformPostId: reply.id, url: reply.permalink });
    expect(f.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v1.0/${f.accountId}/replies` });
    expect(f.requests.at(-1)!.params.fields).toContain('replied_to');

    expect(await c.findPublished!(followUp(f, other, other, 1, { text: 'The reply' }))).toBeNull();
    expect(await c.findPublished!({ ...req, text: 'Not sent' })).toBeNull();
    // The post itself is not found among replies: /threads lists no replies.
    expect(await c.findPublished!(request(f, { text: 'The reply' }))).toBeNull();
  });

  test('Facebook: a first comment is POST /{post-id}/comments with the message; its URL is the permalink_url', async () => {
    const f = await fake('facebook');
    const c = connectorFor(f);
    const post = ref(await c.publish(request(f)));
    const before = f.requests.length;
    const result = await c.publish(followUp(f, post, post, 1, { text: 'Link in the first comment' }));

    expect(f.comments).toHaveLength(1);
    const comment = f.comments[0]!;
    expect(comment).toMatchObject({ postId: post.platformPostId, text: 'Link in the first comment', from: { id: f.accountId } });
    const sent = f.requests[before]!;
    expect(sent).toMatchObject({ method: 'POST', path: `/v26.0/${post.platformPostId}/comments` });
    expect(sent.params).toEqual({ message: 'Link in the first comment', access_token: TOKENS.facebook });
    expect(result).toEqual({
      platformPostId: comment.id,
      url: comment.permalink,
      publishedAt: new Date(Math.floor(comment.created.getTime() / 1000) * 1000).toISOString(),
    });
    expect(comment.id).toMatch(/^\d+_\d+$/);
    expect(f.posts).toHaveLength(1);
    expect(f.posts[0]!.stats.comments).toBe(1);
  });

  test('Facebook: a comment under a post that does not exist → permanent (100/33) with Graph’s message', async () => {
    const f = await fake('facebook');
    const gone = { platformPostId: `${f.accountId}_404`, url: 'https://www.facebook.com/x' };
    const err = await failure(connectorFor(f).publish(followUp(f, gone, gone, 1)));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100/33' } });
    expect(err.message).toStartWith(`Facebook 400: Unsupported post request. Object with ID '${gone.platformPostId}' does not exist`);
    expect(f.comments).toHaveLength(0);
  });

  test('Facebook: findPublished finds the Page’s comment whose answer was lost; someone else’s with the same text is not it', async () => {
    const f = await fake('facebook');
    const c = connectorFor(f, { timeoutMs: 300 });
    const post = ref(await c.publish(request(f)));
    f.seedComment({ postId: post.platformPostId, text: 'First!', by: 'other', ageMs: 60_000 });
    const req = followUp(f, post, post, 1, { text: 'First!' });
    expect(await c.findPublished!(req)).toBeNull();

    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const mine = f.comments.find((x) => x.from.id === f.accountId)!;
    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toMatchObject({ platformPostId: mine.id, url: mine.permalink });
    const list = f.requests.at(-1)!;
    expect(list).toMatchObject({ method: 'GET', path: `/v26.0/${post.platformPostId}/comments` });
    expect(list.params).toMatchObject({ order: 'reverse_chronological', fields: 'id,message,created_time,permalink_url,from' });

    expect(await c.findPublished!({ ...req, text: 'Not sent' })).toBeNull();
  });

  test('Instagram: a first comment is POST /{ig-media-id}/comments with the message; its URL is the post’s permalink + c/{id}/', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    const post = ref(await c.publish(request(f, { media: [image('a')] })));
    const before = f.requests.length;
    const result = await c.publish(followUp(f, post, post, 1, { text: 'More in the comments' }));

    const comment = f.comments[0]!;
    expect(comment).toMatchObject({ postId: post.platformPostId, text: 'More in the comments', from: { id: f.accountId } });
    expect(routes(f).slice(before)).toEqual([`POST /${post.platformPostId}/comments`]);
    expect(f.requests[before]!.params).toEqual({ message: 'More in the comments', access_token: TOKENS.instagram });
    expect(result).toEqual({ platformPostId: comment.id, url: `${post.url}c/${comment.id}/` });
    expect(post.url).toMatch(/^https:\/\/www\.instagram\.com\/p\/[^/]+\/$/);
  });

  test('Instagram: a comment under media that does not exist → permanent (100/33)', async () => {
    const f = await fake('instagram');
    const gone = { platformPostId: '17841400000099999', url: 'https://www.instagram.com/p/gone/' };
    const err = await failure(connectorFor(f).publish(followUp(f, gone, gone, 1)));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '100/33' } });
    expect(err.message).toContain(`Object with ID '${gone.platformPostId}' does not exist`);
    expect(f.comments).toHaveLength(0);
  });

  test('Instagram: findPublished pages through the comments for the account’s own; null when absent', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f, { timeoutMs: 300 });
    const post = ref(await c.publish(request(f, { media: [image('a')] })));
    for (let i = 0; i < 60; i++) f.seedComment({ postId: post.platformPostId, text: `comment ${i}`, by: 'other', ageMs: 60_000 - i });
    f.seedComment({ postId: post.platformPostId, text: 'Thanks for reading', by: 'other', ageMs: 1_000 });
    const req = followUp(f, post, post, 1, { text: 'Thanks for reading' });
    expect(await c.findPublished!(req)).toBeNull();

    f.failNext(1, 'accept-then-hang', 'comment');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const mine = f.comments.at(-1)!;
    expect(mine.from.id).toBe(f.accountId);
    const before = f.requests.length;
    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toEqual({
      platformPostId: mine.id,
      url: `${post.url}c/${mine.id}/`,
      publishedAt: new Date(Math.floor(mine.created.getTime() / 1000) * 1000).toISOString(),
    });
    const lists = f.requests.slice(before).filter((r) => r.path.endsWith('/comments'));
    expect(lists.map((r) => r.params.after ?? null)).toEqual([null, expect.any(String)]);
    expect(lists[0]!.params.fields).toBe('id,text,timestamp,username');

    expect(await c.findPublished!({ ...req, text: 'Not sent' })).toBeNull();
  });
});

describe('Meta options', () => {
  const containerAt = (f: FakeMeta, mediaType: string) => f.containers.find((c) => c.mediaType === mediaType)!;
  /** A container created straight on the fake, through the connector's Graph client. */
  const createRaw = (f: FakeMeta, params: Record<string, string>) =>
    createGraphClient('Instagram', { baseUrl: `${f.url}/v26.0` }).post(`/${f.accountId}/media`, params, TOKENS.instagram);

  test('reel: REELS with video_url, share_to_feed (default true), thumb_offset and collaborators', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    await c.publish(
      request(f, {
        media: [video('v')],
        options: { type: 'reel', shareToFeed: false, thumbOffsetMs: 1500, collaborators: ['ana', 'bo'] },
      }),
    );
    const reel = containerAt(f, 'REELS');
    expect(reel.params).toEqual({
      media_type: 'REELS',
      video_url: reel.fetched!.url,
      share_to_feed: 'false',
      thumb_offset: '1500',
      caption: 'Hello from the scheduler',
      collaborators: '["ana","bo"]',
    });
    expect(reel.collaborators).toEqual(['ana', 'bo']);
    expect(f.posts[0]).toMatchObject({ kind: 'VIDEO', text: 'Hello from the scheduler' });

    const g = await fake('instagram');
    await connectorFor(g).publish(request(g, { media: [video('v')], options: { type: 'reel' } }));
    expect(containerAt(g, 'REELS').params).toMatchObject({ share_to_feed: 'true' });
    expect(containerAt(g, 'REELS').params.thumb_offset).toBeUndefined();
  });

  test('story: STORIES with image_url or video_url and no caption; not listed among the media', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    await c.publish(request(f, { media: [image('a', 'alt', 'jpeg')], options: { type: 'story' } }));
    await c.publish(request(f, { media: [video('v')], options: { type: 'story' } }));
    const [still, moving] = f.containers;
    expect(still!.params).toEqual({ media_type: 'STORIES', image_url: still!.fetched!.url });
    expect(moving!.params).toEqual({ media_type: 'STORIES', video_url: moving!.fetched!.url });
    expect(f.posts.map((p) => [p.kind, p.text, p.story])).toEqual([
      ['IMAGE', '', true],
      ['VIDEO', '', true],
    ]);
    expect(await c.findPublished!(request(f, { media: [video('v')], options: { type: 'story' }, attempt: 2 }))).toBeNull();
  });

  test('carousel: item containers, then CAROUSEL with children and collaborators; feed with collaborators', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    await c.publish(
      request(f, { media: [image('a', null, 'jpeg'), image('b', null, 'jpeg')], options: { type: 'carousel', collaborators: ['ana'] } }),
    );
    const items = f.containers.filter((x) => x.carouselItem);
    expect(items).toHaveLength(2);
    expect(items.every((x) => x.params.collaborators === undefined)).toBe(true);
    expect(containerAt(f, 'CAROUSEL').params).toEqual({
      media_type: 'CAROUSEL',
      children: items.map((x) => x.id).join(','),
      caption: 'Hello from the scheduler',
      collaborators: '["ana"]',
    });
    expect(f.posts[0]!.kind).toBe('CAROUSEL_ALBUM');

    await c.publish(request(f, { text: 'Feed', media: [image('c', null, 'jpeg')], options: { type: 'feed', collaborators: ['bo'] } }));
    expect(f.containers.at(-1)!.params).toMatchObject({ image_url: expect.any(String), caption: 'Feed', collaborators: '["bo"]' });
    expect(f.containers.at(-1)!.collaborators).toEqual(['bo']);
  });

  test('refused before any request: a carousel of one or of eleven, a reel of an image, a story with collaborators, 4 collaborators, a feed of two', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    const cases: Partial<PublishRequest>[] = [
      { media: [image('a')], options: { type: 'carousel' } },
      { media: Array.from({ length: 11 }, (_, i) => image(`i${i}`)), options: { type: 'carousel' } },
      { media: [image('a')], options: { type: 'reel' } },
      { media: [image('a')], options: { type: 'story', collaborators: ['ana'] } },
      { media: [image('a')], options: { collaborators: ['a', 'b', 'c', 'd'] } },
      { media: [image('a'), image('b')], options: { type: 'feed' } },
      { media: [video('v')], options: { type: 'reel', thumbOffsetMs: -1 } },
    ];
    for (const over of cases) expect((await failure(c.publish(request(f, over)))).kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });

  test('the fake refuses as Graph does, and each refusal is permanent', async () => {
    const f = await fake('instagram');
    const img = f.hostMedia(jpeg, 'image/jpeg');
    const vid = f.hostMedia(videoBytes, 'video/mp4');
    const item = async () => String((await createRaw(f, { image_url: img, is_carousel_item: 'true' })).id);
    const twelve: string[] = [];
    for (let i = 0; i < 11; i++) twelve.push(await item());
    const refused: Record<string, string>[] = [
      { media_type: 'CAROUSEL', children: twelve[0]! },
      { media_type: 'CAROUSEL', children: twelve.join(',') },
      { media_type: 'REELS', image_url: img },
      { media_type: 'STORIES' },
      { media_type: 'STORIES', image_url: img, collaborators: '["ana"]' },
      { image_url: img, share_to_feed: 'true' },
      { media_type: 'CAROUSEL', children: twelve.slice(0, 2).join(','), share_to_feed: 'false' },
      { media_type: 'REELS', video_url: vid, collaborators: '["a","b","c","d"]' },
    ];
    for (const params of refused) {
      const err = await failure(createRaw(f, params));
      expect([err.kind, err.opts.status]).toEqual(['permanent', 400]);
    }
    // A caption on a story is taken and ignored.
    const story = String((await createRaw(f, { media_type: 'STORIES', image_url: img, caption: 'ignored' })).id);
    await createGraphClient('Instagram', { baseUrl: `${f.url}/v26.0` }).post(
      `/${f.accountId}/media_publish`,
      { creation_id: story },
      TOKENS.instagram,
    );
    expect(f.posts).toHaveLength(1);
    expect(f.posts[0]).toMatchObject({ text: '', story: true });
  });

  test('altText: the post’s alt text by media id on each image container, over the item’s own; an empty one sends none', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    await c.publish(request(f, { media: [image('a', 'Own alt', 'jpeg')], options: { altText: { a: 'A blue square on white' } } }));
    expect(f.containers[0]!.params).toMatchObject({ alt_text: 'A blue square on white' });

    const media = [image('a', null, 'jpeg'), video('v'), image('b', 'Own alt of b', 'jpeg'), image('c', 'Own alt of c', 'jpeg')];
    await c.publish(request(f, { text: 'Carousel', media, options: { type: 'carousel', altText: { a: 'First', c: '' } } }));
    const items = f.containers.filter((x) => x.carouselItem);
    expect(items.map((x) => [x.mediaType, x.params.alt_text])).toEqual([
      ['IMAGE', 'First'],
      ['VIDEO', undefined],
      ['IMAGE', 'Own alt of b'],
      ['IMAGE', undefined],
    ]);
    expect(containerAt(f, 'CAROUSEL').params.alt_text).toBeUndefined();
    // A media item's own alt text longer than Graph takes is cut to 1000 characters.
    await c.publish(request(f, { text: 'Long', media: [image('d', 'é'.repeat(1200), 'jpeg')] }));
    expect(Array.from(f.containers.at(-1)!.params.alt_text!)).toHaveLength(1000);
  });

  test('altText refused before any request: a video’s, an unknown id’s, a story’s, one over 1000 characters', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    const cases: Partial<PublishRequest>[] = [
      { media: [video('v')], options: { type: 'reel', altText: { v: 'A video' } } },
      { media: [image('a'), video('v')], options: { type: 'carousel', altText: { v: 'A video' } } },
      { media: [image('a')], options: { altText: { zzz: 'Not here' } } },
      { media: [image('a')], options: { type: 'story', altText: { a: 'A story' } } },
      { media: [image('a')], options: { altText: { a: 'x'.repeat(1001) } } },
    ];
    for (const over of cases) {
      const err = await failure(c.publish(request(f, over)));
      expect(err.kind).toBe('permanent');
      expect(err.message).toMatch(/^Instagram: .*alt text/);
    }
    expect(f.requests).toHaveLength(0);
  });

  test('the fake takes alt_text on image containers only, at most 1000 characters; each refusal is permanent', async () => {
    const f = await fake('instagram');
    const img = f.hostMedia(jpeg, 'image/jpeg');
    const vid = f.hostMedia(videoBytes, 'video/mp4');
    const refused: Record<string, string>[] = [
      { media_type: 'REELS', video_url: vid, alt_text: 'x' },
      { media_type: 'VIDEO', video_url: vid, is_carousel_item: 'true', alt_text: 'x' },
      { media_type: 'STORIES', image_url: img, alt_text: 'x' },
      { image_url: img, alt_text: 'x'.repeat(1001) },
    ];
    for (const params of refused) {
      const err = await failure(createRaw(f, params));
      expect([err.kind, err.opts.status]).toEqual(['permanent', 400]);
    }
    await createRaw(f, { image_url: img, alt_text: 'x'.repeat(1000) });
    await createRaw(f, { image_url: img, is_carousel_item: 'true', alt_text: 'An item' });
    expect(f.containers.map((x) => x.params.alt_text)).toEqual(['x'.repeat(1000), 'An item']);
  });

  test('story: a publish whose answer was lost is found among the live stories (GET /{ig-user-id}/stories)', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f, { timeoutMs: 300 });
    // The account's other stories: one of the day before the attempt, one video.
    f.seedPost({ text: '', ageMs: 3_600_000, kind: 'IMAGE', story: true });
    f.seedPost({ text: '', ageMs: 1_000, kind: 'VIDEO', story: true });
    const firstAttemptAt = new Date();
    const req = request(f, { media: [image('a', null, 'jpeg')], options: { type: 'story' }, firstAttemptAt });
    f.failNext(1, 'accept-then-hang');
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const mine = f.posts.at(-1)!;
    expect(mine.story).toBe(true);

    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toEqual({
      platformPostId: mine.id,
      url: `https://www.instagram.com/stories/fakeaccount/${mine.id}/`,
      publishedAt: new Date(Math.floor(mine.created.getTime() / 1000) * 1000).toISOString(),
    });
    const list = f.requests.at(-1)!;
    expect(`${list.method} ${list.path}`).toBe(`GET /v26.0/${f.accountId}/stories`);
    expect(list.params.fields).toBe('id,media_type,permalink,timestamp');
    // A story posted by hand after ours does not hide it: the oldest since the first attempt is ours.
    f.seedPost({ text: '', ageMs: -2_000, kind: 'IMAGE', story: true });
    expect((await c.findPublished!({ ...req, attempt: 3 }))?.platformPostId).toBe(mine.id);
  });

  test('story look-up: null for another media kind, for stories older than the first attempt, and without its time', async () => {
    const f = await fake('instagram');
    const c = connectorFor(f);
    f.seedPost({ text: '', ageMs: 10 * 60_000, kind: 'IMAGE', story: true });
    f.seedPost({ text: '', ageMs: 1_000, kind: 'VIDEO', story: true });
    const still = request(f, { media: [image('a')], options: { type: 'story' }, attempt: 2 });
    expect(await c.findPublished!({ ...still, firstAttemptAt: new Date(Date.now() - 2 * 60_000) })).toBeNull();
    expect(await c.findPublished!({ ...still, firstAttemptAt: new Date(Date.now() - 20 * 60_000) })).not.toBeNull();
    expect(await c.findPublished!(still)).toBeNull();
    // Stories are listed for 24 hours only.
    const g = await fake('instagram');
    g.seedPost({ text: '', ageMs: 25 * 3_600_000, kind: 'IMAGE', story: true });
    const old = request(g, {
      media: [image('a')],
      options: { type: 'story' },
      attempt: 2,
      firstAttemptAt: new Date(Date.now() - 26 * 3_600_000),
    });
    expect(await connectorFor(g).findPublished!(old)).toBeNull();
    // The user's media still leave stories out.
    expect(await connectorFor(g).findPublished!(request(g, { text: '', media: [image('a')], attempt: 2 }))).toBeNull();
  });

  test('Facebook link: the `link` of a text post; with photos or a video, at the end of the text', async () => {
    const f = await fake('facebook');
    const c = connectorFor(f);
    const link = 'https://example.com/article';
    await c.publish(request(f, { options: { link } }));
    expect(f.requests[0]!.params).toEqual({ message: 'Hello from the scheduler', link, access_token: TOKENS.facebook });
    expect(f.posts[0]).toMatchObject({ text: 'Hello from the scheduler', link });

    await c.publish(request(f, { text: 'Photos', media: [image('a')], options: { link } }));
    const feed = f.requests.at(-1)!;
    expect(feed.params.link).toBeUndefined();
    expect(feed.params.message).toBe(`Photos\n\n${link}`);
    expect(f.posts[1]!.text).toBe(`Photos\n\n${link}`);
    expect(f.posts[1]!.link).toBeUndefined();

    await c.publish(request(f, { text: `Already has ${link}`, media: [video('v')], options: { link } }));
    expect(f.uploads.at(-1)!.params).toEqual({ description: `Already has ${link}` });

    // A retry finds the photo post by the text as sent.
    const found = await c.findPublished!(request(f, { text: 'Photos', media: [image('a')], options: { link }, attempt: 2 }));
    expect(found?.platformPostId).toBe(f.posts[1]!.id);
  });
});
