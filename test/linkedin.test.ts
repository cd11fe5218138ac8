import { describe, expect, test } from 'bun:test';
import { createLinkedInConnector, escapeLittleText, type LinkedInConnectorOptions } from '../platforms/linkedin.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { startFakeLinkedIn, type FakeLinkedIn, linkedInRequest } from './fakes/linkedin.ts';
import { perTest } from './harness/per-test.ts';
import { freePort } from './harness/ports.ts';
import { failure } from './harness/platform-failure.ts';

const fake = perTest(startFakeLinkedIn);

function connector(f: FakeLinkedIn | string, over: LinkedInConnectorOptions = {}) {
  const url = typeof f === 'string' ? f : f.url;
  const oauth = typeof f === 'string' ? undefined : { clientId: f.clientId, clientSecret: f.clientSecret };
  return createLinkedInConnector({
    baseUrl: url,
    authBaseUrl: url,
    timeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
    oauth,
    ...over,
  });
}

const request = linkedInRequest;

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

function pdf(id: string): MediaRef {
  return {
    id,
    type: 'document',
    mimeType: 'application/pdf',
    fileName: 'Quarterly report.pdf',
    read: async () => new TextEncoder().encode('%PDF-1.7 fake'),
  };
}

const routes = (f: FakeLinkedIn) => f.requests.map((r) => `${r.method} ${r.path}${r.search}`);

describe('LinkedIn publish', () => {
  test('text post: POST /rest/posts with version headers; id from x-restli-id, feed url', async () => {
    const f = await fake();
    const result = await connector(f).publish(request(f));

    expect(f.posts).toHaveLength(1);
    const p = f.posts[0]!;
    expect(p).toMatchObject({
      author: f.member,
      commentary: 'Hello LinkedIn',
      rendered: 'Hello LinkedIn',
      visibility: 'PUBLIC',
      content: null,
    });
    expect(result).toEqual({ platformPostId: p.urn, url: `https://www.linkedin.com/feed/update/${p.urn}` });
    expect(p.urn).toMatch(/^urn:li:share:\d+$/);
    const h = f.requests[0]!.headers;
    expect(h['linkedin-version']).toBe('202609');
    expect(h['x-restli-protocol-version']).toBe('2.0.0');
    expect(h.authorization).toBe('Bearer good-token');
  });

  test('reserved little-text characters are escaped, so LinkedIn shows the whole text', async () => {
    const f = await fake();
    const text = 'Launch (finally) — #shipping @team [docs] <3 *bold* _x_ ~y~ {z} a|b back\\slash';
    await connector(f).publish(request(f, { text }));
    expect(f.posts[0]!.commentary).toBe(escapeLittleText(text));
    expect(f.posts[0]!.rendered).toBe(text);
  });

  test('one image: initializeUpload, PUT with the bearer token, AVAILABLE, media with alt text', async () => {
    const f = await fake();
    const bytes = await pngBytes();
    await connector(f).publish(request(f, { media: [await image('a', 'A red square')] }));

    const a = f.assets[0]!;
    expect(a).toMatchObject({
      kind: 'images',
      owner: f.member,
      status: 'AVAILABLE',
      size: bytes.byteLength,
      uploadAuthorization: 'Bearer good-token',
    });
    expect(routes(f)).toEqual([
      'POST /rest/images?action=initializeUpload',
      `PUT /upload/images/${a.urn.split('AQ')[1]}`,
      `GET /rest/images/${encodeURIComponent(a.urn)}`,
      'POST /rest/posts',
    ]);
    expect(f.posts[0]!.content).toEqual({ media: { id: a.urn, altText: 'A red square' } });
  });

  test('three images → multiImage in order, alt text where given', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { media: [await image('a', 'first'), await image('b'), await image('c', 'third')] }));
    const urns = f.assets.map((a) => a.urn);
    expect(f.posts[0]!.content).toEqual({
      multiImage: { images: [{ id: urns[0], altText: 'first' }, { id: urns[1] }, { id: urns[2], altText: 'third' }] },
    });
  });

  test('video: parts PUT without the token, finalize with the ETags in order, polled until AVAILABLE', async () => {
    const f = await fake({ videoPartBytes: 4, videoProcessingPolls: 2 });
    const result = await connector(f).publish(request(f, { text: 'A clip', media: [video('v', 10)] }));

    const v = f.assets[0]!;
    expect(v.kind).toBe('videos');
    expect(v.parts.map((p) => [p.firstByte, p.lastByte, p.authorization])).toEqual([
      [0, 3, null],
      [4, 7, null],
      [8, 9, null],
    ]);
    const fin = f.requests.find((r) => r.search === '?action=finalizeUpload')!;
    expect(fin).toBeDefined();
    expect(f.count('asset')).toBe(3);
    expect(f.posts[0]!.content).toEqual({ media: { id: v.urn } });
    expect(result.platformPostId).toMatch(/^urn:li:ugcPost:\d+$/);
  });

  test('document: uploaded through /rest/documents, posted with its file name as title', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { media: [pdf('d')] }));
    const d = f.assets[0]!;
    expect(d.kind).toBe('documents');
    expect(f.posts[0]!.content).toEqual({ media: { id: d.urn, title: 'Quarterly report.pdf' } });
  });

  test('organization author: assets owned by and post authored as the organization', async () => {
    const f = await fake();
    await connector(f).publish(
      request(f, { credentials: { accessToken: 'org-token', authorUrn: f.organization }, media: [await image('a')] }),
    );
    expect(f.assets[0]!.owner).toBe(f.organization);
    expect(f.posts[0]!.author).toBe(f.organization);
  });

  test('video processing failure → permanent, no post', async () => {
    const f = await fake({ failVideoProcessing: 'Video format is not supported' });
    const err = await failure(connector(f).publish(request(f, { media: [video('v')] })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('Video format is not supported');
    expect(f.posts).toHaveLength(0);
  });

  test('video still processing past pollTimeoutMs → transient', async () => {
    const f = await fake({ videoProcessingPolls: 10_000 });
    const err = await failure(connector(f, { pollTimeoutMs: 50 }).publish(request(f, { media: [video('v')] })));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('still PROCESSING');
  });

  test('a video together with images is refused before anything is uploaded', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { media: [await image('a'), video('v')] })));
    expect(err.kind).toBe('permanent');
    expect(f.requests).toHaveLength(0);
  });

  test('authorUrn that is not a person or organization URN → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { credentials: { accessToken: 'good-token', authorUrn: '8675309' } })));
    expect(err.kind).toBe('permanent');
  });
});

