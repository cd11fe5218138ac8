// Upload URLs once an item has left `pending` (docs/decisions.md "Media"): the disk
// store refuses them (409); an S3 presigned PUT cannot be refused, but lands on the upload key
// only — what is served and published is the copy processing checked. How media are served
// (nosniff, Content-Disposition, sandbox CSP; never text/html). Which media a channel-limited key
// sees.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createMediaActivities } from '../activities/media.ts';
import { MediaItem } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { mediaKeys } from '../media/keys.ts';
import { addChannel } from '../domain/channels.ts';
import { createDiskStorage, type ObjectStorage } from '../storage/index.ts';
import { uploadWorkflowId } from '../workflows/media-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { createMediaFixtures, type MediaFixtures } from './fixtures/media.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
let fx: MediaFixtures;
let fake: FakeMastodon;

beforeAll(async () => {
  fx = await createMediaFixtures();
  fake = await startFakeMastodon();
});
afterAll(async () => {
  await fake?.stop();
  await fx?.cleanup();
});

const md5 = (b: Uint8Array) => `"${createHash('md5').update(b).digest('hex')}"`;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** Other bytes of the same length: what an attacker would PUT after complete. */
const swapped = (b: Uint8Array) => new Uint8Array(b.length).map((_, i) => (b[i]! ^ 0x5a) & 0xff);

/** The disk store's URLs are served by the app itself; S3's by SeaweedFS. */
async function send(stack: Stack, url: string, init?: RequestInit) {
  const req = new Request(url, init);
  return stack.storage!.kind === 'disk' ? stack.app.handle(req) : fetch(req);
}

async function createUpload(stack: Stack, key: string, fileName: string, mimeType: string, size: number) {
  const r = await call(stack.app, 'POST', '/v1/media/uploads', { key, body: { fileName, mimeType, fileSize: size } });
  expect(r.status).toBe(201);
  return r.body as { media: { id: string }; upload: { url: string; headers: Record<string, string> } };
}

