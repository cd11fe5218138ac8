import { describe, expect, test } from 'bun:test';
import { createPinterestConnector, type PinterestConnectorOptions } from '../platforms/pinterest.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { BOARD_ID, OTHER_BOARD_ID, startFakePinterest, type FakePinterest } from './fakes/pinterest.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakePinterest);

const oauth = { clientId: 'pin-client', clientSecret: 'pin-secret' };

function connector(f: { url: string }, over: Partial<PinterestConnectorOptions> = {}) {
  return createPinterestConnector({ baseUrl: f.url, oauth, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 2_000, ...over });
}

async function imageBytes(format: 'png' | 'webp' | 'gif' | 'jpeg' = 'png'): Promise<Uint8Array> {
  const sharp = (await import('sharp')).default;
  const img = sharp({ create: { width: 8, height: 8, channels: 3, background: '#f00' } });
  return new Uint8Array(await img.toFormat(format).toBuffer());
}

function image(format: 'png' | 'webp' | 'gif' | 'jpeg' = 'png', altText: string | null = 'A red square'): MediaRef {
  return {
    id: `img-${format}`,
    type: format === 'gif' ? 'gif' : 'image',
    mimeType: `image/${format}`,
    fileName: `red.${format}`,
    altText,
    read: () => imageBytes(format),
  };
}

const video: MediaRef = {
  id: 'vid',
  type: 'video',
  mimeType: 'video/mp4',
  fileName: 'clip.mp4',
  altText: null,
  read: async () => new Uint8Array([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]),
};

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Ten ways to paint a red square #art',
    media: [image()],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'pina_good', boardId: BOARD_ID },
    ...over,
  };
}

const paths = (f: FakePinterest) => f.requests.map((r) => `${r.method} ${r.path}`);

