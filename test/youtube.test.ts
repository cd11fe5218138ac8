import { describe, expect, test } from 'bun:test';
import {
  buildDescription,
  buildTitle,
  createYouTubeConnector,
  msUntilMidnightPacific,
  type YouTubeConnectorOptions,
} from '../platforms/youtube.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { FAKE_CLIENT, googleErrorBody, startFakeYouTube, VIDEO_CATEGORIES, type FakeYouTube } from './fakes/youtube.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const KIB = 1024;
const fake = perTest(startFakeYouTube);

function connector(f: { url: string }, over: YouTubeConnectorOptions = {}) {
  return createYouTubeConnector({
    baseUrl: f.url,
    uploadBaseUrl: f.url,
    authBaseUrl: f.url,
    oauth: FAKE_CLIENT,
    timeoutMs: 2_000,
    uploadTimeoutMs: 2_000,
    resumeDelayMs: 5,
    ...over,
  });
}

function clip(id: string, size: number, over: Partial<MediaRef> = {}): MediaRef {
  const bytes = new Uint8Array(size).map((_, i) => (i * 7 + id.length) & 0xff);
  return { id, type: 'video', mimeType: 'video/mp4', fileName: `${id}.mp4`, read: async () => bytes, ...over };
}

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Launch day\nOur new kite flies in any weather.',
    media: [clip('clip-1', 1000)],
    idempotencyKey: 'post-1:channel-yt',
    credentials: { accessToken: 'good-token', refreshToken: 'good-refresh' },
    attempt: 1,
    ...over,
  };
}

const puts = (f: FakeYouTube) => f.requests.filter((r) => r.method === 'PUT').map((r) => r.contentRange);
const inserts = (f: FakeYouTube) => f.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/upload/')).length;

