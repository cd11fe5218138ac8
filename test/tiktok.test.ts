import { describe, expect, test } from 'bun:test';
import { chunking, createTikTokConnector } from '../platforms/tiktok.ts';
import { PlatformError, type MediaRef, type PublishRequest } from '../platforms/types.ts';
import { startFakeTikTok, tiktokErrorBody, type FakeTikTok, tikTokConnector } from './fakes/tiktok.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const MB = 1024 * 1024;
const fake = perTest(startFakeTikTok);

const connector = tikTokConnector;

function clip(id: string, size: number, over: Partial<MediaRef> = {}): MediaRef {
  const bytes = new Uint8Array(size).map((_, i) => (i * 13 + id.length) & 0xff);
  return { id, type: 'video', mimeType: 'video/mp4', fileName: `${id}.mp4`, read: async () => bytes, ...over };
}

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Our new kite in a storm #kites #fyp',
    media: [clip('clip-1', 2000)],
    idempotencyKey: 'post-1:channel-tt',
    credentials: { accessToken: 'good-token', refreshToken: 'good-refresh' },
    attempt: 1,
    ...over,
  };
}

const paths = (f: FakeTikTok) => f.requests.map((r) => `${r.method} ${r.path}`);
const ranges = (f: FakeTikTok) => f.requests.filter((r) => r.method === 'PUT').map((r) => r.contentRange);