describe('Pinterest publish', () => {
  test('image Pin: POST /v5/pins on the board with the text as description, alt text and the image as base64', async () => {
    const f = await fake();
    const result = await connector(f).publish(request());

    expect(f.pins).toHaveLength(1);
    const pin = f.pins[0]!;
    expect(pin).toMatchObject({
      boardId: BOARD_ID,
      description: 'Ten ways to paint a red square #art',
      altText: 'A red square',
      title: null,
    });
    expect(pin.media).toEqual({ type: 'image', contentType: 'image/png', size: (await imageBytes()).length });
    expect(result).toEqual({ platformPostId: pin.id, url: `https://www.pinterest.com/pin/${pin.id}/`, publishedAt: pin.createdAt });
    expect(f.requests[0]!.authorization).toBe('Bearer pina_good');
  });

  test('WebP is sent as JPEG and a GIF as PNG (Pinterest takes JPEG and PNG inline)', async () => {
    const f = await fake();
    await connector(f).publish(request({ media: [image('webp')] }));
    await connector(f).publish(request({ media: [image('gif', null)], text: 'gif' }));
    expect(f.pins.map((p) => p.media.type === 'image' && p.media.contentType)).toEqual(['image/jpeg', 'image/png']);
    expect(f.pins[1]!.altText).toBeNull();
  });

  test('video Pin: register, upload to the S3 form (parameters then file, no token), poll until succeeded, pin by media id', async () => {
    const f = await fake({ mediaPendingPolls: 2 });
    const result = await connector(f).publish(request({ media: [video] }));

    const m = f.media[0]!;
    expect(m).toMatchObject({ status: 'succeeded', size: 12, contentType: 'video/mp4', fileName: 'clip.mp4' });
    expect(m.fieldOrder.at(-1)).toBe('file');
    expect(f.requests.find((r) => r.path === '/pinterest-media-upload')!.authorization).toBeNull();
    expect(paths(f)).toEqual([
      'POST /v5/media',
      'POST /pinterest-media-upload',
      `GET /v5/media/${m.mediaId}`,
      `GET /v5/media/${m.mediaId}`,
      `GET /v5/media/${m.mediaId}`,
      'POST /v5/pins',
    ]);
    expect(f.pins[0]!.media).toEqual({ type: 'video', mediaId: m.mediaId, cover: { cover_image_key_frame_time: 1 } });
    expect(result.platformPostId).toBe(f.pins[0]!.id);
  });

  test('video processing failed → permanent; still processing past pollTimeoutMs → transient; no Pin either way', async () => {
    const failed = await fake({ failMediaProcessing: true });
    const err = await failure(connector(failed).publish(request({ media: [video] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('could not process the video');

    const slow = await fake({ mediaPendingPolls: 10_000 });
    const late = await failure(connector(slow, { pollTimeoutMs: 50 }).publish(request({ media: [video] })));
    expect(late.kind).toBe('transient');
    expect(late.message).toContain('still processing');
    expect(failed.pins.length + slow.pins.length).toBe(0);
  });

  test('no media, two items or a document → permanent before any request', async () => {
    const f = await fake();
    const doc: MediaRef = {
      id: 'd',
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'a.pdf',
      read: async () => new Uint8Array([1]),
    };
    for (const media of [[], [image(), image('jpeg')], [doc]]) {
      expect((await failure(connector(f).publish(request({ media })))).kind).toBe('permanent');
    }
    expect(f.requests).toHaveLength(0);
  });

  test('credentials without boardId → reauth (the channel must be reconnected with a board)', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'pina_good' } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toContain('boardId');
  });
});

describe('Pinterest no double post (findPublished)', () => {
  test('a Pin created whose answer was lost: the retry finds it on the board instead of pinning again', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const c = connector(f, { timeoutMs: 300 });
    expect((await failure(c.publish(request()))).kind).toBe('transient');
    expect(f.pins).toHaveLength(1);

    const found = await c.findPublished!(request({ attempt: 2 }));
    const pin = f.pins[0]!;
    expect(found).toEqual({ platformPostId: pin.id, url: `https://www.pinterest.com/pin/${pin.id}/`, publishedAt: pin.createdAt });
    expect(paths(f).at(-1)).toBe(`GET /v5/boards/${BOARD_ID}/pins`);
    expect(f.pins).toHaveLength(1);
  });

  test('nothing there → null; another description, alt text or kind, or an old Pin does not count', async () => {
    const f = await fake();
    const c = connector(f);
    expect(await c.findPublished!(request())).toBeNull();
    f.addPin({ description: 'something else', altText: 'A red square' });
    f.addPin({ description: 'Ten ways to paint a red square #art', altText: 'another alt' });
    f.addPin({
      description: 'Ten ways to paint a red square #art',
      altText: 'A red square',
      media: { type: 'video', mediaId: '1', cover: {} },
    });
    f.addPin({
      description: 'Ten ways to paint a red square #art',
      altText: 'A red square',
      createdAt: new Date(Date.now() - 3 * 86400_000).toISOString(),
    });
    expect(await c.findPublished!(request())).toBeNull();
  });

  test('pages through the board with the bookmark', async () => {
    const f = await fake();
    const target = f.addPin({ description: 'Ten ways to paint a red square #art', altText: 'A red square' });
    for (let i = 0; i < 150; i++) f.addPin({ description: `other ${i}` });
    const found = await connector(f).findPublished!(request());
    expect(found?.platformPostId).toBe(target.id);
    expect(paths(f).filter((p) => p.includes('/pins')).length).toBe(2);
  });

  test('a post with neither text nor alt text is never matched', async () => {
    const f = await fake();
    f.addPin({ description: null });
    expect(await connector(f).findPublished!(request({ text: '', media: [image('png', null)] }))).toBeNull();
    expect(f.requests).toHaveLength(0);
  });
});

describe('Pinterest error classes', () => {
  test('invalid token (401) → reauth with Pinterest message', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ credentials: { accessToken: 'pina_revoked', boardId: BOARD_ID } })));
    expect(err).toMatchObject({ kind: 'reauth', message: 'Pinterest 401: Authentication failed.' });
    expect(err.opts).toMatchObject({ status: 401, platformCode: '2' });
  });

  test('expired token on the video registration → reauth before anything is uploaded', async () => {
    const f = await fake();
    f.expireToken('pina_good');
    expect((await failure(connector(f).publish(request({ media: [video] })))).kind).toBe('reauth');
    expect(paths(f)).toEqual(['POST /v5/media']);
  });

  test('board not found (404) and another user’s board (403) → permanent with Pinterest message', async () => {
    const f = await fake();
    const missing = await failure(connector(f).publish(request({ credentials: { accessToken: 'pina_good', boardId: '123' } })));
    expect(missing).toMatchObject({ kind: 'permanent', message: 'Pinterest 404: Board not found.' });
    const other = await failure(connector(f).publish(request({ credentials: { accessToken: 'pina_good', boardId: OTHER_BOARD_ID } })));
    expect(other).toMatchObject({ kind: 'permanent', message: 'Pinterest 403: Not authorized to access board or Pin.' });
  });

  test('description over 800 characters (400) → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request({ text: 'x'.repeat(801) })));
    expect(err).toMatchObject({ kind: 'permanent', message: 'Pinterest 400: description: must be a string of at most 800 characters.' });
    expect(f.pins).toHaveLength(0);
  });

  test('429 with Retry-After → transient with retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { code: 8, message: 'You have exceeded your rate limit. Try again later.' },
      headers: { 'Retry-After': '30' },
    });
    const err = await failure(connector(f).publish(request()));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 30_000, platformCode: '8' });
    expect(err.message).toBe('Pinterest 429: You have exceeded your rate limit. Try again later.');
  });

  test('429 with only X-RateLimit-Reset → retryAfterMs (seconds, or an epoch time)', async () => {
    const f = await fake();
    const body = { code: 8, message: 'rate limited' };
    f.failNext(1, { status: 429, body, headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '45' } });
    expect((await failure(connector(f).publish(request()))).opts.retryAfterMs).toBe(45_000);
    f.failNext(1, { status: 429, body, headers: { 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000) + 60) } });
    const ms = (await failure(connector(f).publish(request()))).opts.retryAfterMs!;
    expect(ms).toBeGreaterThan(55_000);
    expect(ms).toBeLessThanOrEqual(61_000);
  });

  test('5xx → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 503, body: { code: 503, message: 'Service unavailable' } });
    expect(await failure(connector(f).publish(request()))).toMatchObject({
      kind: 'transient',
      message: 'Pinterest 503: Service unavailable',
    });
  });

  test('S3 upload rejected: 400 → permanent with the S3 message; 403 (expired policy) → transient', async () => {
    const f = await fake();
    f.failNext(
      1,
      {
        status: 400,
        body: '<Error><Code>EntityTooLarge</Code><Message>Your proposed upload exceeds the maximum allowed size</Message></Error>',
      },
      'upload',
    );
    const big = await failure(connector(f).publish(request({ media: [video] })));
    expect(big).toMatchObject({
      kind: 'permanent',
      message: 'Pinterest media upload 400: EntityTooLarge: Your proposed upload exceeds the maximum allowed size',
    });
    f.failNext(1, { status: 403, body: '<Error><Code>AccessDenied</Code><Message>Policy expired</Message></Error>' }, 'upload');
    expect((await failure(connector(f).publish(request({ media: [video] })))).kind).toBe('transient');
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
});