describe('YouTube publish', () => {
  test('video: resumable session with snippet + status, bytes PUT, returns the watch url', async () => {
    const f = await fake();
    const result = await connector(f).publish(request());

    expect(f.sessions).toHaveLength(1);
    const s = f.sessions[0]!;
    expect(s.metadata).toEqual({
      snippet: { title: 'Launch day', description: 'Launch day\nOur new kite flies in any weather.' },
      status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
    });
    expect(s).toMatchObject({ size: 1000, mimeType: 'video/mp4', token: 'good-token', chunks: [1000] });
    const post = f.requests[0]!;
    expect(new URLSearchParams(post.search).get('part')).toBe('snippet,status');
    expect(puts(f)).toEqual(['bytes 0-999/1000']);
    expect(f.requests[1]!.authorization).toBe('Bearer good-token');

    const v = f.videos[0]!;
    expect(f.videos).toHaveLength(1);
    expect(result).toEqual({ platformPostId: v.id, url: `https://www.youtube.com/watch?v=${v.id}`, publishedAt: v.publishedAt });
  });

  test('large video: chunks of a multiple of 256 KiB with Content-Range, last chunk smaller', async () => {
    const f = await fake();
    await connector(f, { chunkSize: 300 * KIB }).publish(request({ media: [clip('big', 600 * KIB)] }));
    expect(f.sessions[0]!.chunks).toEqual([256 * KIB, 256 * KIB, 88 * KIB]);
    expect(puts(f)).toEqual(['bytes 0-262143/614400', 'bytes 262144-524287/614400', 'bytes 524288-614399/614400']);
    expect(f.videos[0]!.size).toBe(600 * KIB);
  });

  test('privacyStatus and categoryId come from the channel credentials', async () => {
    const f = await fake();
    await connector(f, { privacyStatus: 'private' }).publish(
      request({ credentials: { accessToken: 'good-token', privacyStatus: 'unlisted', categoryId: '28' } }),
    );
    expect(f.videos[0]).toMatchObject({ privacyStatus: 'unlisted', categoryId: '28', selfDeclaredMadeForKids: false });

    await connector(f, { privacyStatus: 'private' }).publish(request({ idempotencyKey: 'post-2:channel-yt' }));
    expect(f.videos[1]!.privacyStatus).toBe('private');
  });

  test('title: first non-empty line without < >, at most 100 characters; else the file name', async () => {
    expect(buildTitle('\n\n  <b>Big</b> news  \nmore', 'x.mp4')).toBe('‹b›Big‹/b› news');
    expect(buildTitle('🎉'.repeat(120), 'x.mp4')).toBe('🎉'.repeat(100));
    expect(buildTitle('  \n ', 'holiday-clip.final.mp4')).toBe('holiday-clip.final');
    expect(buildTitle('', '.mp4')).toBe('Untitled');

    const f = await fake();
    await connector(f).publish(request({ text: '', media: [clip('summer-reel', 50)] }));
    expect(f.videos[0]!).toMatchObject({ title: 'summer-reel', description: '' });
  });

  test('description: the whole text, < > replaced, cut to 5000 UTF-8 bytes on a character boundary', async () => {
    expect(buildDescription('a < b > c')).toBe('a ‹ b › c');
    const long = 'é'.repeat(3000); // 6000 bytes
    const d = buildDescription(long);
    expect(new TextEncoder().encode(d).byteLength).toBe(5000);
    expect(d).toBe('é'.repeat(2500));

    const f = await fake();
    await connector(f).publish(request({ text: `Title line\n${long}` }));
    expect(new TextEncoder().encode(f.videos[0]!.description).byteLength).toBeLessThanOrEqual(5000);
  });

  test('no video in the post → permanent, nothing sent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ media: [] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('YouTube needs a video to publish');
    expect(f.requests).toHaveLength(0);
  });

  test('a chunk answered 503 after it arrived: status query, resume from Range, one video', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: googleErrorBody(503, 'backendError', 'Backend Error', 'UNAVAILABLE'), accept: true }, 'upload');
    await connector(f, { chunkSize: 256 * KIB }).publish(request({ media: [clip('big', 600 * KIB)] }));
    expect(puts(f)).toEqual(['bytes 0-262143/614400', 'bytes */614400', 'bytes 262144-524287/614400', 'bytes 524288-614399/614400']);
    expect(f.sessions).toHaveLength(1);
    expect(f.sessions[0]!.chunks).toEqual([256 * KIB, 256 * KIB, 88 * KIB]);
    expect(f.videos).toHaveLength(1);
  });

  test('a chunk lost before it arrived (503, not taken): the same range is sent again', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: googleErrorBody(500, 'internalError', 'Internal error', 'INTERNAL') }, 'upload');
    await connector(f, { chunkSize: 256 * KIB }).publish(request({ media: [clip('big', 300 * KIB)] }));
    expect(puts(f)).toEqual(['bytes 0-262143/307200', 'bytes */307200', 'bytes 0-262143/307200', 'bytes 262144-307199/307200']);
    expect(f.videos).toHaveLength(1);
  });

  test('a connection lost mid-chunk (timeout) is resumed within the same publish', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang', 'upload');
    await connector(f, { chunkSize: 256 * KIB, uploadTimeoutMs: 300 }).publish(request({ media: [clip('big', 300 * KIB)] }));
    expect(puts(f)).toEqual(['bytes 0-262143/307200', 'bytes */307200', 'bytes 262144-307199/307200']);
    expect(f.videos).toHaveLength(1);
  });

  test('resumes exhausted → transient; the next attempt resumes the same session (no new session)', async () => {
    const f = await fake();
    const c = connector(f, { chunkSize: 256 * KIB, resumeAttempts: 1 });
    f.failNext(1, { status: 503, body: googleErrorBody(503, 'backendError', 'Backend Error', 'UNAVAILABLE'), accept: true }, 'upload');
    f.failNext(1, { status: 503, body: googleErrorBody(503, 'backendError', 'Backend Error', 'UNAVAILABLE') }, 'upload');
    const err = await failure(c.publish(request({ media: [clip('big', 600 * KIB)] })));
    expect(puts(f)).toEqual(['bytes 0-262143/614400', 'bytes */614400']);
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('YouTube 503: Backend Error (backendError)');
    expect(f.videos).toHaveLength(0);

    await c.publish(request({ media: [clip('big', 600 * KIB)], attempt: 2 }));
    expect(inserts(f)).toBe(1);
    expect(puts(f).slice(2)).toEqual(['bytes */614400', 'bytes 262144-524287/614400', 'bytes 524288-614399/614400']);
    expect(f.sessions[0]!.chunks).toEqual([256 * KIB, 256 * KIB, 88 * KIB]);
    expect(f.videos).toHaveLength(1);
  });

  test('an expired session (404) mid-upload starts a new one; still one video', async () => {
    const f = await fake();
    const c = connector(f, { chunkSize: 256 * KIB, resumeAttempts: 0 });
    f.failNext(1, { status: 503, body: googleErrorBody(503, 'backendError', 'Backend Error', 'UNAVAILABLE'), accept: true }, 'upload');
    expect((await failure(c.publish(request({ media: [clip('big', 600 * KIB)] })))).kind).toBe('transient');
    f.expireSession(f.sessions[0]!.uploadId);

    await c.publish(request({ media: [clip('big', 600 * KIB)], attempt: 2 }));
    expect(f.sessions).toHaveLength(2);
    expect(f.sessions[1]!.chunks).toEqual([256 * KIB, 256 * KIB, 88 * KIB]);
    expect(f.videos).toHaveLength(1);
  });
});