describe('TikTok publish', () => {
  test('small video: creator_info, init (whole file as one chunk), PUT, status until the public post id', async () => {
    const f = await fake();
    const result = await connector(f).publish(request());

    expect(paths(f)).toEqual([
      'POST /v2/post/publish/creator_info/query/',
      'POST /v2/post/publish/video/init/',
      'PUT /upload/',
      'POST /v2/post/publish/status/fetch/',
      'POST /v2/post/publish/status/fetch/',
    ]);
    const p = f.publishes[0]!;
    expect(p.postInfo).toEqual({
      title: 'Our new kite in a storm #kites #fyp',
      privacy_level: 'PUBLIC_TO_EVERYONE',
      disable_duet: false,
      disable_comment: false,
      disable_stitch: false,
      brand_content_toggle: false,
      brand_organic_toggle: false,
    });
    expect(p.sourceInfo).toEqual({ source: 'FILE_UPLOAD', video_size: 2000, chunk_size: 2000, total_chunk_count: 1 });
    expect(ranges(f)).toEqual(['bytes 0-1999/2000']);
    expect(p.contentTypes).toEqual(['video/mp4']);
    // The int64 id is past 2^53: it must arrive digit for digit.
    expect(result).toEqual({
      platformPostId: '7380080137682881835',
      url: 'https://www.tiktok.com/@kite.maker/video/7380080137682881835',
    });
    expect(f.posts).toHaveLength(1);
  });

  test('11 MB video in 5 MB chunks: count = floor(size / chunk), the last chunk takes the rest', async () => {
    const f = await fake();
    await connector(f, { chunkSize: 5 * MB }).publish(request({ media: [clip('big', 11 * MB)] }));
    const p = f.publishes[0]!;
    expect(p.sourceInfo).toMatchObject({ video_size: 11 * MB, chunk_size: 5 * MB, total_chunk_count: 2 });
    expect(p.chunks).toEqual([5 * MB, 6 * MB]);
    expect(ranges(f)).toEqual([`bytes 0-${5 * MB - 1}/${11 * MB}`, `bytes ${5 * MB}-${11 * MB - 1}/${11 * MB}`]);
  });

  test('chunk plans follow the media transfer rules', () => {
    expect(chunking(4 * MB)).toEqual({ chunk: 4 * MB, count: 1 });
    expect(chunking(7 * MB)).toEqual({ chunk: 7 * MB, count: 1 });
    expect(chunking(12 * MB, 5 * MB)).toEqual({ chunk: 5 * MB, count: 2 });
    expect(chunking(70 * MB)).toEqual({ chunk: 10 * MB, count: 7 });
    expect(chunking(12 * MB, 1 * MB)).toEqual({ chunk: 5 * MB, count: 2 }); // at least 5 MB
    expect(chunking(200 * MB, 100 * MB)).toEqual({ chunk: 64 * MB, count: 3 }); // at most 64 MB
    const huge = chunking(4096 * MB, 5 * MB);
    expect(huge.count).toBeLessThanOrEqual(1000);
    expect(4096 * MB - (huge.count - 1) * huge.chunk).toBeLessThanOrEqual(128 * MB);
    expect(() => chunking(0)).toThrow(PlatformError);
  });

  test('privacy: PUBLIC_TO_EVERYONE when offered, else the first option; a configured level wins when offered', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['FOLLOWER_OF_CREATOR', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'];
    await connector(f).publish(request());
    await connector(f).publish(request({ idempotencyKey: 'k2', credentials: { accessToken: 'good-token', privacyLevel: 'SELF_ONLY' } }));
    await connector(f, { privacyLevel: 'MUTUAL_FOLLOW_FRIENDS' }).publish(request({ idempotencyKey: 'k3' }));
    await connector(f, { privacyLevel: 'PUBLIC_TO_EVERYONE' }).publish(request({ idempotencyKey: 'k4' }));
    expect(f.publishes.map((p) => p.postInfo.privacy_level)).toEqual([
      'FOLLOWER_OF_CREATOR',
      'SELF_ONLY',
      'MUTUAL_FOLLOW_FRIENDS',
      'FOLLOWER_OF_CREATOR',
    ]);
  });

  test("the creator's disabled comments, duets and stitches are honoured", async () => {
    const f = await fake();
    Object.assign(f.creator, { comment_disabled: true, duet_disabled: true, stitch_disabled: true });
    await connector(f).publish(request());
    expect(f.publishes[0]!.postInfo).toMatchObject({ disable_comment: true, disable_duet: true, disable_stitch: true });
  });

  test('QuickTime keeps its type; an empty caption sends no title', async () => {
    const f = await fake();
    await connector(f).publish(request({ text: '', media: [clip('mov', 900, { mimeType: 'video/quicktime' })] }));
    expect(f.publishes[0]!.contentTypes).toEqual(['video/quicktime']);
    expect(f.publishes[0]!.postInfo.title).toBeUndefined();
  });

  test('no media → permanent, nothing sent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ media: [] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('TikTok needs a video or 1 to 35 images to publish');
    expect(f.requests).toHaveLength(0);
  });

  test('a private post has no public id: publish_id and the profile url, without waiting', async () => {
    const f = await fake();
    const result = await connector(f).publish(request({ credentials: { accessToken: 'good-token', privacyLevel: 'SELF_ONLY' } }));
    expect(result).toEqual({ platformPostId: f.publishes[0]!.publishId, url: 'https://www.tiktok.com/@kite.maker' });
    expect(f.requests.filter((r) => r.path.endsWith('/status/fetch/'))).toHaveLength(2);
  });

  test('a public post waits through moderation for its id', async () => {
    const f = await fake({ moderationPolls: 3 });
    const result = await connector(f).publish(request());
    expect(result.platformPostId).toBe(f.posts[0]!.id);
    expect(f.requests.filter((r) => r.path.endsWith('/status/fetch/'))).toHaveLength(5);
  });

  test('moderation outlasting the wait: the post exists, so publish_id is returned rather than retrying', async () => {
    const f = await fake({ moderationPolls: 1_000_000 });
    const result = await connector(f, { pollTimeoutMs: 150 }).publish(request());
    expect(result).toEqual({ platformPostId: f.publishes[0]!.publishId, url: 'https://www.tiktok.com/@kite.maker' });
  });

  test('processing outlasting the wait → transient; findPublished then finds the post', async () => {
    const f = await fake({ processingPolls: 1_000_000 });
    const c = connector(f, { pollTimeoutMs: 100 });
    const err = await failure(c.publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('still PROCESSING_UPLOAD');
    f.publishes[0]!.processingPolls = 0;

    const found = await c.findPublished!(request({ attempt: 2 }));
    expect(found?.platformPostId).toBe(f.posts[0]!.id);
    expect(f.publishes).toHaveLength(1);
  });

  test('fail_reason: format/size checks → permanent, internal → transient, auth_removed → reauth', async () => {
    const f = await fake();
    f.failPublishNext('picture_size_check_failed');
    f.failPublishNext('internal');
    f.failPublishNext('auth_removed');
    const a = await failure(connector(f).publish(request()));
    expect([a.kind, a.message, a.opts.platformCode]).toEqual([
      'permanent',
      'TikTok publish failed: picture_size_check_failed',
      'picture_size_check_failed',
    ]);
    expect((await failure(connector(f).publish(request()))).kind).toBe('transient');
    expect((await failure(connector(f).publish(request()))).kind).toBe('reauth');
    expect(f.posts).toHaveLength(0);
  });

  test('a chunk lost on the way (timeout after TikTok took it): resent, 416 tells where to go on', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang', 'upload');
    await connector(f, { chunkSize: 5 * MB, uploadTimeoutMs: 300 }).publish(request({ media: [clip('big', 11 * MB)] }));
    expect(ranges(f)).toEqual([
      `bytes 0-${5 * MB - 1}/${11 * MB}`,
      `bytes 0-${5 * MB - 1}/${11 * MB}`,
      `bytes ${5 * MB}-${11 * MB - 1}/${11 * MB}`,
    ]);
    expect(f.publishes[0]!.chunks).toEqual([5 * MB, 6 * MB]);
    expect(f.posts).toHaveLength(1);
  });

  test('a 5xx on a chunk is retried', async () => {
    const f = await fake();
    f.failNext(2, { status: 502 }, 'upload');
    await connector(f).publish(request());
    expect(ranges(f)).toEqual(['bytes 0-1999/2000', 'bytes 0-1999/2000', 'bytes 0-1999/2000']);
    expect(f.posts).toHaveLength(1);
  });

  test('an expired upload_url (403) → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 403 }, 'upload');
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('TikTok upload 403: HTTP 403');
  });
});