describe('Pinterest token refresh', () => {
  test('refresh_token grant with Basic client auth → new access token and the rotated refresh token', async () => {
    const f = await fake();
    const c = connector(f);
    const fresh = await c.refreshCredentials!({ accessToken: 'pina_old', refreshToken: 'pinr_1', boardId: BOARD_ID });
    expect(fresh.accessToken).toMatch(/^pina_/);
    expect(fresh.refreshToken).toMatch(/^pinr_/);
    expect(fresh.refreshToken).not.toBe('pinr_1');
    expect(Date.parse(fresh.expiresAt as string) - Date.now()).toBeGreaterThan(2_591_000_000);
    expect(Date.parse(fresh.refreshTokenExpiresAt as string) - Date.now()).toBeGreaterThan(5_183_000_000);
    expect(f.requests[0]!.authorization).toBe(`Basic ${btoa('pin-client:pin-secret')}`);

    // The old refresh token is spent; the rotated one works, and so does the new access token.
    expect((await failure(c.refreshCredentials!({ refreshToken: 'pinr_1' }))).kind).toBe('reauth');
    const again = await c.refreshCredentials!({ refreshToken: fresh.refreshToken });
    await c.publish(request({ credentials: { accessToken: again.accessToken, boardId: BOARD_ID } }));
    expect(f.pins).toHaveLength(1);
  });

  test('rejected refresh token (401, code 283) → reauth with Pinterest message', async () => {
    const f = await fake();
    const err = await failure(connector(f).refreshCredentials!({ refreshToken: 'pinr_revoked' }));
    expect(err).toMatchObject({ kind: 'reauth', message: 'Pinterest token refresh failed (401): The authorization grant is invalid' });
    expect(err.opts.platformCode).toBe('283');
  });

  test('no refresh token → reauth; no app credentials → permanent; 503 → transient', async () => {
    const f = await fake();
    expect((await failure(connector(f).refreshCredentials!({ accessToken: 'x' }))).kind).toBe('reauth');
    expect((await failure(connector(f, { oauth: undefined }).refreshCredentials!({ refreshToken: 'pinr_1' }))).kind).toBe('permanent');
    f.failNext(1, { status: 503, body: { code: 503, message: 'down' } }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'pinr_1' }))).kind).toBe('transient');
    expect(f.refreshTokens.has('pinr_1')).toBe(true);
  });
});

describe('Pinterest metrics', () => {
  test('pin analytics over the last 90 days: impressions, saves, outbound clicks; a Pin no longer there is left out', async () => {
    const f = await fake();
    const c = connector(f);
    const pin = f.addPin({ description: 'a pin' });
    pin.stats = { impressions: 1500, saves: 12, outboundClicks: 7, pinClicks: 30 };
    const read = await c.readMetrics!({ accessToken: 'pina_good', boardId: BOARD_ID }, [pin.id, '999999']);
    expect(read).toEqual({ [pin.id]: { impressions: 1500, saves: 12, clicks: 7 } });
  });
});

