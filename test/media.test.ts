// The media library end to end: create upload → PUT bytes → complete, on the disk store and on
// a real S3 server (SeaweedFS); the 15-minute window; failures with reasons; posts with media;
// the vision pass against a local OpenAI-compatible fake.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { MediaItem, Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { uploadWorkflowId } from '../workflows/media-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { createMediaFixtures, FIXTURE_FACTS, type MediaFixtures } from './fixtures/media.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let fx: MediaFixtures;
let fake: FakeMastodon;
let visionServer: ReturnType<typeof Bun.serve>;
const visionRequests: any[] = [];

beforeAll(async () => {
  fx = await createMediaFixtures();
  fake = await startFakeMastodon();
  // A local stand-in for an OpenAI-compatible chat-completions endpoint.
  visionServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = await req.json();
      visionRequests.push({ auth: req.headers.get('authorization'), body });
      return Response.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'A test pattern of coloured pixels.' }, finish_reason: 'stop' }],
      });
    },
  });
});
afterAll(async () => {
  await fake?.stop();
  visionServer?.stop(true);
  await fx?.cleanup();
});

/** PUTs bytes exactly as the upload instructions say: through the app for the disk store, over the network for S3. */
async function put(stack: Stack, upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array) {
  const req = new Request(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
  return stack.storage!.kind === 'disk' ? stack.app.handle(req) : fetch(req);
}

async function fetchUrl(stack: Stack, url: string) {
  return stack.storage!.kind === 'disk' ? stack.app.handle(new Request(url)) : fetch(url);
}

/** Waits for the upload workflow to end; it waits out the upload URL (15 minutes) at the end. */
async function settleUpload(stack: Stack, mediaId: string) {
  const handle = stack.env.client.workflow.getHandle(uploadWorkflowId(mediaId));
  for (let i = 0; i < 200; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    if (i === 50) await stack.env.sleep('17 minutes');
    await Bun.sleep(20);
  }
  throw new Error('upload workflow did not finish');
}

for (const kind of ['disk', 's3'] as const) {
  describe(`media on the ${kind} store`, () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startPostStack({ storage: kind });
    });
    afterAll(async () => stack?.stop());

    test('three steps: create, complete before the PUT (409, still pending), PUT, complete → ready; repeat → same item', async () => {
      const org = await makeOrg();
      const { key } = await makeKey(org.id);
      await stack.syncClock();
      const bytes = readFileSync(fx.files.png);
      const created = await call(stack.app, 'POST', '/v1/media/uploads', {
        key,
        body: { fileName: 'photo.png', mimeType: 'image/png', fileSize: bytes.length, altText: 'a test' },
      });
      expect(created.status).toBe(201);
      const { media, upload, next } = created.body;
      expect(media).toMatchObject({
        status: 'pending',
        type: 'image',
        fileName: 'photo.png',
        mimeType: 'image/png',
        sizeBytes: bytes.length,
        altText: 'a test',
        url: null,
        description: null,
      });
      expect(media.id).toMatch(/^med_/);
      expect(upload.method).toBe('PUT');
      expect(upload.headers['Content-Type'] ?? upload.headers['content-type']).toBe('image/png');
      expect(Date.parse(upload.expiresAt) - (await stack.env.currentTimeMs())).toBeGreaterThan(14 * 60_000);
      expect(Date.parse(upload.expiresAt) - (await stack.env.currentTimeMs())).toBeLessThanOrEqual(15 * 60_000);
      expect(next).toContain(`/v1/media/${media.id}/complete`);

      const early = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
      expect(early.status).toBe(409);
      expect(early.body.error.code).toBe('conflict');
      expect((await call(stack.app, 'GET', `/v1/media/${media.id}`, { key })).body.status).toBe('pending');

      expect((await put(stack, upload, bytes)).status).toBe(200);
      const done = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({
        id: media.id,
        status: 'ready',
        width: FIXTURE_FACTS.png.width,
        height: FIXTURE_FACTS.png.height,
        sizeBytes: bytes.length,
        error: null,
      });
      expect(done.body.durationSeconds).toBeNull();
      const file = await fetchUrl(stack, done.body.url);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
      const thumb = await fetchUrl(stack, done.body.thumbnailUrl);
      expect(thumb.status).toBe(200);
      expect((await thumb.arrayBuffer()).byteLength).toBeGreaterThan(0);

      const row1 = await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: media.id });
      const again = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
      expect(again.status).toBe(200);
      const { url: _u1, thumbnailUrl: _t1, ...first } = done.body;
      const { url: _u2, thumbnailUrl: _t2, ...second } = again.body;
      expect(second).toEqual(first);
      const row2 = await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: media.id });
      expect(row2.updatedAt.getTime()).toBe(row1.updatedAt.getTime()); // nothing processed twice
    });

    test('no complete within 15 minutes → failed and the object deleted; a late complete → 409', async () => {
      const org = await makeOrg();
      const { key } = await makeKey(org.id);
      await stack.syncClock();
      const bytes = readFileSync(fx.files.jpeg);
      const created = await call(stack.app, 'POST', '/v1/media/uploads', {
        key,
        body: { fileName: 'a.jpg', mimeType: 'image/jpeg', fileSize: bytes.length },
      });
      const { media, upload } = created.body;
      expect((await put(stack, upload, bytes)).status).toBe(200);
      const row = await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: media.id });
      expect(await stack.storage!.head(row.uploadKey)).not.toBeNull();
      await stack.env.sleep('16 minutes');
      await settleUpload(stack, media.id);
      const got = await call(stack.app, 'GET', `/v1/media/${media.id}`, { key });
      expect(got.body.status).toBe('failed');
      expect(got.body.error).toMatch(/15-minute/);
      expect(await stack.storage!.head(row.uploadKey)).toBeNull();
      const late = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('conflict');
    });

    test('wrong size, a PNG declared as video, a truncated image → failed with a reason, never a 500', async () => {
      const org = await makeOrg();
      const { key } = await makeKey(org.id);
      await stack.syncClock();
      const upload = async (fileName: string, mimeType: string, declared: number) =>
        (await call(stack.app, 'POST', '/v1/media/uploads', { key, body: { fileName, mimeType, fileSize: declared } })).body;

      // Wrong size: a store that does not enforce the signed length received other bytes.
      const png = readFileSync(fx.files.png);
      const wrong = await upload('w.png', 'image/png', png.length + 10);
      const wrongRow = await stack.h.orm.em.fork().findOneOrFail(MediaItem, { id: wrong.media.id });
      await stack.storage!.put(wrongRow.uploadKey, png, 'image/png');
      const w = await call(stack.app, 'POST', `/v1/media/${wrong.media.id}/complete`, { key });
      expect(w.status).toBe(200);
      expect(w.body.status).toBe('failed');
      expect(w.body.error).toMatch(/bytes/);

      const asVideo = await upload('clip.mp4', 'video/mp4', png.length);
      expect((await put(stack, asVideo.upload, png)).status).toBe(200);
      const v = await call(stack.app, 'POST', `/v1/media/${asVideo.media.id}/complete`, { key });
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ status: 'failed', type: 'video' });
      expect(v.body.error).toMatch(/PNG/i);

      const cut = readFileSync(fx.files.pngTruncated);
      const truncated = await upload('cut.png', 'image/png', cut.length);
      expect((await put(stack, truncated.upload, cut)).status).toBe(200);
      const t = await call(stack.app, 'POST', `/v1/media/${truncated.media.id}/complete`, { key });
      expect(t.status).toBe(200);
      expect(t.body.status).toBe('failed');
      expect(t.body.error).toMatch(/truncat|corrupt/i);
    });
  });
}