describe('TikTok never posts twice', () => {
  test('status answer lost after the upload: findPublished asks status/fetch and returns the post', async () => {
    const f = await fake();
    const c = connector(f, { timeoutMs: 300 });
    f.failNext(1, 'hang', 'status');
    expect((await failure(c.publish(request()))).kind).toBe('transient');
    expect(f.posts).toHaveLength(1);

    const found = await c.findPublished!(request({ attempt: 2 }));
    expect(found).toEqual({ platformPostId: f.posts[0]!.id, url: `https://www.tiktok.com/@kite.maker/video/${f.posts[0]!.id}` });
    expect(f.publishes).toHaveLength(1);
  });

  test('an upload that stopped short → findPublished null, and the new publish posts once', async () => {
    const f = await fake();
    const c = connector(f, { chunkSize: 5 * MB });
    f.failNext(4, { status: 503 }, 'upload');
    const media = [clip('big', 11 * MB)];
    expect((await failure(c.publish(request({ media })))).kind).toBe('transient');
    expect(await c.findPublished!(request({ media, attempt: 2 }))).toBeNull();
    await c.publish(request({ media, attempt: 2 }));
    expect(f.publishes).toHaveLength(2);
    expect(f.posts).toHaveLength(1);
  });

  test('a failed publish → findPublished null; an unknown publish_id → null', async () => {
    const f = await fake();
    const c = connector(f, { timeoutMs: 300 });
    f.failPublishNext('internal');
    await failure(c.publish(request()));
    expect(await c.findPublished!(request({ attempt: 2 }))).toBeNull();

    f.failNext(1, 'hang', 'status');
    await failure(c.publish(request({ idempotencyKey: 'k2' })));
    f.failNext(1, { status: 400, body: tiktokErrorBody('invalid_publish_id', 'The publish_id does not exist') }, 'status');
    expect(await c.findPublished!(request({ idempotencyKey: 'k2', attempt: 2 }))).toBeNull();
  });

  test('after a worker restart: the recent video with the same caption is found in /v2/video/list/', async () => {
    const f = await fake();
    f.addPost({ caption: 'Our new kite in a storm #kites #fyp', createdMs: Date.now() - 3 * 86400_000 });
    f.addPost({ caption: 'Something else', createdMs: Date.now() - 1000 });
    const c = connector(f, { timeoutMs: 300 });
    f.failNext(1, 'hang', 'status');
    await failure(c.publish(request()));
    const post = f.posts.at(-1)!;

    const restarted = connector(f);
    const found = await restarted.findPublished!(request({ attempt: 2 }));
    expect(found).toEqual({
      platformPostId: post.id,
      url: `https://www.tiktok.com/@kite.maker/video/${post.id}`,
      publishedAt: new Date(Math.floor(post.createdMs / 1000) * 1000).toISOString(),
    });
    const list = f.requests.find((r) => r.path === '/v2/video/list/')!;
    expect(new URLSearchParams(list.search).get('fields')).toBe('id,title,video_description,create_time,share_url');
  });

  test('video list: long captions match on the 150 characters TikTok keeps; pages are followed', async () => {
    const f = await fake();
    const long = `${'Storm kite '.repeat(30)}end`;
    const target = f.addPost({ caption: long, createdMs: Date.now() - 60_000 });
    for (let i = 0; i < 25; i++) f.addPost({ caption: `other ${i}`, createdMs: Date.now() - 1_000 + i });
    const found = await connector(f).findPublished!(request({ text: long, attempt: 2 }));
    expect(found?.platformPostId).toBe(target.id);
    expect(f.requests.filter((r) => r.path === '/v2/video/list/')).toHaveLength(2);
    expect(await connector(f).findPublished!(request({ text: 'Not posted', attempt: 2 }))).toBeNull();
  });

  test('findPublished without video.list scope → reauth; with no caption → null without asking', async () => {
    const f = await fake();
    f.missingScopes.set('good-token', new Set(['video.list']));
    const err = await failure(connector(f).findPublished!(request({ attempt: 2 })));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('scope_not_authorized');
    expect(await connector(f).findPublished!(request({ text: '  ', attempt: 2 }))).toBeNull();
    expect(f.requests).toHaveLength(1);
  });
});