describe('LinkedIn error classes', () => {
  test('invalid token (401 65600) → reauth with LinkedIn message', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { credentials: { accessToken: 'nope', authorUrn: f.member } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('LinkedIn 401: Invalid access token');
    expect(err.opts).toMatchObject({ status: 401, platformCode: 'INVALID_ACCESS_TOKEN' });
  });

  test('revoked token → reauth; expired token on image upload → reauth before any post', async () => {
    const f = await fake();
    f.tokens.get('good-token')!.state = 'revoked';
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('LinkedIn 401: The token used in the request has been revoked by the user');

    f.tokens.get('good-token')!.state = 'expired';
    const err2 = await failure(connector(f).publish(request(f, { media: [await image('a')] })));
    expect(err2.kind).toBe('reauth');
    expect(err2.opts.platformCode).toBe('EXPIRED_ACCESS_TOKEN');
    expect(f.posts).toHaveLength(0);
  });

  test('missing permission (403 ACCESS_DENIED, e.g. not an admin of the organization) → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { credentials: { accessToken: 'good-token', authorUrn: f.organization } })));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('LinkedIn 403: Not enough permissions to access: partnerApiPostsExternal.CREATE.20260901');
  });

  test('duplicate post on a first attempt (422 DUPLICATE_POST) → permanent with LinkedIn message', async () => {
    const f = await fake();
    const c = connector(f);
    const first = await c.publish(request(f));
    const err = await failure(c.publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.opts).toMatchObject({ status: 422, platformCode: 'DUPLICATE_POST' });
    expect(err.message).toBe(`LinkedIn 422: Content is a duplicate of ${first.platformPostId} (Duplicate post is detected)`);
    expect(f.posts).toHaveLength(1);
  });

  test('validation error (422) → permanent with the field path', async () => {
    const f = await fake();
    const err = await failure(connector(f).publish(request(f, { text: 'x'.repeat(3001) })));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('LinkedIn 422: ERROR :: /commentary :: commentary length exceeds 3000');
  });

  test('an inactive LinkedIn-Version (426) → permanent', async () => {
    const f = await fake();
    const err = await failure(connector(f, { apiVersion: '202201' }).publish(request(f)));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe(
      'LinkedIn no longer serves API version 202201: set LINKEDIN_API_VERSION to a current one (LinkedIn 426: Requested version 202201 is not active)',
    );
  });

  test('429 with Retry-After → transient with retryAfterMs', async () => {
    const f = await fake();
    f.failNext(1, {
      status: 429,
      body: { status: 429, message: 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.' },
      headers: { 'Retry-After': '30' },
    });
    const err = await failure(connector(f).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.opts).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    expect(err.message).toContain('APPLICATION DAY limit');
  });

  test('500 → transient; 5xx on an image upload URL → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 500, body: { status: 500, message: 'Internal Server Error' } });
    expect((await failure(connector(f).publish(request(f)))).kind).toBe('transient');
    f.failNext(1, { status: 503, body: { status: 503, message: 'Service Unavailable' } }, 'upload');
    expect((await failure(connector(f).publish(request(f, { media: [await image('a')] })))).kind).toBe('transient');
    expect(f.posts).toHaveLength(0);
  });

  test('hang → transient after the request timeout; network error → transient', async () => {
    const f = await fake();
    f.failNext(1, 'hang');
    const err = await failure(connector(f, { timeoutMs: 300 }).publish(request(f)));
    expect(err.kind).toBe('transient');
    expect(err.message).toContain('timed out after 300 ms');
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect((await failure(connector(closed).publish(request(f)))).kind).toBe('transient');
  });
});