describe('YouTube never posts twice', () => {
  test('last chunk accepted but its answer lost: findPublished asks the session and returns that video', async () => {
    const f = await fake();
    const c = connector(f, { uploadTimeoutMs: 300, resumeAttempts: 0 });
    f.failNext(1, 'accept-then-hang', 'upload');
    expect((await failure(c.publish(request()))).kind).toBe('transient');
    expect(f.videos).toHaveLength(1);

    const found = await c.findPublished!(request({ attempt: 2 }));
    const v = f.videos[0]!;
    expect(found).toEqual({ platformPostId: v.id, url: `https://www.youtube.com/watch?v=${v.id}`, publishedAt: v.publishedAt });
    expect(puts(f).at(-1)).toBe('bytes */1000');
    expect(inserts(f)).toBe(1);
  });

  test('publish again with the same key after a lost answer returns the same video', async () => {
    const f = await fake();
    const c = connector(f, { uploadTimeoutMs: 300, resumeAttempts: 0 });
    f.failNext(1, 'accept-then-hang', 'upload');
    await failure(c.publish(request()));
    const again = await c.publish(request({ attempt: 2 }));
    expect(again.platformPostId).toBe(f.videos[0]!.id);
    expect(f.videos).toHaveLength(1);
    expect(inserts(f)).toBe(1);
  });

  test('findPublished with an unfinished session → null, and publish resumes that session', async () => {
    const f = await fake();
    const c = connector(f, { chunkSize: 256 * KIB, resumeAttempts: 0 });
    f.failNext(1, { status: 502, body: googleErrorBody(502, 'backendError', 'Bad Gateway', 'UNAVAILABLE'), accept: true }, 'upload');
    await failure(c.publish(request({ media: [clip('big', 300 * KIB)] })));
    expect(await c.findPublished!(request({ media: [clip('big', 300 * KIB)], attempt: 2 }))).toBeNull();
    await c.publish(request({ media: [clip('big', 300 * KIB)], attempt: 2 }));
    expect(inserts(f)).toBe(1);
    expect(f.videos).toHaveLength(1);
  });

  test('after a worker restart: findPublished finds the recent upload by title and description', async () => {
    const f = await fake();
    f.addVideo({
      title: 'Launch day',
      description: 'Launch day\nOur new kite flies in any weather.',
      publishedAt: new Date(Date.now() - 3 * 86400_000).toISOString(),
    });
    f.addVideo({ title: 'Launch day', description: 'Another description' });
    expect(await connector(f).findPublished!(request({ attempt: 2 }))).toBeNull();

    const earlier = connector(f, { uploadTimeoutMs: 300, resumeAttempts: 0 });
    f.failNext(1, 'accept-then-hang', 'upload');
    await failure(earlier.publish(request()));

    const restarted = connector(f);
    const found = await restarted.findPublished!(request({ attempt: 2 }));
    const v = f.videos.at(-1)!;
    expect(found).toEqual({ platformPostId: v.id, url: `https://www.youtube.com/watch?v=${v.id}`, publishedAt: v.publishedAt });
    expect(f.requests.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual([
      '/youtube/v3/channels',
      '/youtube/v3/playlistItems',
      '/youtube/v3/channels',
      '/youtube/v3/playlistItems',
    ]);
  });

  test('findPublished pages through the uploads playlist while the videos are recent', async () => {
    const f = await fake();
    const target = f.addVideo({
      title: 'Launch day',
      description: 'Launch day\nOur new kite flies in any weather.',
      publishedAt: new Date(Date.now() - 3600_000).toISOString(),
    });
    for (let i = 0; i < 55; i++) f.addVideo({ title: `Other ${i}`, description: 'x' });
    const found = await connector(f).findPublished!(request({ attempt: 2 }));
    expect(found?.platformPostId).toBe(target.id);
    expect(f.requests.filter((r) => r.path === '/youtube/v3/playlistItems')).toHaveLength(2);
  });

  test('findPublished with a token lacking youtube.readonly → reauth (the channel needs reconnecting)', async () => {
    const f = await fake();
    f.validTokens.delete('good-token');
    f.uploadOnlyTokens.add('good-token');
    const err = await failure(connector(f).findPublished!(request({ attempt: 2 })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('YouTube 403: Request had insufficient authentication scopes. (insufficientPermissions)');
  });
});

describe('YouTube error classes', () => {
  test('invalid token (401 authError) → reauth with Google message', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'revoked' } })));
    expect(err.kind).toBe('reauth');
    expect(err.opts).toMatchObject({ status: 401, platformCode: 'authError' });
    expect(err.message).toStartWith('YouTube 401: Request had invalid authentication credentials.');
    expect(f.sessions).toHaveLength(0);
  });

  test('expired token → reauth; missing accessToken → reauth', async () => {
    const f = await fake();
    f.expireToken('good-token');
    expect((await failure(connector(f).publish(request()))).kind).toBe('reauth');
    const err = await failure(connector(f).publish(request({ credentials: {} })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toContain('accessToken');
  });

  test('quotaExceeded (403) → transient until midnight Pacific, HTML stripped from the message', async () => {
    const f = await fake();
    const message = 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.';
    f.failNext(1, { status: 403, body: googleErrorBody(403, 'quotaExceeded', message) });
    const before = msUntilMidnightPacific();
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe('YouTube 403: The request cannot be completed because you have exceeded your quota. (quotaExceeded)');
    expect(err.opts.platformCode).toBe('quotaExceeded');
    expect(err.opts.retryAfterMs).toBeGreaterThan(before - 5_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(before);
  });

  test('rateLimitExceeded / userRateLimitExceeded (403) → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 403, body: googleErrorBody(403, 'rateLimitExceeded', 'Rate Limit Exceeded') });
    f.failNext(1, { status: 403, body: googleErrorBody(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded') });
    const a = await failure(connector(f).publish(request()));
    const b = await failure(connector(f).publish(request()));
    expect([a.kind, b.kind]).toEqual(['transient', 'transient']);
    expect(b.message).toBe('YouTube 403: User Rate Limit Exceeded (userRateLimitExceeded)');
  });

  test('429 with Retry-After → transient with retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: googleErrorBody(429, 'rateLimitExceeded', 'Too Many Requests', 'RESOURCE_EXHAUSTED'),
      headers: { 'Retry-After': '30' },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 30_000 });
  });

  test('uploadLimitExceeded (400) → permanent with Google message', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 400,
      body: googleErrorBody(400, 'uploadLimitExceeded', 'The user has exceeded the number of videos they may upload.'),
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('YouTube 400: The user has exceeded the number of videos they may upload. (uploadLimitExceeded)');
  });

  test('metadata rejected by the API (invalidCategoryId) → permanent with Google message', async () => {
    const f = await fake();
    const err = await failure(connector(f, { categoryId: '999' }).publish(request()));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('YouTube 400: The request metadata specifies an invalid video category. (invalidCategoryId)');
  });

  test('a refused final chunk is permanent and drops the session', async () => {
    const f = await fake();
    const c = connector(f);
    f.failNext(
      1,
      { status: 400, body: googleErrorBody(400, 'mediaBodyRequired', 'The request does not include the video content.') },
      'upload',
    );
    const err = await failure(c.publish(request()));
    expect(err.kind).toBe('permanent');
    await c.publish(request({ attempt: 2 }));
    expect(inserts(f)).toBe(2);
  });

  test('500 / 503 on the session start → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: googleErrorBody(500, 'internalError', 'Internal error encountered.', 'INTERNAL') });
    f.failNext(1, { status: 503, body: googleErrorBody(503, 'backendError', 'Backend Error', 'UNAVAILABLE') });
    const a = await failure(connector(f).publish(request()));
    const b = await failure(connector(f).publish(request()));
    expect([a.kind, a.opts.status, b.kind, b.opts.status]).toEqual(['transient', 500, 'transient', 503]);
    expect(a.message).toBe('YouTube 500: Internal error encountered. (internalError)');
  });

  test('hang on the session start → transient timeout', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(f, { timeoutMs: 300 }).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');
  });

  test('network errors (stopped server, closed port) → transient', async () => {
    const f = await startFakeYouTube();
    await f.stop();
    expect((await failure(connector(f).publish(request()))).kind).toBe('transient');
    const closed = { url: `http://127.0.0.1:${await freePort()}` };
    expect((await failure(connector(closed).publish(request()))).kind).toBe('transient');
  });
});