describe('TikTok error classes', () => {
  test('invalid token → reauth with TikTok message and code', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'revoked' } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts).toMatchObject({ status: 401, platformCode: 'access_token_invalid' });
    expect(err.message).toBe('TikTok 401: The access token is invalid or not found in the request. (access_token_invalid)');
    expect(f.publishes).toHaveLength(0);
  });

  test('expired token and missing video.publish scope → reauth', async () => {
    const f = await fake();
    f.missingScopes.set('good-token', new Set(['video.publish']));
    expect((await failure(connector(f).publish(request()))).opts.platformCode).toBe('scope_not_authorized');
    f.expireToken('good-token');
    expect((await failure(connector(f).publish(request()))).kind).toBe('reauth');
  });

  test('creator_info answers 200 with spam_risk_too_many_posts → transient, an hour later', async () => {
    const f = await fake();
    f.failNext(
      1,
      {
        status: 200,
        body: tiktokErrorBody('spam_risk_too_many_posts', 'The daily post cap from the API is reached for the current user.'),
      },
      'creator_info',
    );
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('TikTok 200: The daily post cap from the API is reached for the current user. (spam_risk_too_many_posts)');
    expect(err.opts.retryAfterMs).toBe(3_600_000);
    expect(f.publishes).toHaveLength(0);
  });

  test('403 spam_risk_too_many_posts at init → transient; banned user → permanent', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 403,
      body: tiktokErrorBody('spam_risk_too_many_posts', 'The daily post cap from the API is reached for the current user.'),
    });
    f.failNext(1, {
      status: 403,
      body: tiktokErrorBody('spam_risk_user_banned_from_posting', 'The user is banned from making new posts.'),
    });
    expect((await failure(connector(f).publish(request()))).kind).toBe('transient');
    const banned = await failure(connector(f).publish(request()));
    expect(banned.kind).toBe('permanent');
    expect(banned.message).toBe('TikTok 403: The user is banned from making new posts. (spam_risk_user_banned_from_posting)');
  });

  test('429 rate_limit_exceeded → transient with Retry-After, else the next minute', async () => {
    const f = await fake();
    const body = tiktokErrorBody('rate_limit_exceeded', 'Your request is blocked due to exceeding the API rate limit.');
    f.failNext(1, { status: 429, body, headers: { 'Retry-After': '12' } });
    f.failNext(1, { status: 429, body });
    const a = await failure(connector(f).publish(request()));
    const b = await failure(connector(f).publish(request()));
    expect([a.kind, a.opts.retryAfterMs, b.kind, b.opts.retryAfterMs]).toEqual(['transient', 12_000, 'transient', 60_000]);
    expect(a.message).toBe('TikTok 429: Your request is blocked due to exceeding the API rate limit. (rate_limit_exceeded)');
  });

  test('unaudited client posting publicly → permanent with TikTok message', async () => {
    const f = await fake({ unaudited: true });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe(
      'TikTok 403: Unaudited clients can only post to a private account. (unaudited_client_can_only_post_to_private_accounts)',
    );
    await connector(f).publish(request({ credentials: { accessToken: 'good-token', privacyLevel: 'SELF_ONLY' } }));
    expect(f.posts).toHaveLength(1);
  });

  test('caption over 2200 characters → permanent invalid_param', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ text: 'x'.repeat(2201) })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('TikTok 400: The title is invalid or longer than 2200 characters. (invalid_param)');
  });

  test('500 internal_error and 503 without a body → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: tiktokErrorBody('internal_error', 'Something went wrong.') });
    f.failNext(1, { status: 503 });
    const a = await failure(connector(f).publish(request()));
    const b = await failure(connector(f).publish(request()));
    expect([a.kind, b.kind, b.opts.status]).toEqual(['transient', 'transient', 503]);
    expect(b.message).toBe('TikTok 503: HTTP 503');
  });

  test('hang → transient timeout; network errors → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang', 'creator_info');
    const err = await failure(connector(f, { timeoutMs: 300 }).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');

    const stopped = await startFakeTikTok();
    await stopped.stop();
    expect((await failure(connector(stopped).publish(request()))).kind).toBe('transient');
    const closed = { url: `http://127.0.0.1:${await freePort()}` };
    expect((await failure(connector(closed).publish(request()))).kind).toBe('transient');
  });

  test('caller abort while polling → transient', async () => {
    const f = await fake({ processingPolls: 1_000_000 });
    const err = await failure(
      connector(f, { pollIntervalMs: 20, pollTimeoutMs: 60_000 }).publish(request({ signal: AbortSignal.timeout(200) })),
    );
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('aborted');
  });
});

describe('TikTok token expiring during a publish', () => {
  test('401 after the stored expiresAt passed, with a refresh token → transient; the retry refreshes and finds the post', async () => {
    const f = await fake({ processingPolls: 3 });
    const c = connector(f);
    const credentials = { accessToken: 'good-token', refreshToken: 'good-refresh', expiresAt: new Date(Date.now() + 30_000).toISOString() };
    f.failNext(
      1,
      { status: 401, body: tiktokErrorBody('access_token_invalid', 'The access token is invalid or not found in the request.') },
      'status',
    );
    const err = await failure(c.publish(request({ credentials })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('refreshed before the retry');

    const fresh = { ...credentials, ...(await c.refreshCredentials!(credentials)) };
    expect(await c.findPublished!(request({ credentials: fresh, attempt: 2 }))).toMatchObject({ platformPostId: f.posts[0]!.id });
    expect(f.publishes).toHaveLength(1);
  });

  test('the same 401 with a token still valid for long, or no refresh token → reauth', async () => {
    const f = await fake();
    const later = new Date(Date.now() + 3600_000).toISOString();
    const soon = new Date(Date.now() - 1000).toISOString();
    const body = tiktokErrorBody('access_token_invalid', 'The access token is invalid or not found in the request.');
    f.failNext(2, { status: 401, body }, 'creator_info');
    expect(
      (await failure(connector(f).publish(request({ credentials: { accessToken: 'good-token', refreshToken: 'r', expiresAt: later } }))))
        .kind,
    ).toBe('reauth');
    expect((await failure(connector(f).publish(request({ credentials: { accessToken: 'good-token', expiresAt: soon } })))).kind).toBe(
      'reauth',
    );
  });
});

describe('TikTok token refresh', () => {
  test('refresh → new access token, the rotated refresh token and both expiries; the old one stops working', async () => {
    const f = await fake();
    const stored = { accessToken: 'old', refreshToken: 'good-refresh', expiresAt: new Date().toISOString() };
    const fresh = await connector(f).refreshCredentials!(stored);
    expect(fresh).toEqual({
      accessToken: 'act.fresh1',
      refreshToken: 'rft.fresh1',
      expiresAt: expect.any(String),
      refreshExpiresAt: expect.any(String),
      openId: '-000OBJ2Vf5bWo1xxQzhCnTA2BtOoe2T8UuH',
    });
    expect(Date.parse(fresh.expiresAt as string) - Date.now()).toBeGreaterThan(7_190_000);
    expect(Date.parse(fresh.refreshExpiresAt as string) - Date.now()).toBeGreaterThan(179 * 86400_000);
    const merged = { ...stored, ...fresh };
    await connector(f).publish(request({ credentials: merged }));
    expect(f.publishes[0]!.token).toBe('act.fresh1');

    expect((await failure(connector(f).refreshCredentials!(stored))).kind).toBe('reauth');
    expect((await connector(f).refreshCredentials!(merged)).refreshToken).toBe('rft.fresh2');
  });

  test('invalid_grant → reauth with TikTok message; no refresh token → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).refreshCredentials!({ refreshToken: 'rft.revoked' }));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('TikTok token refresh 400: invalid_grant: Refresh token is invalid or expired.');
    expect((await failure(connector(f).refreshCredentials!({}))).kind).toBe('reauth');
  });

  test('invalid_grant inside a 200 answer → reauth too', async () => {
    const f = await fake();
    f.failNext(
      1,
      { status: 200, body: { error: 'invalid_grant', error_description: 'Refresh token is invalid or expired.', log_id: 'x' } },
      'token',
    );
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'good-refresh' }))).kind).toBe('reauth');
  });

  test('wrong client key → permanent; 5xx → transient; no OAuth client → no refresh', async () => {
    const f = await fake();
    const wrong = connector(f, { oauth: { clientId: 'other', clientSecret: 'x' } });
    const err = await failure(wrong.refreshCredentials!({ refreshToken: 'good-refresh' }));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('TikTok token refresh 401: invalid_client: Client key or secret is incorrect.');
    f.failNext(1, { status: 502 }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'good-refresh' }))).kind).toBe('transient');
    expect(createTikTokConnector().refreshCredentials).toBeUndefined();
  });
});