describe('LinkedIn no double post', () => {
  test('member without r_member_social: findPublished answers null, the retry gets DUPLICATE_POST and returns the earlier post', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const c = connector(f, { timeoutMs: 300 });
    expect((await failure(c.publish(request(f)))).kind).toBe('transient');
    expect(f.posts).toHaveLength(1);

    const retry = request(f, { attempt: 2 });
    expect(await c.findPublished!(retry)).toBeNull();
    const result = await c.publish(retry);
    expect(result).toEqual({ platformPostId: f.posts[0]!.urn, url: `https://www.linkedin.com/feed/update/${f.posts[0]!.urn}` });
    expect(f.posts).toHaveLength(1);
  });

  test('organization with r_organization_social: findPublished finds the post by its commentary', async () => {
    const f = await fake();
    f.failNext(1, 'accept-then-hang');
    const c = connector(f, { timeoutMs: 300 });
    const req = request(f, {
      text: 'Q3 results (audited) #growth',
      credentials: { accessToken: 'org-token', authorUrn: f.organization },
      media: [await image('a')],
    });
    await failure(c.publish(req));

    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toEqual({
      platformPostId: f.posts[0]!.urn,
      url: `https://www.linkedin.com/feed/update/${f.posts[0]!.urn}`,
      publishedAt: new Date(f.posts[0]!.createdAt).toISOString(),
    });
    const finder = f.requests.find((r) => r.method === 'GET' && r.path === '/rest/posts')!;
    const q = new URLSearchParams(finder.search);
    expect(q.get('q')).toBe('author');
    expect(q.get('author')).toBe(f.organization);
    expect(finder.search).toContain('author=urn%3Ali%3Aorganization%3A');
    expect(finder.headers['x-restli-method']).toBe('FINDER');
    expect(f.posts).toHaveLength(1);
  });

  test('findPublished ignores other text, another attachment count, and posts older than lookbackMs', async () => {
    const f = await fake();
    const creds = { accessToken: 'org-token', authorUrn: f.organization };
    f.addPost(f.organization, 'Hello LinkedIn', { createdAt: new Date(Date.now() - 5 * 86_400_000) });
    f.addPost(f.organization, 'Something else');
    const c = connector(f);
    expect(await c.findPublished!(request(f, { credentials: creds, attempt: 2 }))).toBeNull();
    f.addPost(f.organization, 'Hello LinkedIn');
    expect(await c.findPublished!(request(f, { credentials: creds, attempt: 2, media: [await image('a')] }))).toBeNull();
    expect(await c.findPublished!(request(f, { credentials: creds, attempt: 2 }))).not.toBeNull();
  });

  test('findPublished on a dead token → reauth', async () => {
    const f = await fake();
    const err = await failure(connector(f).findPublished!(request(f, { credentials: { accessToken: 'nope', authorUrn: f.member } })));
    expect(err.kind).toBe('reauth');
  });
});