describe('YouTube token expiring during a publish', () => {
  test('401 on a chunk after the stored expiresAt passed → transient; the retry resumes the same session', async () => {
    const f = await fake();
    const c = connector(f, { chunkSize: 256 * KIB });
    const credentials = { accessToken: 'good-token', refreshToken: 'good-refresh', expiresAt: new Date(Date.now() + 10_000).toISOString() };
    const media = [clip('big', 600 * KIB)];
    f.failNext(
      1,
      { status: 401, body: googleErrorBody(401, 'authError', 'Invalid Credentials', 'UNAUTHENTICATED'), accept: true },
      'upload',
    );
    const err = await failure(c.publish(request({ credentials, media })));
    expect(err.kind).toBe('transient');
    expect(err.message).toBe(
      'YouTube 401: Invalid Credentials (authError) (the access token expired during the publish; it is refreshed before the retry)',
    );

    const fresh = { ...credentials, ...(await c.refreshCredentials!(credentials)) };
    expect(await c.findPublished!(request({ credentials: fresh, media, attempt: 2 }))).toBeNull();
    await c.publish(request({ credentials: fresh, media, attempt: 2 }));
    expect(inserts(f)).toBe(1);
    expect(f.videos).toHaveLength(1);
  });

  test('a 401 with a token still valid for long → reauth', async () => {
    const f = await fake();
    const credentials = { accessToken: 'revoked', refreshToken: 'good-refresh', expiresAt: new Date(Date.now() + 3600_000).toISOString() };
    expect((await failure(connector(f).publish(request({ credentials })))).kind).toBe('reauth');
  });
});