describe('media: validation, isolation, posts, vision', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startPostStack({
      storage: 'disk',
      vision: { url: `http://127.0.0.1:${visionServer.port}/v1/chat/completions`, model: 'test-vision', apiKey: 'vk' },
    });
  });
  afterAll(async () => stack?.stop());

  async function readyImage(key: string, file = fx.files.png, mimeType = 'image/png') {
    const bytes = readFileSync(file);
    const created = await call(stack.app, 'POST', '/v1/media/uploads', { key, body: { fileName: 'f', mimeType, fileSize: bytes.length } });
    expect(created.status).toBe(201);
    await put(stack, created.body.upload, bytes);
    const done = await call(stack.app, 'POST', `/v1/media/${created.body.media.id}/complete`, { key });
    expect(done.body.status).toBe('ready');
    return done.body;
  }

  test('create-upload validation: types, size limits, names, scopes; nothing written', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const read = await makeKey(org.id, { scopes: ['read'] });
    const bad = async (body: unknown) => {
      const r = await call(stack.app, 'POST', '/v1/media/uploads', { key, body });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('validation_failed');
      return r.body.error.details.fields.map((f: { path: string }) => f.path);
    };
    expect(await bad({ fileName: 'a.exe', mimeType: 'application/x-msdownload', fileSize: 10 })).toContain('mimeType');
    expect(await bad({ fileName: 'a.png', mimeType: 'image/png', fileSize: 20 * 1024 * 1024 + 1 })).toContain('fileSize');
    expect(await bad({ fileName: 'a.png', mimeType: 'image/png', fileSize: 0 })).toContain('fileSize');
    expect(await bad({ fileName: '../etc/passwd', mimeType: 'image/png', fileSize: 10 })).toContain('fileName');
    await bad({ fileName: 'a.png', mimeType: 'image/png' });
    await bad({ fileName: 'a.png', mimeType: 'image/png', fileSize: 10, extra: true });
    const scope = await call(stack.app, 'POST', '/v1/media/uploads', {
      key: read.key,
      body: { fileName: 'a.png', mimeType: 'image/png', fileSize: 10 },
    });
    expect(scope.status).toBe(403);
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(0);
    // 1 GB video is within its limit.
    const big = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'v.mp4', mimeType: 'video/mp4', fileSize: 1024 * 1024 * 1024 },
    });
    expect(big.status).toBe(201);
  });

  test('another organization’s media is not_found everywhere; ids of any shape are 404', async () => {
    const a = await makeOrg();
    const b = await makeOrg();
    const ka = await makeKey(a.id);
    const kb = await makeKey(b.id);
    const item = await readyImage(ka.key);
    expect((await call(stack.app, 'GET', `/v1/media/${item.id}`, { key: kb.key })).status).toBe(404);
    expect((await call(stack.app, 'POST', `/v1/media/${item.id}/complete`, { key: kb.key })).status).toBe(404);
    for (const id of ['med_x', 'nope', '%00', `med_${'z'.repeat(26)}`]) {
      expect((await call(stack.app, 'GET', `/v1/media/${id}`, { key: ka.key })).status).toBe(404);
    }
    const chB = await makeChannel(b.id, 'MASTODON');
    const r = await call(stack.app, 'POST', '/v1/posts', {
      key: kb.key,
      body: { content: 'x', channelIds: [chB.id], mediaIds: [item.id] },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields[0].path).toBe('mediaIds');
  });

  test('posts with media: requiresMedia, pending media refused, platform limits, published with the media on Mastodon', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const ig = await makeChannel(org.id, 'INSTAGRAM');
    const tiktok = await makeChannel(org.id, 'TIKTOK');
    const masto = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'm',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    const later = new Date((await stack.env.currentTimeMs()) + 30 * 86_400_000).toISOString();
    const noMedia = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [ig.id], publishAt: later } });
    expect(noMedia.status).toBe(422);
    expect(noMedia.body.error.details.fields.map((f: { path: string }) => f.path)).toContain('mediaIds');

    const image = await readyImage(key);
    const withImage = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'x', channelIds: [ig.id], mediaIds: [image.id], publishAt: later },
    });
    expect(withImage.status).toBe(201);
    expect(withImage.body.media).toEqual([{ id: image.id, type: 'image', url: expect.any(String) }]);
    // TikTok takes a photo post of JPEG or WEBP images, not a PNG.
    const tk = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: 'x',
        channelIds: [tiktok.id],
        mediaIds: [image.id],
        publishAt: later,
        options: { tiktok: { privacyLevel: 'SELF_ONLY' } },
      },
    });
    expect(tk.status).toBe(422);
    expect(tk.body.error.details.fields).toEqual([{ path: 'mediaIds', message: expect.stringContaining('takes JPEG or WEBP images') }]);
    // Pending media cannot be attached.
    const pending = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'p.png', mimeType: 'image/png', fileSize: 100 },
    });
    const p = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'x', channelIds: [masto.id], mediaIds: [pending.body.media.id] },
    });
    expect(p.status).toBe(422);
    // Mastodon takes at most 4.
    const five = [image.id, ...(await Promise.all([1, 2, 3, 4].map(() => readyImage(key)))).map((m) => m.id)];
    const tooMany = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [masto.id], mediaIds: five } });
    expect(tooMany.status).toBe(422);

    const text = `with media ${crypto.randomUUID()}`;
    const posted = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: text, channelIds: [masto.id], mediaIds: [image.id] },
    });
    expect(posted.status).toBe(201);
    await stack.settle(posted.body.id);
    const got = (await call(stack.app, 'GET', `/v1/posts/${posted.body.id}`, { key })).body;
    expect(got.status).toBe('published');
    const status = fake.statuses.find((s) => s.text === text)!;
    expect(status.media_ids).toHaveLength(1);
    const uploaded = fake.media.find((m) => m.id === status.media_ids[0])!;
    expect(uploaded.size).toBe(readFileSync(fx.files.png).length);
    expect(uploaded.mimeType).toBe('image/png');

    // PATCH can change the media of a scheduled post (and is checked the same way).
    const video = await call(stack.app, 'PATCH', `/v1/posts/${withImage.body.id}`, { key, body: { mediaIds: [] } });
    expect(video.status).toBe(422);
    const second = await readyImage(key, fx.files.webp, 'image/webp');
    const swapped = await call(stack.app, 'PATCH', `/v1/posts/${withImage.body.id}`, { key, body: { mediaIds: [second.id] } });
    expect(swapped.status).toBe(200);
    expect(swapped.body.media.map((m: { id: string }) => m.id)).toEqual([second.id]);
    const row = await stack.h.orm.em.fork().findOneOrFail(Post, { id: withImage.body.id });
    expect(row.mediaIds).toEqual([second.id]);
  });

  test('vision pass: a configured endpoint describes images; without one description stays null', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const item = await readyImage(key);
    await settleUpload(stack, item.id);
    const got = await call(stack.app, 'GET', `/v1/media/${item.id}`, { key });
    expect(got.body.description).toBe('A test pattern of coloured pixels.');
    const req = visionRequests.at(-1);
    expect(req.auth).toBe('Bearer vk');
    expect(req.body.model).toBe('test-vision');
    expect(req.body.messages[0].content[1].image_url.url).toMatch(/^data:image\/webp;base64,/);

    const plain = await startPostStack({ storage: 'disk' });
    try {
      const bytes = readFileSync(fx.files.png);
      const created = await call(plain.app, 'POST', '/v1/media/uploads', {
        key,
        body: { fileName: 'n.png', mimeType: 'image/png', fileSize: bytes.length },
      });
      await plain.app.handle(new Request(created.body.upload.url, { method: 'PUT', headers: created.body.upload.headers, body: bytes }));
      const done = await call(plain.app, 'POST', `/v1/media/${created.body.media.id}/complete`, { key });
      expect(done.body.status).toBe('ready');
      await settleUpload(plain, created.body.media.id);
      expect((await call(plain.app, 'GET', `/v1/media/${created.body.media.id}`, { key })).body.description).toBeNull();
    } finally {
      await plain.stop();
    }
  });
});