describe('LinkedIn token refresh', () => {
  test('refresh: new access token and expiry; the (unrotated) refresh token and its expiry are kept', async () => {
    const f = await fake();
    const c = connector(f);
    const stored = { accessToken: 'old', refreshToken: 'li-refresh-1', authorUrn: f.member, expiresAt: new Date().toISOString() };
    const fresh = await c.refreshCredentials!(stored);
    expect(fresh).toEqual({
      accessToken: 'li-access-2',
      expiresAt: expect.any(String),
      refreshToken: 'li-refresh-1',
      refreshTokenExpiresAt: expect.any(String),
    });
    expect(Date.parse(fresh.expiresAt as string) - Date.now()).toBeGreaterThan(59 * 86_400_000);
    const merged = { ...stored, ...fresh };
    await c.publish(request(f, { credentials: merged }));
    expect(f.posts[0]!.token).toBe('li-access-2');

    const tokenReq = f.requests.find((r) => r.path === '/oauth/v2/accessToken')!;
    expect(tokenReq.headers['content-type']).toContain('application/x-www-form-urlencoded');
    // A second refresh with the kept token works too.
    expect((await c.refreshCredentials!(merged)).accessToken).toBe('li-access-3');
  });

  test('rejected refresh token → reauth with LinkedIn message', async () => {
    const f = await fake();
    f.validRefreshTokens.clear();
    const err = await failure(connector(f).refreshCredentials!({ refreshToken: 'li-refresh-1' }));
    expect(err.kind).toBe('reauth');
    expect(err.message).toBe('LinkedIn 400: The provided authorization grant or refresh token is invalid, expired or revoked');
  });

  test('wrong client secret → permanent; no client configured → permanent; no refresh token → reauth', async () => {
    const f = await fake();
    const wrong = connector(f, { oauth: { clientId: f.clientId, clientSecret: 'nope' } });
    const err = await failure(wrong.refreshCredentials!({ refreshToken: 'li-refresh-1' }));
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('LinkedIn 401: Client authentication failed');
    expect((await failure(connector(f, { oauth: undefined }).refreshCredentials!({ refreshToken: 'li-refresh-1' }))).kind).toBe(
      'permanent',
    );
    expect((await failure(connector(f).refreshCredentials!({ accessToken: 'x' }))).kind).toBe('reauth');
  });

  test('token endpoint 5xx → transient', async () => {
    const f = await fake();
    f.failNext(1, { status: 502, body: { error: 'server_error' } }, 'token');
    expect((await failure(connector(f).refreshCredentials!({ refreshToken: 'li-refresh-1' }))).kind).toBe('transient');
  });
});

describe('fake LinkedIn contract', () => {
  test('requires LinkedIn-Version, rejects unknown post fields, and cuts unescaped commentary', async () => {
    const f = await fake();
    const h = { Authorization: 'Bearer good-token', 'Content-Type': 'application/json', 'X-Restli-Protocol-Version': '2.0.0' };
    const base = { author: f.member, visibility: 'PUBLIC', distribution: { feedDistribution: 'MAIN_FEED' }, lifecycleState: 'PUBLISHED' };
    const noVersion = await fetch(`${f.url}/rest/posts`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ ...base, commentary: 'x' }),
    });
    expect(noVersion.status).toBe(400);
    const hv = { ...h, 'LinkedIn-Version': '202609' };
    const unknown = await fetch(`${f.url}/rest/posts`, { method: 'POST', headers: hv, body: JSON.stringify({ ...base, text: 'x' }) });
    expect(unknown.status).toBe(422);
    const cut = await fetch(`${f.url}/rest/posts`, {
      method: 'POST',
      headers: hv,
      body: JSON.stringify({ ...base, commentary: 'before (after)' }),
    });
    expect(cut.status).toBe(201);
    expect(f.posts[0]!.rendered).toBe('before ');
  });

  test('a post may not use an image that is not uploaded yet', async () => {
    const f = await fake();
    const hv = {
      Authorization: 'Bearer good-token',
      'Content-Type': 'application/json',
      'X-Restli-Protocol-Version': '2.0.0',
      'LinkedIn-Version': '202609',
    };
    const init = await fetch(`${f.url}/rest/images?action=initializeUpload`, {
      method: 'POST',
      headers: hv,
      body: JSON.stringify({ initializeUploadRequest: { owner: f.member } }),
    });
    const { value } = (await init.json()) as { value: { image: string } };
    const post = await fetch(`${f.url}/rest/posts`, {
      method: 'POST',
      headers: hv,
      body: JSON.stringify({
        author: f.member,
        commentary: 'x',
        visibility: 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED' },
        lifecycleState: 'PUBLISHED',
        content: { media: { id: value.image } },
      }),
    });
    expect(post.status).toBe(422);
    expect(f.posts).toHaveLength(0);
  });
});