async function uploadAndComplete(stack: Stack, key: string, bytes: Uint8Array, fileName = 'photo.png', mimeType = 'image/png') {
  const { media, upload } = await createUpload(stack, key, fileName, mimeType, bytes.length);
  expect((await send(stack, upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);
  const done = await call(stack.app, 'POST', `/v1/media/${media.id}/complete`, { key });
  expect(done.status).toBe(200);
  return { item: done.body, upload };
}

/** The upload workflow ends once the upload URL has expired (it then releases the upload key). */
async function waitOutUpload(stack: Stack, mediaId: string) {
  await stack.env.sleep('17 minutes');
  const handle = stack.env.client.workflow.getHandle(uploadWorkflowId(mediaId));
  for (let i = 0; i < 250; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    await Bun.sleep(20);
  }
  throw new Error('upload workflow did not finish');
}

const row = async (id: string) => (await harness()).orm.em.fork().findOneOrFail(MediaItem, { id });

describe('the disk store', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startPostStack({ storage: 'disk' });
  });
  afterAll(async () => stack?.stop());

  test('a PUT to the upload URL after complete → 409 conflict; the checked bytes are served unchanged; a late PUT recreates nothing', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const png = new Uint8Array(readFileSync(fx.files.png));
    const { item, upload } = await uploadAndComplete(stack, key, png);
    expect(item.status).toBe('ready');

    const late = await send(stack, upload.url, { method: 'PUT', headers: upload.headers, body: swapped(png) });
    expect(late.status).toBe(409);
    const body = (await late.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('conflict');
    expect(body.error.message).toMatch(/closed/);

    const served = await send(stack, item.url);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(png);
    const r = await row(item.id);
    expect(r.storageKey).not.toBe(r.uploadKey);
    expect(await stack.storage!.head(r.uploadKey)).toBeNull();
    expect((await stack.storage!.head(r.storageKey))?.etag).toBe(md5(png));

    // After the window the workflow releases the upload key; the URL is expired by then too.
    await waitOutUpload(stack, item.id);
    expect(await stack.storage!.head(r.uploadKey)).toBeNull();
    expect(
      new Uint8Array(await (await send(stack, (await call(stack.app, 'GET', `/v1/media/${item.id}`, { key })).body.url)).arrayBuffer()),
    ).toEqual(png);
  });

  test('served media: nosniff, a sandbox CSP, Content-Disposition inline with the RFC 6266/5987 name; a PDF is an attachment', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const png = new Uint8Array(readFileSync(fx.files.png));
    const { item } = await uploadAndComplete(stack, key, png, 'Été "summer" 100%.png');
    for (const method of ['GET', 'HEAD']) {
      const r = await send(stack, item.url, { method });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('image/png');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none'/);
      expect(r.headers.get('content-disposition')).toBe(
        `inline; filename="_t_ _summer_ 100_.png"; filename*=UTF-8''%C3%89t%C3%A9%20%22summer%22%20100%25.png`,
      );
    }
    const thumb = await send(stack, item.thumbnailUrl);
    expect(thumb.headers.get('content-type')).toBe('image/webp');
    expect(thumb.headers.get('content-disposition')).toBe('inline');
    expect(thumb.headers.get('x-content-type-options')).toBe('nosniff');

    const pdf = new Uint8Array(readFileSync(fx.files.pdf));
    const doc = await uploadAndComplete(stack, key, pdf, 'report (final).pdf', 'application/pdf');
    expect(doc.item.status).toBe('ready');
    const got = await send(stack, doc.item.url);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="report (final).pdf"; filename*=UTF-8''report%20%28final%29.pdf`,
    );
    expect(got.headers.get('content-security-policy')).toContain('sandbox');
  });

  test('HTML or SVG declared as image/png fails sniffing, leaves no bytes, and nothing is ever served as text/html', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const html = new TextEncoder().encode('<!doctype html><html><body><script>fetch("/v1/me")</script></body></html>');
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>');
    for (const bytes of [html, svg]) {
      const { item } = await uploadAndComplete(stack, key, bytes, 'pic.png', 'image/png');
      expect(item.status).toBe('failed');
      expect(item.error).toMatch(/not a PNG image/);
      expect(item.url).toBeNull();
      const r = await row(item.id);
      expect(await stack.storage!.head(r.uploadKey)).toBeNull();
      expect(await stack.storage!.head(mediaKeys(org.id, item.id, 1).final)).toBeNull();
    }
    // Whatever type an object was stored with, the download route serves only accepted media
    // types as such: anything else is an octet-stream attachment, sandboxed.
    const k = `${org.id}/med_${randomBytes(8).toString('hex')}/final-1`;
    await stack.storage!.put(k, html, 'text/html');
    const r = await send(stack, await stack.storage!.signedGetUrl(k, 60));
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    expect(r.headers.get('content-disposition')).toBe('attachment');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-security-policy')).toContain('sandbox');
  });
});

describe('the S3 store (SeaweedFS)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startPostStack({ storage: 's3' });
  });
  afterAll(async () => stack?.stop());

  test('a presigned PUT after complete lands on the upload key only: the served and published bytes are the checked copy; the upload key is deleted once the URL expired', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const png = new Uint8Array(readFileSync(fx.files.png));
    const { item, upload } = await uploadAndComplete(stack, key, png, 'shot.png');
    expect(item.status).toBe('ready');
    const r = await row(item.id);
    expect(r.storageKey).toBe(mediaKeys(org.id, item.id, 1).final);

    // S3 cannot revoke the URL: the swap is accepted — by the upload key, which nothing reads.
    const evil = swapped(png);
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: evil })).status).toBe(200);
    expect((await stack.storage!.head(r.uploadKey))?.etag).toBe(md5(evil));
    expect(await stack.storage!.head(r.storageKey)).toMatchObject({ size: png.length, etag: md5(png), contentType: 'image/png' });

    const served = await fetch((await call(stack.app, 'GET', `/v1/media/${item.id}`, { key })).body.url);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(png);
    expect(served.headers.get('content-disposition')).toBe(`inline; filename="shot.png"; filename*=UTF-8''shot.png`);

    const masto = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'm',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    const text = `checked bytes ${crypto.randomUUID()}`;
    const posted = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: text, channelIds: [masto.id], mediaIds: [item.id] },
    });
    expect(posted.status).toBe(201);
    await stack.settle(posted.body.id);
    const status = fake.statuses.find((s) => s.text === text)!;
    const published = fake.media.find((m) => m.id === status.media_ids[0])!;
    expect(published.sha256).toBe(sha256(png));

    await waitOutUpload(stack, item.id);
    expect(await stack.storage!.head(r.uploadKey)).toBeNull();
    expect((await stack.storage!.head(r.storageKey))?.etag).toBe(md5(png));
  });
});

describe('processing vouches only for the bytes it checked', () => {
  let dir: string;
  let disk: ReturnType<typeof createDiskStorage>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'postpilot-upload-urls-'));
    disk = createDiskStorage({ root: dir, publicBaseUrl: 'http://localhost', signingKey: randomBytes(32) });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function pendingItem(bytes: Uint8Array) {
    const org = await makeOrg();
    const id = newId('med');
    const keys = mediaKeys(org.id, id);
    const em = (await harness()).orm.em.fork();
    em.create(MediaItem, {
      id,
      organization: org.id,
      type: 'image',
      status: 'pending',
      fileName: 'a.png',
      mimeType: 'image/png',
      sizeBytes: bytes.length,
      storageKey: keys.upload,
      uploadKey: keys.upload,
      apiKeyId: null,
      altText: null,
      uploadExpiresAt: new Date(Date.now() + 60_000),
    });
    await em.flush();
    await disk.put(keys.upload, bytes, 'image/png');
    return { org, id, keys };
  }

  test('a copy that changes while it is processed is not marked ready; the next attempt decides on its own copy; release removes the leftovers', async () => {
    const png = new Uint8Array(readFileSync(fx.files.png));
    const { org, id, keys } = await pendingItem(png);
    // Another writer replaces the copy right after it was read for probing.
    const racing: ObjectStorage = {
      ...disk,
      async downloadTo(key, path) {
        await disk.downloadTo(key, path);
        if (key === mediaKeys(org.id, id, 1).final) await disk.put(key, swapped(png), 'image/png');
      },
    };
    const h = await harness();
    const first = createMediaActivities({ orm: h.orm, storage: racing });
    await expect(new MockActivityEnvironment({ attempt: 1 }).run(first.processUpload, id)).rejects.toThrow(
      /changed while it was processed/,
    );
    expect((await row(id)).status).toBe('pending');

    const honest = createMediaActivities({ orm: h.orm, storage: disk });
    expect(await new MockActivityEnvironment({ attempt: 2 }).run(honest.processUpload, id)).toEqual({ status: 'ready' });
    const ready = await row(id);
    expect(ready.storageKey).toBe(mediaKeys(org.id, id, 2).final);
    expect(await disk.read(ready.storageKey)).toEqual(png);
    expect(await disk.isUploadClosed(keys.upload)).toBe(true);
    expect(await disk.head(keys.upload)).toBeNull();

    await new MockActivityEnvironment().run(honest.releaseUpload, id);
    expect(await disk.head(mediaKeys(org.id, id, 1).final)).toBeNull(); // the failed attempt's copy
    expect(await disk.read(ready.storageKey)).toEqual(png);
    expect(await disk.head(ready.thumbnailKey!)).not.toBeNull();
    expect(await disk.isUploadClosed(keys.upload)).toBe(false);
  });

  test('an item made ready before copies existed keeps being served from its upload key', async () => {
    const png = new Uint8Array(readFileSync(fx.files.png));
    const { id, keys } = await pendingItem(png);
    await (await harness()).orm.em.fork().nativeUpdate(MediaItem, { id }, { status: 'ready' });
    await new MockActivityEnvironment().run(createMediaActivities({ orm: (await harness()).orm, storage: disk }).releaseUpload, id);
    expect(await disk.read(keys.upload)).toEqual(png);
  });
});

describe('a key limited to some channels and the media library', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startPostStack({ storage: 'disk' });
  });
  afterAll(async () => stack?.stop());

  test('media used only by posts outside its channels → 404 (GET and complete); its own uploads, unattached media and media of its channels → visible', async () => {
    const org = await makeOrg();
    const all = await makeKey(org.id);
    const a1 = await makeChannel(org.id, 'MASTODON', { name: 'a1' });
    const a2 = await makeChannel(org.id, 'MASTODON', { name: 'a2' });
    const onlyA1 = await makeKey(org.id, { channels: [a1.id] });
    const onlyA2 = await makeKey(org.id, { channels: [a2.id] });
    await stack.syncClock();
    const png = new Uint8Array(readFileSync(fx.files.png));
    const later = new Date((await stack.env.currentTimeMs()) + 30 * 86_400_000).toISOString();
    const ready = async (key: string) => (await uploadAndComplete(stack, key, png)).item.id as string;
    const post = async (channelIds: string[], mediaIds: string[]) =>
      expect(
        (
          await call(stack.app, 'POST', '/v1/posts', {
            key: all.key,
            body: { content: `p ${crypto.randomUUID()}`, channelIds, mediaIds, publishAt: later },
          })
        ).status,
      ).toBe(201);

    const onA2 = await ready(all.key);
    const onA1 = await ready(all.key);
    const onBoth = await ready(all.key);
    const unattached = await ready(all.key);
    const ownButOnA2 = await ready(onlyA1.key);
    await post([a2.id], [onA2, ownButOnA2]);
    await post([a1.id], [onA1]);
    await post([a1.id, a2.id], [onBoth]);
    const pending = (await createUpload(stack, all.key, 'p.png', 'image/png', png.length)).media.id;

    const sees = async (key: string, id: string) => {
      const r = await call(stack.app, 'GET', `/v1/media/${id}`, { key });
      if (r.status === 404) {
        expect(r.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
        const never = await call(stack.app, 'GET', `/v1/media/med_${'0'.repeat(26)}`, { key });
        expect(r.body).toEqual(never.body); // the same answer as for an id that never existed
        expect((await call(stack.app, 'POST', `/v1/media/${id}/complete`, { key })).status).toBe(404);
        return false;
      }
      expect(r.status).toBe(200);
      return true;
    };
    const matrix = async (key: string) => ({
      onA2: await sees(key, onA2),
      onA1: await sees(key, onA1),
      onBoth: await sees(key, onBoth),
      unattached: await sees(key, unattached),
      ownButOnA2: await sees(key, ownButOnA2),
      pending: await sees(key, pending),
    });
    expect(await matrix(all.key)).toEqual({ onA2: true, onA1: true, onBoth: true, unattached: true, ownButOnA2: true, pending: true });
    expect(await matrix(onlyA1.key)).toEqual({ onA2: false, onA1: true, onBoth: true, unattached: true, ownButOnA2: true, pending: true });
    expect(await matrix(onlyA2.key)).toEqual({ onA2: true, onA1: false, onBoth: true, unattached: true, ownButOnA2: true, pending: true });

    // Nor can it attach what it cannot see (and so make it visible): answered like an unknown id.
    const attach = async (mediaId: string) =>
      call(stack.app, 'POST', '/v1/posts', {
        key: onlyA2.key,
        body: { content: `q ${crypto.randomUUID()}`, channelIds: [a2.id], mediaIds: [mediaId], publishAt: later },
      });
    const hidden = await attach(onA1);
    const unknown = await attach(`med_${'0'.repeat(26)}`);
    expect(hidden.status).toBe(422);
    expect(JSON.stringify(hidden.body).replace(onA1, 'ID')).toBe(JSON.stringify(unknown.body).replace(`med_${'0'.repeat(26)}`, 'ID'));
    expect(await sees(onlyA2.key, onA1)).toBe(false);
    expect((await attach(unattached)).status).toBe(201);
  });
});