describe('fake TikTok contract', () => {
  test('init refuses a chunk plan that breaks the media transfer rules', async () => {
    const f = await fake();
    const init = (source_info: Record<string, unknown>) =>
      fetch(`${f.url}/v2/post/publish/video/init/`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
        body: JSON.stringify({
          post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
          source_info: { source: 'FILE_UPLOAD', ...source_info },
        }),
      });
    expect((await init({ video_size: 158 * MB, chunk_size: 158 * MB, total_chunk_count: 1 })).status).toBe(400);
    expect((await init({ video_size: 4 * MB, chunk_size: 1 * MB, total_chunk_count: 4 })).status).toBe(400);
    expect((await init({ video_size: 11 * MB, chunk_size: 5 * MB, total_chunk_count: 3 })).status).toBe(400);
    const good = await init({ video_size: 11 * MB, chunk_size: 5 * MB, total_chunk_count: 2 });
    expect(good.status).toBe(200);
    expect(((await good.json()) as { error: { code: string } }).error.code).toBe('ok');
  });

  test('init refuses fields TikTok does not define', async () => {
    const f = await fake();
    const res = await fetch(`${f.url}/v2/post/publish/video/init/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false, caption: 'x' },
        source_info: { source: 'FILE_UPLOAD', video_size: 10, chunk_size: 10, total_chunk_count: 1 },
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'invalid_param',
      message: 'Unknown field post_info.caption.',
    });
  });
});

describe('TikTok metrics', () => {
  test('video/query for up to 20 of the creator’s videos: views, likes, comments, shares; a private one is left out', async () => {
    const f = await fake();
    const c = connector(f);
    const a = f.addPost({ caption: 'a', stats: { view_count: 5000, like_count: 300, comment_count: 12, share_count: 9 } });
    const hidden = f.addPost({ caption: 'b', privacy: 'SELF_ONLY' });
    const read = await c.readMetrics!({ accessToken: 'good-token' }, [a.id, hidden.id]);
    expect(c.metricsBatch).toBe(20);
    expect(read).toEqual({ [a.id]: { views: 5000, likes: 300, replies: 12, reposts: 9 } });
    const q = f.requests.filter((r) => r.path === '/v2/video/query/');
    expect(q).toHaveLength(1);
  });

  test('a token without video.list is refused for its scope: the channel must be connected again', async () => {
    const f = await fake();
    f.missingScopes.set('good-token', new Set(['video.list']));
    const err = await connector(f).readMetrics!({ accessToken: 'good-token' }, ['1']).catch((e) => e);
    expect(err.kind).toBe('reauth');
  });
});

describe('TikTok capabilities', () => {
  test('creator_info/query: privacy options, longest video, interaction settings and username', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['SELF_ONLY'];
    f.creator.duet_disabled = true;
    f.creator.max_video_post_duration_sec = 180;
    const caps = await connector(f).readCapabilities!({ accessToken: 'good-token' }, {});
    expect(caps).toEqual({
      platform: 'TIKTOK',
      creatorUsername: 'kite.maker',
      privacyLevelOptions: ['SELF_ONLY'],
      maxVideoDurationSec: 180,
      commentDisabled: false,
      duetDisabled: true,
      stitchDisabled: false,
    });
    // The same endpoint publish reads, and nothing else.
    expect(paths(f)).toEqual(['POST /v2/post/publish/creator_info/query/']);
  });

  test('a creator with no privacy options is reported as such, not refused', async () => {
    const f = await fake();
    f.creator.privacy_level_options = [];
    const caps = await connector(f).readCapabilities!({ accessToken: 'good-token' }, {});
    expect(caps).toMatchObject({ platform: 'TIKTOK', privacyLevelOptions: [] });
  });

  test('an invalid token → reauth; a 429 → transient', async () => {
    const f = await fake();
    const err = await failure(connector(f).readCapabilities!({ accessToken: 'revoked' }, {}));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('access_token_invalid');
    f.failNext(1, { status: 429, body: tiktokErrorBody('rate_limit_exceeded', 'Too many requests.') }, 'creator_info');
    expect((await failure(connector(f).readCapabilities!({ accessToken: 'good-token' }, {}))).kind).toBe('transient');
  });
});

describe('TikTok options', () => {
  test('every option reaches post_info as TikTok names it', async () => {
    const f = await fake();
    await connector(f).publish(
      request({
        options: {
          privacyLevel: 'MUTUAL_FOLLOW_FRIENDS',
          disableComment: true,
          disableDuet: true,
          disableStitch: false,
          brandContentToggle: true,
          brandOrganicToggle: true,
          isAigc: true,
        },
      }),
    );
    expect(f.publishes[0]!.postInfo).toEqual({
      title: 'Our new kite in a storm #kites #fyp',
      privacy_level: 'MUTUAL_FOLLOW_FRIENDS',
      disable_duet: true,
      disable_comment: true,
      disable_stitch: false,
      brand_content_toggle: true,
      brand_organic_toggle: true,
      is_aigc: true,
    });
  });

  test('the post’s privacy level wins over the channel’s and the connector’s', async () => {
    const f = await fake();
    await connector(f, { privacyLevel: 'PUBLIC_TO_EVERYONE' }).publish(
      request({
        credentials: { accessToken: 'good-token', privacyLevel: 'MUTUAL_FOLLOW_FRIENDS' },
        options: { privacyLevel: 'SELF_ONLY' },
      }),
    );
    expect(f.publishes[0]!.postInfo.privacy_level).toBe('SELF_ONLY');
  });

  test('without options today’s choices stay', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: {} }));
    expect(f.publishes[0]!.postInfo).toEqual({
      title: 'Our new kite in a storm #kites #fyp',
      privacy_level: 'PUBLIC_TO_EVERYONE',
      disable_duet: false,
      disable_comment: false,
      disable_stitch: false,
      brand_content_toggle: false,
      brand_organic_toggle: false,
    });
  });

  test('what the creator turned off stays off, whatever the post asked', async () => {
    const f = await fake();
    Object.assign(f.creator, { comment_disabled: true, duet_disabled: true, stitch_disabled: true });
    await connector(f).publish(request({ options: { disableComment: false, disableDuet: false, disableStitch: false } }));
    expect(f.publishes[0]!.postInfo).toMatchObject({ disable_comment: true, disable_duet: true, disable_stitch: true });
  });

  test('a privacy level the creator no longer offers → permanent before anything is uploaded', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['FOLLOWER_OF_CREATOR', 'SELF_ONLY'];
    let read = false;
    const media = [clip('clip-1', 2000, { read: async () => ((read = true), new Uint8Array(2000)) })];
    const err = await failure(connector(f).publish(request({ media, options: { privacyLevel: 'PUBLIC_TO_EVERYONE' } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'privacy_level_option_mismatch' } });
    expect(err.message).toBe(
      'TikTok: privacy level PUBLIC_TO_EVERYONE is not offered to this account (it offers FOLLOWER_OF_CREATOR, SELF_ONLY)',
    );
    expect(paths(f)).toEqual(['POST /v2/post/publish/creator_info/query/']);
    expect(f.publishes).toHaveLength(0);
    expect(read).toBe(false);
  });

  test('TikTok’s own refusal of a privacy level it does not offer → permanent', async () => {
    const f = await fake();
    // creator_info offered the level; by video/init the creator had lost it.
    f.failNext(1, {
      status: 403,
      body: tiktokErrorBody('privacy_level_option_mismatch', 'privacy_level is not among the privacy_level_options.'),
    });
    const err = await failure(connector(f).publish(request({ options: { privacyLevel: 'PUBLIC_TO_EVERYONE' } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'privacy_level_option_mismatch' } });
    expect(f.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
  });

  test('branded content cannot be private: the fake refuses it at init → permanent, nothing uploaded', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ options: { privacyLevel: 'SELF_ONLY', brandContentToggle: true } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: 'invalid_param' } });
    expect(err.message).toBe('TikTok 400: Branded content visibility cannot be set to private. (invalid_param)');
    expect(f.publishes).toHaveLength(0);
    expect(f.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    // The creator's own brand may be private.
    await connector(f).publish(request({ idempotencyKey: 'k2', options: { privacyLevel: 'SELF_ONLY', brandOrganicToggle: true } }));
    expect(f.publishes[0]!.postInfo).toMatchObject({ privacy_level: 'SELF_ONLY', brand_organic_toggle: true });
  });

  test('the fake refuses a privacy level outside the creator’s options', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['SELF_ONLY'];
    const res = await fetch(`${f.url}/v2/post/publish/video/init/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({
        post_info: { privacy_level: 'PUBLIC_TO_EVERYONE', brand_content_toggle: false },
        source_info: { source: 'FILE_UPLOAD', video_size: 10, chunk_size: 10, total_chunk_count: 1 },
      }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('privacy_level_option_mismatch');
    expect(f.publishes).toHaveLength(0);
  });
});

describe('TikTok photo posts', () => {
  /** An image hosted on the fake (a signed storage URL in production), as MediaRef.url gives it. */
  function photo(f: FakeTikTok, id: string, mimeType = 'image/jpeg', over: Partial<MediaRef> = {}): MediaRef {
    const bytes = new Uint8Array(64).map((_, i) => (i * 7 + id.length) & 0xff);
    return {
      id,
      type: 'image',
      mimeType,
      fileName: `${id}.${mimeType.split('/')[1]}`,
      read: async () => bytes,
      url: async () => f.hostMedia(bytes, mimeType),
      ...over,
    };
  }

  const photoRequest = (f: FakeTikTok, over: Partial<PublishRequest> = {}) =>
    request({ text: 'Kites at dawn, in three pictures', media: [photo(f, 'a'), photo(f, 'b', 'image/webp'), photo(f, 'c')], ...over });

  /** POST content/init straight on the fake. */
  const contentInit = (f: FakeTikTok, body: Record<string, unknown>) =>
    fetch(`${f.url}/v2/post/publish/content/init/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('images without a video: creator_info, content/init (PHOTO, DIRECT_POST, PULL_FROM_URL), status until the public post id', async () => {
    const f = await fake();
    const result = await connector(f).publish(photoRequest(f));

    expect(paths(f)).toEqual([
      'POST /v2/post/publish/creator_info/query/',
      'POST /v2/post/publish/content/init/',
      'POST /v2/post/publish/status/fetch/',
      'POST /v2/post/publish/status/fetch/',
    ]);
    const p = f.publishes[0]!;
    expect([p.kind, p.postMode]).toEqual(['photo', 'DIRECT_POST']);
    expect(p.postInfo).toEqual({
      description: 'Kites at dawn, in three pictures',
      privacy_level: 'PUBLIC_TO_EVERYONE',
      disable_comment: false,
      auto_add_music: false,
      brand_content_toggle: false,
      brand_organic_toggle: false,
    });
    const urls = p.photos.map((x) => x!.url);
    expect(p.sourceInfo).toEqual({ source: 'PULL_FROM_URL', photo_images: urls, photo_cover_index: 0 });
    expect(p.photos.map((x) => x!.contentType)).toEqual(['image/jpeg', 'image/webp', 'image/jpeg']);
    // Nothing is uploaded: TikTok pulls the images.
    expect(f.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    const post = f.posts[0]!;
    expect(post).toMatchObject({ photo: true, caption: 'Kites at dawn, in three pictures' });
    expect(result).toEqual({ platformPostId: post.id, url: `https://www.tiktok.com/@kite.maker/photo/${post.id}` });
  });

  test('options: comments, music and brand reach post_info; duets, stitches and the AI label are video fields, not sent', async () => {
    const f = await fake();
    await connector(f).publish(
      photoRequest(f, {
        options: {
          privacyLevel: 'MUTUAL_FOLLOW_FRIENDS',
          disableComment: true,
          autoAddMusic: true,
          brandContentToggle: true,
          brandOrganicToggle: true,
          disableDuet: true,
          disableStitch: true,
          isAigc: true,
        },
      }),
    );
    expect(f.publishes[0]!.postInfo).toEqual({
      description: 'Kites at dawn, in three pictures',
      privacy_level: 'MUTUAL_FOLLOW_FRIENDS',
      disable_comment: true,
      auto_add_music: true,
      brand_content_toggle: true,
      brand_organic_toggle: true,
    });
  });

  test('a private photo post has no public id: publish_id and the profile url; the creator’s comment setting stays', async () => {
    const f = await fake();
    f.creator.comment_disabled = true;
    const result = await connector(f).publish(photoRequest(f, { text: '', options: { privacyLevel: 'SELF_ONLY', disableComment: false } }));
    const p = f.publishes[0]!;
    expect(p.postInfo.description).toBeUndefined();
    expect(p.postInfo.disable_comment).toBe(true);
    expect(result).toEqual({ platformPostId: p.publishId, url: 'https://www.tiktok.com/@kite.maker' });
  });

  test('refused before any request: a PNG, 36 images, images with a video, an image without a URL', async () => {
    const f = await fake();
    const c = connector(f);
    const png = await failure(c.publish(photoRequest(f, { media: [photo(f, 'a'), photo(f, 'shot', 'image/png')] })));
    expect(png).toMatchObject({ kind: 'permanent', opts: { platformCode: 'file_format_check_failed' } });
    expect(png.message).toBe('TikTok photo posts take JPEG or WEBP images; shot.png is image/png');
    const many = await failure(c.publish(photoRequest(f, { media: Array.from({ length: 36 }, (_, i) => photo(f, `p${i}`)) })));
    expect([many.kind, many.message]).toEqual(['permanent', 'TikTok: a photo post has at most 35 images; this one has 36']);
    const both = await failure(c.publish(photoRequest(f, { media: [clip('clip-1', 2000), photo(f, 'a')] })));
    expect([both.kind, both.message]).toEqual(['permanent', 'TikTok takes one video, or 1 to 35 images, not both']);
    const noUrl = await failure(c.publish(photoRequest(f, { media: [photo(f, 'a', 'image/jpeg', { url: undefined })] })));
    expect(noUrl.kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });

  test('35 images are one post; a mediaUrl resolver, when configured, gives the URLs', async () => {
    const f = await fake();
    const asked: string[] = [];
    const c = connector(f, {
      mediaUrl: async (item) => {
        asked.push(item.id);
        return f.hostMedia(new Uint8Array([1, 2, 3]), item.mimeType);
      },
    });
    const media = Array.from({ length: 35 }, (_, i) => photo(f, `p${i}`, 'image/jpeg', { url: undefined }));
    await c.publish(photoRequest(f, { media }));
    expect(asked).toEqual(media.map((m) => m.id));
    expect(f.publishes[0]!.photos).toHaveLength(35);
    expect(f.posts).toHaveLength(1);
  });

  test('an image TikTok cannot pull: status FAILED photo_pull_failed → permanent, a media refusal', async () => {
    const f = await fake();
    const gone = photo(f, 'gone', 'image/jpeg', { url: async () => `${f.url}/__media/missing` });
    const err = await failure(connector(f).publish(photoRequest(f, { media: [photo(f, 'a'), gone] })));
    expect(err).toMatchObject({
      kind: 'permanent',
      message: 'TikTok publish failed: photo_pull_failed',
      opts: { platformCode: 'photo_pull_failed' },
    });
    expect(f.posts).toHaveLength(0);
  });

  test('URLs outside the app’s verified prefixes → 403 url_ownership_unverified, permanent', async () => {
    const f = await fake();
    f.verifiedUrlPrefixes.splice(0, 1, 'https://media.example.com/');
    const err = await failure(connector(f).publish(photoRequest(f)));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 403, platformCode: 'url_ownership_unverified' } });
    expect(f.publishes).toHaveLength(0);
  });

  test('the status answer lost: findPublished asks status/fetch (PROCESSING_DOWNLOAD, then the post) and never posts twice', async () => {
    const f = await fake({ processingPolls: 2 });
    const c = connector(f, { timeoutMs: 300 });
    f.failNext(1, 'hang', 'status');
    const req = photoRequest(f);
    expect((await failure(c.publish(req))).kind).toBe('transient');
    const found = await c.findPublished!({ ...req, attempt: 2 });
    const post = f.posts[0]!;
    expect(found).toEqual({ platformPostId: post.id, url: `https://www.tiktok.com/@kite.maker/photo/${post.id}` });
    expect(f.publishes).toHaveLength(1);
    expect(f.posts).toHaveLength(1);
  });

  test('a privacy level the creator no longer offers → permanent before content/init', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['SELF_ONLY'];
    const err = await failure(connector(f).publish(photoRequest(f, { options: { privacyLevel: 'PUBLIC_TO_EVERYONE' } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'privacy_level_option_mismatch' } });
    expect(paths(f)).toEqual(['POST /v2/post/publish/creator_info/query/']);
  });

  test('the fake’s content/init refuses as TikTok does: 0 or 36 images, a PNG, a privacy level not offered, no post_mode, video fields', async () => {
    const f = await fake();
    f.creator.privacy_level_options = ['SELF_ONLY'];
    const jpeg = f.hostMedia(new Uint8Array([1]), 'image/jpeg');
    const png = f.hostMedia(new Uint8Array([1]), 'image/png');
    const good = {
      media_type: 'PHOTO',
      post_mode: 'DIRECT_POST',
      post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
      source_info: { source: 'PULL_FROM_URL', photo_images: [jpeg], photo_cover_index: 0 },
    };
    const source = (over: Record<string, unknown>) => ({ ...good, source_info: { ...good.source_info, ...over } });
    const refused: [Record<string, unknown>, number, string][] = [
      [source({ photo_images: [] }), 400, 'invalid_param'],
      [source({ photo_images: Array.from({ length: 36 }, () => jpeg) }), 400, 'invalid_param'],
      [source({ photo_images: [jpeg, png] }), 400, 'invalid_param'],
      [source({ photo_cover_index: 1 }), 400, 'invalid_param'],
      [{ ...good, post_info: { ...good.post_info, privacy_level: 'PUBLIC_TO_EVERYONE' } }, 403, 'privacy_level_option_mismatch'],
      [{ ...good, post_mode: undefined }, 400, 'invalid_param'],
      [{ ...good, media_type: 'VIDEO' }, 400, 'invalid_param'],
      [{ ...good, post_info: { ...good.post_info, disable_duet: true } }, 400, 'invalid_param'],
      [source({ source: 'FILE_UPLOAD' }), 400, 'invalid_param'],
    ];
    for (const [body, status, code] of refused) {
      const res = await contentInit(f, body);
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([status, code]);
    }
    expect(f.publishes).toHaveLength(0);
    const res = await contentInit(f, good);
    expect(((await res.json()) as { data: { publish_id: string } }).data.publish_id).toBe(f.publishes[0]!.publishId);
  });
});