describe('LinkedIn metrics', () => {
  test('socialActions: likes and comments of a post; one LinkedIn no longer has is left out', async () => {
    const f = await fake();
    const c = connector(f);
    const { platformPostId } = await c.publish(request(f));
    Object.assign(f.posts.find((p) => p.urn === platformPostId)!, { likes: 17, comments: 4 });
    const read = await c.readMetrics!({ accessToken: 'good-token', authorUrn: f.member }, [platformPostId, 'urn:li:share:999']);
    expect(read).toEqual({ [platformPostId]: { likes: 17, replies: 4 } });
  });
});

describe('LinkedIn first comment', () => {
  async function published(f: FakeLinkedIn, c: ReturnType<typeof connector>, creds?: Record<string, unknown>) {
    const post = await c.publish(request(f, creds ? { credentials: creds } : {}));
    return { root: post, parent: post };
  }

  test('comment: POST /rest/socialActions/{encoded post urn}/comments as the author, text as written; comment urn, the post url', async () => {
    const f = await fake();
    const c = connector(f);
    const replyTo = await published(f, c);
    const text = 'Details (and a link) #here: https://example.com/a_b';
    const result = await c.publish(request(f, { text, replyTo, idempotencyKey: 'post-1:channel-1:1' }));

    expect(f.comments).toHaveLength(1);
    const cm = f.comments[0]!;
    expect(cm).toMatchObject({ object: replyTo.parent.platformPostId, actor: f.member, text });
    expect(cm.urn).toBe(`urn:li:comment:(${replyTo.parent.platformPostId},${cm.id})`);
    expect(result).toEqual({ platformPostId: cm.urn, url: replyTo.root.url, publishedAt: new Date(cm.createdAt).toISOString() });
    const sent = f.requests.at(-1)!;
    expect(`${sent.method} ${sent.path}`).toBe(`POST /rest/socialActions/${encodeURIComponent(replyTo.parent.platformPostId)}/comments`);
    expect(sent.headers['linkedin-version']).toBe('202609');
    expect(sent.headers['x-restli-protocol-version']).toBe('2.0.0');
    expect(f.posts).toHaveLength(1);
  });

  test('a comment answered 404 (a post not open to comments yet, or gone) → transient, asked once: the workflow retries it', async () => {
    const f = await fake();
    const gone = { platformPostId: 'urn:li:share:999', url: 'https://www.linkedin.com/feed/update/urn:li:share:999' };
    const c = connector(f);
    const req = request(f, { text: 'First comment', replyTo: { root: gone, parent: gone } });
    const err = await failure(c.publish(req));
    expect(err.kind).toBe('transient');
    expect(err.opts.status).toBe(404);
    expect(err.opts.retryAfterMs).toBeUndefined();
    expect(err.message).toBe(
      'LinkedIn 404: Unable to obtain activity (the post is not open to comments yet, or is gone; asked again later)',
    );
    expect(f.count('comment')).toBe(1);
    expect(f.comments).toHaveLength(0);
    // The retry's look-up first: the post's comments answer 404 too, which holds none of ours.
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();
  });

  test('a 404 anywhere but a comment stays permanent', async () => {
    const f = await fake();
    f.failNext(1, { status: 404, body: { status: 404, message: 'Not Found' } });
    const err = await failure(connector(f).publish(request(f)));
    expect([err.kind, err.opts.status]).toEqual(['permanent', 404]);
  });

  test('a post published a moment ago answers 404 at first: each attempt asks once, the comment goes out once', async () => {
    const f = await fake({ commentsUnavailableFor: 2 });
    const c = connector(f);
    const replyTo = await published(f, c);
    const req = request(f, { text: 'First comment', replyTo, idempotencyKey: 'post-1:channel-1:1' });
    // What the workflow's retries do: each attempt after the first looks before sending.
    expect((await failure(c.publish(req))).kind).toBe('transient');
    expect(await c.findPublished!({ ...req, attempt: 2 })).toBeNull();
    expect((await failure(c.publish({ ...req, attempt: 2 }))).kind).toBe('transient');
    expect(await c.findPublished!({ ...req, attempt: 3 })).toBeNull();
    const result = await c.publish({ ...req, attempt: 3 });
    expect(f.count('comment')).toBe(3);
    expect(f.comments).toHaveLength(1);
    expect(result.platformPostId).toBe(f.comments[0]!.urn);
  });

  test('findPublished finds the comment an earlier attempt created although its answer was lost', async () => {
    const f = await fake();
    const creds = { accessToken: 'org-token', authorUrn: f.organization };
    const c = connector(f, { timeoutMs: 300 });
    const replyTo = await published(f, c, creds);
    f.addComment(replyTo.parent.platformPostId, f.member, 'First comment');
    f.failNext(1, 'accept-then-hang', 'comment');
    const req = request(f, { text: 'First comment', replyTo, credentials: creds, idempotencyKey: 'post-1:channel-1:1' });
    expect((await failure(c.publish(req))).kind).toBe('transient');
    expect(f.comments).toHaveLength(2);

    const mine = f.comments[1]!;
    const found = await c.findPublished!({ ...req, attempt: 2 });
    expect(found).toEqual({ platformPostId: mine.urn, url: replyTo.root.url, publishedAt: new Date(mine.createdAt).toISOString() });
    const list = f.requests.at(-1)!;
    expect(`${list.method} ${list.path}`).toBe(`GET /rest/socialActions/${encodeURIComponent(replyTo.parent.platformPostId)}/comments`);
    expect(f.comments).toHaveLength(2);
  });

  test('findPublished: null when no comment of this author has this text; null for a member without r_member_social', async () => {
    const f = await fake();
    const creds = { accessToken: 'org-token', authorUrn: f.organization };
    const c = connector(f);
    const replyTo = await published(f, c, creds);
    f.addComment(replyTo.parent.platformPostId, f.member, 'First comment');
    f.addComment(replyTo.parent.platformPostId, f.organization, 'Another comment');
    expect(await c.findPublished!(request(f, { text: 'First comment', replyTo, credentials: creds, attempt: 2 }))).toBeNull();

    const member = await published(f, c);
    f.addComment(member.parent.platformPostId, f.member, 'First comment');
    expect(await c.findPublished!(request(f, { text: 'First comment', replyTo: member, attempt: 2 }))).toBeNull();
    expect(f.requests.at(-1)!.path).toEndWith('/comments');
  });
});

describe('LinkedIn options', () => {
  test('visibility reaches the post; without it the post is PUBLIC', async () => {
    const f = await fake();
    await connector(f).publish(request(f, { options: { visibility: 'CONNECTIONS' } }));
    await connector(f).publish(request(f, { text: 'A second post', options: { visibility: 'LOGGED_IN' } }));
    await connector(f).publish(request(f, { text: 'A third post', options: {} }));
    expect(f.posts.map((p) => p.visibility)).toEqual(['CONNECTIONS', 'LOGGED_IN', 'PUBLIC']);
  });

  test('a visibility LinkedIn does not know (422 INVALID_VALUE) → permanent', async () => {
    const f = await fake();
    const options = { visibility: 'FRIENDS' } as unknown as PublishRequest['options'];
    const err = await failure(connector(f).publish(request(f, { options })));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 422, platformCode: 'INVALID_VALUE' } });
    expect(f.posts).toHaveLength(0);
  });
});