describe('Pinterest capabilities', () => {
  const creds = { accessToken: 'pina_good' };
  const boardRequests = (f: FakePinterest) => f.requests.filter((r) => r.path === '/v5/boards');

  test('GET /v5/boards: the account’s own boards, newest first, with their privacy', async () => {
    const f = await fake();
    const secret = f.addBoard({ name: 'Gift ideas', privacy: 'SECRET' });
    f.addBoard({ name: 'Not mine', owner: 'someone-else' });
    const caps = await connector(f).readCapabilities!(creds, {});
    expect(caps).toEqual({
      platform: 'PINTEREST',
      boards: [
        { id: secret, name: 'Gift ideas', privacy: 'SECRET' },
        { id: BOARD_ID, name: 'Red squares', privacy: 'PUBLIC' },
      ],
      boardsComplete: true,
      defaultBoardId: null,
    });
    expect(boardRequests(f)).toHaveLength(1);
    const own = await connector(f).readCapabilities!({ ...creds, boardId: BOARD_ID }, {});
    expect(own.platform === 'PINTEREST' && own.defaultBoardId).toBe(BOARD_ID);
  });

  test('every page is read, 250 boards each, up to the page bound', async () => {
    const f = await fake();
    for (let i = 0; i < 600; i++) f.addBoard({ name: `Board ${i}` });
    const all = await connector(f).readCapabilities!(creds, {});
    expect(all.platform === 'PINTEREST' && all.boards).toHaveLength(601);
    expect(all.platform === 'PINTEREST' && all.boardsComplete).toBe(true);
    expect(boardRequests(f)).toHaveLength(3);

    // An account with more boards than the bound is listed in part rather than read without end.
    f.requests.length = 0;
    const some = await connector(f, { boardPages: 2 }).readCapabilities!(creds, {});
    expect(some.platform === 'PINTEREST' && some.boards).toHaveLength(500);
    expect(some.platform === 'PINTEREST' && some.boardsComplete).toBe(false);
    expect(boardRequests(f)).toHaveLength(2);
  });

  test('an invalid token (401) → reauth; a 503 → transient', async () => {
    const f = await fake();
    const err = await failure(connector(f).readCapabilities!({ accessToken: 'pina_revoked' }, {}));
    expect(err).toMatchObject({ kind: 'reauth', message: 'Pinterest 401: Authentication failed.' });
    f.failNext(1, { status: 503, body: { code: 503, message: 'Service unavailable.' } }, 'boards');
    expect((await failure(connector(f).readCapabilities!(creds, {}))).kind).toBe('transient');
  });
});

describe('Pinterest options', () => {
  test('boardId, title, link and altText reach the Pin (the board instead of the channel’s)', async () => {
    const f = await fake();
    const board = f.addBoard({ name: 'Blue squares' });
    const options = { boardId: board, title: 'Red square', link: 'https://example.com/red', altText: 'A red square on white' };
    await connector(f).publish(request({ credentials: { accessToken: 'pina_good' }, options }));
    expect(f.pins[0]).toMatchObject({
      boardId: board,
      title: 'Red square',
      link: 'https://example.com/red',
      altText: 'A red square on white',
    });
  });

  test('without options the Pin keeps the channel’s board, no title or link, and the image’s alt text', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: {} }));
    expect(f.pins[0]).toMatchObject({ boardId: BOARD_ID, title: null, link: null, altText: 'A red square' });
  });

  test('a board of another account (403), a board not there (404) → permanent', async () => {
    const f = await fake();
    const other = await failure(connector(f).publish(request({ options: { boardId: OTHER_BOARD_ID } })));
    expect(other).toMatchObject({ kind: 'permanent', message: 'Pinterest 403: Not authorized to access board or Pin.' });
    const gone = await failure(connector(f).publish(request({ options: { boardId: '1009213840000000001' } })));
    expect(gone).toMatchObject({ kind: 'permanent', message: 'Pinterest 404: Board not found.' });
    expect(f.pins).toHaveLength(0);
  });

  test('a title over 100 characters, alt text over 500 → permanent', async () => {
    const f = await fake();
    const title = await failure(connector(f).publish(request({ options: { title: 't'.repeat(101) } })));
    expect(title.kind).toBe('permanent');
    expect(title.message).toContain('title: must be a string of at most 100 characters');
    const alt = await failure(connector(f).publish(request({ options: { altText: 'a'.repeat(501) } })));
    expect(alt.kind).toBe('permanent');
    expect(alt.message).toContain('alt_text: must be a string of at most 500 characters');
    expect(f.pins).toHaveLength(0);
  });
});