describe('fake YouTube contract', () => {
  test('unknown metadata fields and chunks off the 256 KiB grid are refused', async () => {
    const f = await fake();
    const start = (body: unknown) =>
      fetch(`${f.url}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer good-token',
          'Content-Type': 'application/json',
          'X-Upload-Content-Length': '600000',
          'X-Upload-Content-Type': 'video/mp4',
        },
        body: JSON.stringify(body),
      });
    const bad = await start({ snippet: { title: 'x', caption: 'y' }, status: {} });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('Unknown name "caption"');

    const ok = await start({ snippet: { title: 'x' }, status: { privacyStatus: 'private' } });
    const session = ok.headers.get('location')!;
    const put = (range: string, size: number) =>
      fetch(session, { method: 'PUT', headers: { 'Content-Range': range }, body: new Uint8Array(size) });
    expect((await put('bytes 0-99999/600000', 100_000)).status).toBe(400);
    const status = await fetch(session, { method: 'PUT', headers: { 'Content-Range': 'bytes */600000' }, body: '' });
    expect(status.status).toBe(308);
    expect(status.headers.get('range')).toBeNull();
  });
});

describe('YouTube token refresh', () => {
  test('refresh → new access token and expiresAt; the refresh token is not rotated, so it is kept', async () => {
    const f = await fake();
    const stored = { accessToken: 'old', refreshToken: 'good-refresh', expiresAt: new Date().toISOString() };
    const fresh = await connector(f).refreshCredentials!(stored);
    expect(fresh).toEqual({ accessToken: 'ya29.fresh-1', expiresAt: expect.any(String) });
    const left = Date.parse(fresh.expiresAt as string) - Date.now();
    expect(left).toBeGreaterThan(3_590_000);
    expect(left).toBeLessThanOrEqual(3_599_000);
    const merged = { ...stored, ...fresh };
    expect(merged.refreshToken).toBe('good-refresh');
    await connector(f).publish(request({ credentials: merged }));
    expect(f.videos[0]!.token).toBe('ya29.fresh-1');
  });

  test('a refresh_token in the answer replaces the stored one', async () => {
    const f = await fake();
    f.failNext(
      1,
      { status: 200, body: { access_token: 'ya29.x', expires_in: 3599, refresh_token: '1//rotated', token_type: 'Bearer' } },
      'token',
    );
    expect(await connector(f).refreshCredentials!({ refreshToken: 'good-refresh' })).toMatchObject({
      accessToken: 'ya29.x',
      refreshToken: '1//rotated',
    });
  });

  test('invalid_grant → reauth; no refresh token → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).refreshCredentials!({ refreshToken: 'revoked' }));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('YouTube token refresh 400: invalid_grant: Token has been expired or revoked.');
    expect((await failure(connector(f).refreshCredentials!({ accessToken: 'x' }))).kind).toBe('reauth');
  });

  test('wrong OAuth client → permanent; 503 → transient', async () => {
    const f = await fake();
    const wrong = connector(f, { oauth: { clientId: FAKE_CLIENT.clientId, clientSecret: 'nope' } });
    const err = await failure(wrong.refreshCredentials!({ refreshToken: 'good-refresh' }));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('YouTube token refresh 401: invalid_client: The OAuth client was not found.');

    f.failNext(1, { status: 503, body: { error: 'temporarily_unavailable' } }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'good-refresh' }))).kind).toBe('transient');
  });

  test('without an OAuth client configured the connector does not offer refresh', async () => {
    expect(createYouTubeConnector().refreshCredentials).toBeUndefined();
    expect(createYouTubeConnector({ oauth: FAKE_CLIENT }).refreshCredentials).toBeFunction();
  });
});

describe('midnight Pacific', () => {
  test('standard time, daylight time and both DST change days', () => {
    const h = 3600_000;
    expect(msUntilMidnightPacific(Date.parse('2026-11-10T20:00:00Z'))).toBe(12 * h); // 12:00 PST
    expect(msUntilMidnightPacific(Date.parse('2026-07-01T19:30:00Z'))).toBe(11.5 * h); // 12:30 PDT
    expect(msUntilMidnightPacific(Date.parse('2026-03-07T12:00:00Z'))).toBe(20 * h); // 04:00 PST, no change before midnight
    expect(msUntilMidnightPacific(Date.parse('2026-03-08T09:00:00Z'))).toBe(22 * h); // 01:00 PST, 23-hour day
    expect(msUntilMidnightPacific(Date.parse('2026-11-01T08:00:00Z'))).toBe(24 * h); // 01:00 PDT, 25-hour day
    expect(msUntilMidnightPacific(Date.parse('2026-11-10T07:59:59.500Z'))).toBe(500); // 23:59:59.5 PST
  });
});

describe('YouTube metrics', () => {
  test('videos.list statistics of up to 50 videos in one call: views, likes (null when hidden) and comments', async () => {
    const f = await fake();
    const c = connector(f);
    const a = f.addVideo({ title: 'a', description: '' });
    const b = f.addVideo({ title: 'b', description: '' });
    Object.assign(a.statistics, { viewCount: 1200, likeCount: 40, commentCount: 6 });
    Object.assign(b.statistics, { viewCount: 3, likeCount: null, commentCount: 0 });
    const before = f.requests.length;
    const read = await c.readMetrics!(request().credentials, [a.id, b.id, 'ytgone']);
    expect(f.requests.slice(before).filter((r) => r.path === '/youtube/v3/videos')).toHaveLength(1);
    expect(c.metricsBatch).toBe(50);
    expect(read).toEqual({ [a.id]: { views: 1200, likes: 40, replies: 6 }, [b.id]: { views: 3, replies: 0 } });
  });
});

describe('YouTube first comment', () => {
  async function published(f: FakeYouTube) {
    const v = f.addVideo({ title: 'Launch day', description: 'Launch day' });
    const post = { platformPostId: v.id, url: `https://www.youtube.com/watch?v=${v.id}` };
    return { video: v, replyTo: { root: post, parent: post } };
  }
  const commentRequest = (replyTo: PublishRequest['replyTo'], over: Partial<PublishRequest> = {}) =>
    request({ text: 'Chapters:\n0:00 <intro> & more', media: [], replyTo, idempotencyKey: 'post-1:channel-yt:1', ...over });

  test('comment: commentThreads.insert with the videoId and textOriginal; the thread id and the watch url with lc', async () => {
    const f = await fake();
    const { video, replyTo } = await published(f);
    const result = await connector(f).publish(commentRequest(replyTo));

    expect(f.comments).toHaveLength(1);
    const cm = f.comments[0]!;
    expect(cm).toMatchObject({ videoId: video.id, text: 'Chapters:\n0:00 <intro> & more', authorChannelId: f.channelId });
    expect(result).toEqual({
      platformPostId: cm.id,
      url: `https://www.youtube.com/watch?v=${video.id}&lc=${cm.id}`,
      publishedAt: cm.publishedAt,
    });
    const sent = f.requests.at(-1)!;
    expect(`${sent.method} ${sent.path}`).toBe('POST /youtube/v3/commentThreads');
    expect(new URLSearchParams(sent.search).get('part')).toBe('snippet');
    expect(sent.authorization).toBe('Bearer good-token');
    expect(inserts(f)).toBe(0);
  });

  test('a video YouTube does not have → 404 videoNotFound, permanent', async () => {
    const f = await fake();
    const gone = { platformPostId: 'ytgone', url: 'https://www.youtube.com/watch?v=ytgone' };
    const err = await failure(connector(f).publish(commentRequest({ root: gone, parent: gone })));
    expect(err.kind).toBe('permanent');
    expect(err.opts).toMatchObject({ status: 404, platformCode: 'videoNotFound' });
    expect(err.message).toBe('YouTube 404: The video identified by the videoId parameter could not be found. (videoNotFound)');
    expect(f.comments).toHaveLength(0);
  });

  test('a token granted without youtube.force-ssl → reauth (the channel must be connected again)', async () => {
    const f = await fake();
    const { replyTo } = await published(f);
    f.noCommentTokens.add('good-token');
    const err = await failure(connector(f).publish(commentRequest(replyTo)));
    expect(err.kind).toBe('reauth');
    expect(err.opts.platformCode).toBe('insufficientPermissions');
  });

  test('findPublished finds the comment an earlier attempt created although its answer was lost', async () => {
    const f = await fake();
    const { video, replyTo } = await published(f);
    f.addComment({ videoId: video.id, text: 'Chapters:\n0:00 <intro> & more' });
    f.failNext(1, 'accept-then-hang', 'comment');
    const c = connector(f, { timeoutMs: 300 });
    expect((await failure(c.publish(commentRequest(replyTo)))).kind).toBe('transient');
    expect(f.comments).toHaveLength(2);

    const mine = f.comments[1]!;
    const found = await connector(f).findPublished!(commentRequest(replyTo, { attempt: 2 }));
    expect(found).toEqual({
      platformPostId: mine.id,
      url: `https://www.youtube.com/watch?v=${video.id}&lc=${mine.id}`,
      publishedAt: mine.publishedAt,
    });
    const list = f.requests.at(-1)!;
    expect(list.path).toBe('/youtube/v3/commentThreads');
    expect(new URLSearchParams(list.search).get('videoId')).toBe(video.id);
    expect(f.requests.some((r) => r.path === '/youtube/v3/channels')).toBe(true);
    expect(f.comments).toHaveLength(2);
  });

  test('findPublished: null when absent; the same text by another channel does not count; credentials.channelId skips channels.list', async () => {
    const f = await fake();
    const { video, replyTo } = await published(f);
    f.addComment({ videoId: video.id, text: 'Chapters:\n0:00 <intro> & more' });
    f.addComment({ videoId: video.id, text: 'Something else', authorChannelId: f.channelId });
    const creds = { accessToken: 'good-token', channelId: f.channelId };
    expect(await connector(f).findPublished!(commentRequest(replyTo, { attempt: 2, credentials: creds }))).toBeNull();
    expect(f.requests.some((r) => r.path === '/youtube/v3/channels')).toBe(false);
  });
});

describe('YouTube capabilities', () => {
  test('videoCategories.list for the channel’s region: assignable categories only', async () => {
    const f = await fake();
    const caps = await connector(f).readCapabilities!({ accessToken: 'good-token', regionCode: 'GB' }, {});
    expect(caps.platform).toBe('YOUTUBE');
    const categories = caps.platform === 'YOUTUBE' ? caps.categories : [];
    expect(categories).toContainEqual({ id: '22', title: 'People & Blogs' });
    // Short Movies, Videoblogging, Movies and Trailers are for browsing: an upload cannot take them.
    expect(categories.map((c) => c.id)).not.toContain('18');
    expect(categories).toHaveLength(VIDEO_CATEGORIES.filter((c) => c.assignable).length);
    const q = f.requests.filter((r) => r.path === '/youtube/v3/videoCategories');
    expect(q.map((r) => new URLSearchParams(r.search).get('regionCode'))).toEqual(['GB']);
  });

  test('without a region on the channel the US list is read', async () => {
    const f = await fake();
    await connector(f).readCapabilities!({ accessToken: 'good-token' }, {});
    expect(f.requests.at(-1)?.search).toBe('?part=snippet&regionCode=US');
  });

  test('an invalid token (401) and an upload-only token (403 insufficientPermissions) → reauth', async () => {
    const f = await fake();
    const bad = await failure(connector(f).readCapabilities!({ accessToken: 'revoked' }, {}));
    expect(bad).toMatchObject({ kind: 'reauth', opts: { status: 401 } });
    f.uploadOnlyTokens.add('upload-only');
    const narrow = await failure(connector(f).readCapabilities!({ accessToken: 'upload-only' }, {}));
    expect(narrow).toMatchObject({ kind: 'reauth', opts: { status: 403, platformCode: 'insufficientPermissions' } });
  });
});

describe('YouTube options', () => {
  const options = {
    title: 'Storm test: the new kite',
    description: 'Filmed on the north beach.\nWind 40 km/h.',
    tags: ['kites', 'storm flying'],
    categoryId: '17',
    privacyStatus: 'unlisted' as const,
    madeForKids: true,
    notifySubscribers: false,
  };

  test('every option reaches the upload: snippet, status and the notifySubscribers parameter', async () => {
    const f = await fake({ requireMadeForKids: true });
    const result = await connector(f, { privacyStatus: 'private', categoryId: '22' }).publish(
      request({ credentials: { accessToken: 'good-token', privacyStatus: 'public', categoryId: '10' }, options }),
    );
    const s = f.sessions[0]!;
    expect(s.metadata).toEqual({
      snippet: {
        title: 'Storm test: the new kite',
        description: 'Filmed on the north beach.\nWind 40 km/h.',
        tags: ['kites', 'storm flying'],
        categoryId: '17',
      },
      status: { privacyStatus: 'unlisted', selfDeclaredMadeForKids: true },
    });
    expect(s.notifySubscribers).toBe(false);
    expect(new URLSearchParams(f.requests[0]!.search).get('notifySubscribers')).toBe('false');
    expect(f.videos[0]).toMatchObject({ id: result.platformPostId, tags: ['kites', 'storm flying'], privacyStatus: 'unlisted' });
  });

  test('without options the defaults stay: first line as title, no tags, no notifySubscribers parameter', async () => {
    const f = await fake({ requireMadeForKids: true });
    await connector(f).publish(request({ options: {} }));
    expect(f.sessions[0]!.metadata).toEqual({
      snippet: { title: 'Launch day', description: 'Launch day\nOur new kite flies in any weather.' },
      status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
    });
    expect(f.sessions[0]!.notifySubscribers).toBeNull();
    expect(new URLSearchParams(f.requests[0]!.search).has('notifySubscribers')).toBe(false);
  });

  test('notifySubscribers true is sent as such', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: { notifySubscribers: true } }));
    expect(f.sessions[0]!.notifySubscribers).toBe(true);
  });

  test('a retry after a restart finds the video by the title and description the options gave', async () => {
    const f = await fake();
    await connector(f).publish(request({ options }));
    const found = await connector(f).findPublished!(request({ attempt: 2, options }));
    expect(found?.platformPostId).toBe(f.videos[0]!.id);
    // The default title would not match this video.
    expect(await connector(f).findPublished!(request({ attempt: 2 }))).toBeNull();
  });

  test('a title over 100 characters or with < > → permanent invalidTitle, nothing uploaded', async () => {
    const f = await fake();
    const long = await failure(connector(f).publish(request({ options: { title: 'k'.repeat(101) } })));
    expect(long).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: 'invalidTitle' } });
    const tags = await failure(connector(f).publish(request({ idempotencyKey: 'k2', options: { title: 'Kites <3' } })));
    expect(tags).toMatchObject({ kind: 'permanent', opts: { platformCode: 'invalidTitle' } });
    expect(f.sessions).toHaveLength(0);
    expect(f.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
  });

  test('an unknown or browse-only categoryId → permanent invalidCategoryId', async () => {
    const f = await fake();
    const unknown = await failure(connector(f).publish(request({ options: { categoryId: '999' } })));
    expect(unknown).toMatchObject({ kind: 'permanent', opts: { platformCode: 'invalidCategoryId' } });
    const browse = await failure(connector(f).publish(request({ idempotencyKey: 'k2', options: { categoryId: '18' } })));
    expect(browse).toMatchObject({ kind: 'permanent', opts: { platformCode: 'invalidCategoryId' } });
    expect(f.sessions).toHaveLength(0);
  });

  test('the strict fake refuses metadata without selfDeclaredMadeForKids → permanent', async () => {
    const f = await fake({ requireMadeForKids: true });
    const res = await fetch(`${f.url}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer good-token',
        'Content-Type': 'application/json',
        'X-Upload-Content-Length': '10',
        'X-Upload-Content-Type': 'video/mp4',
      },
      body: JSON.stringify({ snippet: { title: 'x' }, status: { privacyStatus: 'public' } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { errors: { reason: string }[] } }).error.errors[0]!.reason).toBe('invalidVideoMetadata');
    f.failNext(1, {
      status: 400,
      body: googleErrorBody(400, 'invalidVideoMetadata', 'The request metadata must declare whether the video is made for kids.'),
    });
    const err = await failure(connector(f).publish(request()));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'invalidVideoMetadata' } });
  });

  test('tags past 500 characters → permanent invalidTags', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ options: { tags: Array.from({ length: 80 }, (_, i) => `kite${i}x`) } })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { platformCode: 'invalidTags' } });
  });
});
