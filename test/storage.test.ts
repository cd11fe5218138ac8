// Object storage (DESIGN.md §2, §5): one contract, run against both stores — the disk store
// behind the API's own upload/download routes (through a real socket), and the S3 store against
// a real SeaweedFS. Then what only one of them has: the disk routes' answers and tokens, and
// what SeaweedFS enforces of a presigned PUT. Then the configuration.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { router } from '../http/router.ts';
import { storageRoutes } from '../api/routes/storage.ts';
import { ConfigError, loadConfig } from '../lib/config.ts';
import {
  createDiskStorage,
  createS3Storage,
  createStorage,
  InvalidObjectKeyError,
  ObjectNotFoundError,
  storageSigningKey,
  type DiskStorage,
  type ObjectStorage,
} from '../storage/index.ts';
import { freePort } from './harness/ports.ts';
import { seaweed, type TestSeaweed } from './harness/seaweed.ts';

const work = mkdtempSync(join(tmpdir(), 'postpilot-storage-test-'));
const newKey = (name = 'original') => `org_test/med_${randomBytes(8).toString('hex')}/${name}`;
const bytes = (n: number) => new Uint8Array(randomBytes(n));
const inOneHour = () => new Date(Date.now() + 3600_000);
const errorCode = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

// ---- the disk store, served by the storage routes on a real socket -------------------------

let diskOffsetMs = 0; // moves the disk store's clock
let disk: DiskStorage;
let diskApp: { stop: () => unknown; handle: (r: Request) => Promise<Response> };
let diskBase: string;
const diskRoot = join(work, 'disk');
const signingKey = randomBytes(32);

async function startDisk() {
  const port = await freePort();
  diskBase = `http://127.0.0.1:${port}`;
  disk = createDiskStorage({ root: diskRoot, publicBaseUrl: `${diskBase}/`, signingKey, now: () => new Date(Date.now() + diskOffsetMs) });
  const app = router()
    .use(storageRoutes(disk))
    .listen({ port, hostname: '127.0.0.1', maxRequestBodySize: 64 * 1024 * 1024 });
  diskApp = { stop: () => app.stop(true), handle: (r) => app.handle(r) };
}

// ---- SeaweedFS ------------------------------------------------------------------------------

let sw: TestSeaweed;

beforeAll(async () => {
  await startDisk();
  sw = await seaweed();
});

afterAll(async () => {
  await diskApp?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Backend {
  name: 'disk' | 's3';
  store: () => ObjectStorage;
  /** A store whose clock runs an hour behind, so what it signs for "now + 1 min" has expired. */
  pastStore: () => ObjectStorage;
}

const backends: Backend[] = [
  {
    name: 'disk',
    store: () => disk,
    pastStore: () => createDiskStorage({ root: diskRoot, publicBaseUrl: diskBase, signingKey, now: () => new Date(Date.now() - 3600_000) }),
  },
  {
    name: 's3',
    store: () => sw.storage(),
    pastStore: () => sw.storage({ now: () => new Date(Date.now() - 3600_000) }),
  },
];

async function upload(s: ObjectStorage, key: string, body: Uint8Array, contentType: string) {
  const p = await s.presignPut(key, { contentType, contentLength: body.byteLength, expiresAt: inOneHour() });
  return fetch(p.url, { method: p.method, headers: p.headers, body });
}

for (const b of backends) {
  describe(`object storage contract: ${b.name}`, () => {
    test('presign → PUT with exactly url+headers → head, readRange, read, downloadTo, signed GET → delete', async () => {
      const s = b.store();
      expect(s.kind).toBe(b.name);
      const key = newKey();
      const body = bytes(1000);
      const expiresAt = inOneHour();
      const p = await s.presignPut(key, { contentType: 'image/png', contentLength: body.byteLength, expiresAt });
      expect(p.method).toBe('PUT');
      expect(p.headers).toEqual({ 'Content-Type': 'image/png' });
      expect(p.expiresAt.getTime()).toBe(expiresAt.getTime());
      expect(await s.head(key)).toBeNull();

      const put = await fetch(p.url, { method: p.method, headers: p.headers, body });
      expect(put.status).toBe(200);
      expect(put.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);

      expect(await s.head(key)).toMatchObject({ size: 1000, contentType: 'image/png', etag: put.headers.get('etag') });
      expect(await s.readRange(key, 0, 15)).toEqual(body.slice(0, 16));
      expect(await s.readRange(key, 500, 509)).toEqual(body.slice(500, 510));
      expect(await s.readRange(key, 990, 5000)).toEqual(body.slice(990)); // fewer: object is shorter
      expect((await s.readRange(key, 1000, 2000)).byteLength).toBe(0); // starts past the end
      expect(await s.read(key)).toEqual(body);

      const target = join(work, `${b.name}-download-${randomBytes(4).toString('hex')}`);
      await s.downloadTo(key, target);
      expect(new Uint8Array(readFileSync(target))).toEqual(body);

      const getUrl = await s.signedGetUrl(key, 60);
      const got = await fetch(getUrl);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('image/png');
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(body);

      await s.delete(key);
      expect(await s.head(key)).toBeNull();
      await s.delete(key); // absent: no error
      await expect(s.read(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
      await expect(s.readRange(key, 0, 1)).rejects.toBeInstanceOf(ObjectNotFoundError);
      await expect(s.downloadTo(key, join(work, 'never'))).rejects.toBeInstanceOf(ObjectNotFoundError);
      expect((await fetch(getUrl)).status).toBe(404);
    });

    test('put stores bytes with their type; a second put replaces them', async () => {
      const s = b.store();
      const key = newKey('thumb.jpg');
      await s.put(key, bytes(10), 'image/jpeg');
      const second = bytes(20);
      await s.put(key, second, 'image/webp');
      expect(await s.head(key)).toMatchObject({ size: 20, contentType: 'image/webp' });
      expect(await s.read(key)).toEqual(second);
      // (Not application/octet-stream here: SeaweedFS takes that for "unknown" and guesses from
      // the key's extension, so head would say image/jpeg.)
      await s.put(key, new Uint8Array(0), 'application/pdf');
      expect(await s.head(key)).toMatchObject({ size: 0, contentType: 'application/pdf' });
      expect((await s.read(key)).byteLength).toBe(0);
      await s.delete(key);
    });

    test('an expired upload URL is refused and stores nothing', async () => {
      const s = b.pastStore();
      const key = newKey();
      const body = bytes(100);
      const p = await s.presignPut(key, {
        contentType: 'image/png',
        contentLength: 100,
        expiresAt: new Date(Date.now() - 3600_000 + 60_000),
      });
      const r = await fetch(p.url, { method: 'PUT', headers: p.headers, body });
      expect(r.status).toBe(b.name === 'disk' ? 401 : 403);
      expect(await b.store().head(key)).toBeNull();
    });

    test('an expired download URL is refused', async () => {
      const key = newKey();
      await b.store().put(key, bytes(5), 'image/png');
      const url = await b.pastStore().signedGetUrl(key, 60);
      const r = await fetch(url);
      expect(r.status).toBe(b.name === 'disk' ? 401 : 403);
      await b.store().delete(key);
    });

    test('a PUT with another Content-Type is refused and stores nothing', async () => {
      const s = b.store();
      const key = newKey();
      const p = await s.presignPut(key, { contentType: 'image/png', contentLength: 10, expiresAt: inOneHour() });
      const r = await fetch(p.url, { method: 'PUT', headers: { 'Content-Type': 'image/jpeg' }, body: bytes(10) });
      expect(r.status).toBe(b.name === 'disk' ? 422 : 403);
      expect(await s.head(key)).toBeNull();
    });

    test('a PUT of another length (longer or shorter) is refused and stores nothing', async () => {
      const s = b.store();
      const key = newKey();
      const p = await s.presignPut(key, { contentType: 'video/mp4', contentLength: 100, expiresAt: inOneHour() });
      const longer = await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(101) });
      expect(longer.status).toBe(b.name === 'disk' ? 413 : 403);
      const shorter = await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(99) });
      expect(shorter.status).toBe(b.name === 'disk' ? 422 : 403);
      expect(await s.head(key)).toBeNull();
      // The same URL still takes the right bytes.
      expect((await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(100) })).status).toBe(200);
      expect((await s.head(key))?.size).toBe(100);
      await s.delete(key);
    });

    test('copy: a server-side copy served with the given type and disposition; replacing the source later leaves it alone', async () => {
      const s = b.store();
      const from = newKey();
      const to = newKey('final-1');
      const body = bytes(300);
      expect((await upload(s, from, body, 'image/png')).status).toBe(200);
      const disposition = `inline; filename="a.png"; filename*=UTF-8''a.png`;
      const copied = await s.copy(from, to, { contentType: 'image/png', contentDisposition: disposition });
      const head = await s.head(to);
      expect(copied).toEqual({ size: 300, etag: head!.etag });
      expect(head).toMatchObject({ size: 300, contentType: 'image/png' });
      expect(head!.etag).toBe((await s.head(from))!.etag);
      await s.put(from, bytes(300), 'image/png');
      expect(await s.read(to)).toEqual(body);
      expect((await s.head(to))!.etag).toBe(copied.etag);
      const got = await fetch(await s.signedGetUrl(to, 60));
      expect(got.headers.get('content-disposition')).toBe(disposition);
      await expect(s.copy(newKey(), newKey('final-1'), { contentType: 'image/png' })).rejects.toBeInstanceOf(ObjectNotFoundError);
      await Promise.all([s.delete(from), s.delete(to)]);
    });

    test('keys that could leave the store are rejected everywhere', async () => {
      const s = b.store();
      const bad = [
        '../etc/passwd',
        'org/../../x',
        '/abs/path',
        'a//b',
        'a/./b',
        'a/b/',
        '.hidden',
        'a/.meta',
        'a\\b',
        'a b',
        'a/b?c',
        '',
        'x'.repeat(600),
        'ä/b',
      ];
      for (const key of bad) {
        await expect(s.presignPut(key, { contentType: 'image/png', contentLength: 1, expiresAt: inOneHour() })).rejects.toBeInstanceOf(
          InvalidObjectKeyError,
        );
        await expect(s.head(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
        await expect(s.put(key, bytes(1), 'image/png')).rejects.toBeInstanceOf(InvalidObjectKeyError);
        await expect(s.read(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
        await expect(s.delete(key)).rejects.toBeInstanceOf(InvalidObjectKeyError);
        await expect(s.signedGetUrl(key, 60)).rejects.toBeInstanceOf(InvalidObjectKeyError);
      }
      expect(readdirSync(work)).not.toContain('etc');
    });

    test('presign refuses nonsense: past expiry, negative length, a type with a line break', async () => {
      const s = b.store();
      const key = newKey();
      await expect(
        s.presignPut(key, { contentType: 'image/png', contentLength: 1, expiresAt: new Date(Date.now() - 1000) }),
      ).rejects.toThrow(/future/);
      await expect(s.presignPut(key, { contentType: 'image/png', contentLength: -1, expiresAt: inOneHour() })).rejects.toThrow(
        /contentLength/,
      );
      await expect(s.presignPut(key, { contentType: 'image/png\r\nX-Evil: 1', contentLength: 1, expiresAt: inOneHour() })).rejects.toThrow(
        /contentType/,
      );
    });

    test('a 5 MB upload goes through and reads back byte for byte', async () => {
      const s = b.store();
      const key = newKey();
      const body = bytes(5 * 1024 * 1024);
      const r = await upload(s, key, body, 'video/mp4');
      expect(r.status).toBe(200);
      expect(await s.head(key)).toMatchObject({ size: body.byteLength, contentType: 'video/mp4' });
      const target = join(work, `${b.name}-5mb`);
      await s.downloadTo(key, target);
      expect(statSync(target).size).toBe(body.byteLength);
      expect(Buffer.compare(readFileSync(target), Buffer.from(body))).toBe(0);
      expect(await s.readRange(key, 4 * 1024 * 1024, 4 * 1024 * 1024 + 99)).toEqual(body.slice(4 * 1024 * 1024, 4 * 1024 * 1024 + 100));
      await s.delete(key);
    });
  });
}

// ---- disk only: the routes' answers -----------------------------------------------------------

describe('disk store routes', () => {
  const tokenOf = (url: string) => url.split('/').pop()!;
  const tmpEntries = () => readdirSync(join(diskRoot, '.tmp'));

  test('URLs point at the API: /storage/upload/<token> and /storage/object/<token>', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'image/png', contentLength: 1, expiresAt: inOneHour() });
    expect(p.url).toStartWith(`${diskBase}/storage/upload/`);
    expect(await disk.signedGetUrl(key, 60)).toStartWith(`${diskBase}/storage/object/`);
    expect(disk.verifyUploadToken(tokenOf(p.url))).toMatchObject({ ok: true, grant: { key, contentType: 'image/png', contentLength: 1 } });
  });

  test('expired and tampered tokens: 401 unauthorized with the error body', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'image/png', contentLength: 3, expiresAt: new Date(Date.now() + 60_000) });
    const token = tokenOf(p.url);
    const [payload, sig] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...claims, contentLength: 10 ** 9 })).toString('base64url')}.${sig}`;
    const flipped = `${payload}.${sig.slice(0, 20)}${sig[20] === 'A' ? 'B' : 'A'}${sig.slice(21)}`;
    const respelt = `${payload}.${sig.slice(0, -1)}${String.fromCharCode(sig.charCodeAt(42) ^ 1)}`; // same bytes, maybe
    for (const t of [forged, flipped, respelt, 'garbage', `${payload}.`, `${payload}.${sig}.x`]) {
      const r = await fetch(`${diskBase}/storage/upload/${t}`, { method: 'PUT', headers: p.headers, body: bytes(3) });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: { code: 'unauthorized', message: 'upload URL invalid or expired' } });
    }
    expect(disk.verifyUploadToken(forged)).toEqual({ ok: false, reason: 'invalid' });

    // The same token, once the clock passes its expiry.
    diskOffsetMs = 61_000;
    try {
      expect(disk.verifyUploadToken(token)).toEqual({ ok: false, reason: 'expired' });
      const r = await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(3) });
      expect(r.status).toBe(401);
      expect(await errorCode(r)).toBe('unauthorized');
    } finally {
      diskOffsetMs = 0;
    }
    expect(await disk.head(key)).toBeNull();

    // A token signed with another key is worthless here.
    const other = createDiskStorage({ root: join(work, 'other'), publicBaseUrl: diskBase, signingKey: randomBytes(32) });
    const foreign = await other.presignPut(key, { contentType: 'image/png', contentLength: 3, expiresAt: inOneHour() });
    expect(
      (await fetch(`${diskBase}/storage/upload/${tokenOf(foreign.url)}`, { method: 'PUT', headers: p.headers, body: bytes(3) })).status,
    ).toBe(401);
  });

  test('an upload token does not download and a download token does not upload', async () => {
    const key = newKey();
    await disk.put(key, bytes(3), 'image/png');
    const put = tokenOf((await disk.presignPut(key, { contentType: 'image/png', contentLength: 3, expiresAt: inOneHour() })).url);
    const get = tokenOf(await disk.signedGetUrl(key, 60));
    expect((await fetch(`${diskBase}/storage/object/${put}`)).status).toBe(401);
    const r = await fetch(`${diskBase}/storage/upload/${get}`, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: bytes(3) });
    expect(r.status).toBe(401);
    await disk.delete(key);
  });

  test('wrong type and length answer with validation_failed naming the header', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'application/pdf', contentLength: 4, expiresAt: inOneHour() });
    const r1 = await fetch(p.url, { method: 'PUT', headers: { 'Content-Type': 'application/pdf; charset=utf-8' }, body: bytes(4) });
    expect(r1.status).toBe(422);
    expect(await r1.json()).toMatchObject({
      error: { code: 'validation_failed', details: { fields: [{ path: 'headers.content-type' }] } },
    });
    const r2 = await fetch(p.url, { method: 'PUT', body: bytes(4) });
    expect(r2.status).toBe(422);
    const r3 = await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(5) });
    expect(r3.status).toBe(413);
    expect(await r3.json()).toMatchObject({
      error: { code: 'validation_failed', details: { fields: [{ path: 'headers.content-length' }] } },
    });
    expect(await disk.head(key)).toBeNull();
  });

  test('a streamed body without Content-Length: past the signed length → 413, short → 422, nothing left behind', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'video/mp4', contentLength: 256 * 1024, expiresAt: inOneHour() });
    let pulled = 0;
    const stream = (chunks: number, size: number) =>
      new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled >= chunks) return c.close();
          pulled++;
          c.enqueue(bytes(size));
        },
      });
    // 100 chunks of 64 KiB offered; the route stops reading soon after the 256 KiB limit.
    const tooLong = await diskApp.handle(new Request(p.url, { method: 'PUT', headers: p.headers, body: stream(100, 64 * 1024) }));
    expect(tooLong.status).toBe(413);
    expect(await errorCode(tooLong)).toBe('validation_failed');
    expect(pulled).toBeLessThan(10);
    pulled = 0;
    const tooShort = await diskApp.handle(new Request(p.url, { method: 'PUT', headers: p.headers, body: stream(3, 64 * 1024) }));
    expect(tooShort.status).toBe(422);
    expect(await disk.head(key)).toBeNull();
    expect(tmpEntries()).toEqual([]);
    pulled = 0;
    const exact = await diskApp.handle(new Request(p.url, { method: 'PUT', headers: p.headers, body: stream(4, 64 * 1024) }));
    expect(exact.status).toBe(200);
    expect((await disk.head(key))?.size).toBe(256 * 1024);
    await disk.delete(key);
  });

  test('a closed upload: its URL answers 409 conflict, also after the key was deleted and while a body was streaming; releaseUpload clears the seal', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'image/png', contentLength: 8, expiresAt: inOneHour() });
    expect((await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(8) })).status).toBe(200);
    const first = await disk.read(key);
    await disk.closeUpload(key);
    const again = await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(8) });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: 'conflict' } });
    expect(await disk.read(key)).toEqual(first);
    await disk.delete(key);
    expect((await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(8) })).status).toBe(409);
    expect(await disk.head(key)).toBeNull();

    // Closed while the body was on its way: nothing is kept.
    const racing = newKey();
    const q = await disk.presignPut(racing, { contentType: 'image/png', contentLength: 8, expiresAt: inOneHour() });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const body = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(bytes(4));
        await gate;
        c.enqueue(bytes(4));
        c.close();
      },
    });
    const pending = diskApp.handle(new Request(q.url, { method: 'PUT', headers: q.headers, body }));
    await Bun.sleep(20);
    await disk.closeUpload(racing);
    release();
    expect((await pending).status).toBe(409);
    expect(await disk.head(racing)).toBeNull();
    expect(tmpEntries()).toEqual([]);

    await disk.releaseUpload(key);
    expect(await disk.isUploadClosed(key)).toBe(false);
    expect(() => statSync(join(diskRoot, '.sealed', key.split('/').slice(0, 2).join('/')))).toThrow(); // emptied folders pruned
    await disk.releaseUpload(racing);
  });

  test('a chunked 300 MB body to a 1 MB upload URL: 413 as soon as the signed length is passed, the rest never read', async () => {
    const key = newKey();
    const p = await disk.presignPut(key, { contentType: 'video/mp4', contentLength: 1024 * 1024, expiresAt: inOneHour() });
    let sent = 0;
    const chunk = new Uint8Array(64 * 1024);
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= 300 * 1024 * 1024) return c.close();
        sent += chunk.byteLength;
        c.enqueue(chunk);
      },
    });
    // No Content-Length: fetch sends a stream with Transfer-Encoding: chunked.
    const r = await fetch(p.url, { method: 'PUT', headers: p.headers, body });
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ error: { code: 'validation_failed', details: { fields: [{ path: 'body' }] } } });
    expect(sent).toBeLessThan(32 * 1024 * 1024);
    expect(await disk.head(key)).toBeNull();
    expect(tmpEntries()).toEqual([]);
  });

  test('a 5 MB chunked upload over the socket streams to disk', async () => {
    const key = newKey();
    const size = 5 * 1024 * 1024;
    const p = await disk.presignPut(key, { contentType: 'video/mp4', contentLength: size, expiresAt: inOneHour() });
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= size) return c.close();
        const n = Math.min(128 * 1024, size - sent);
        c.enqueue(new Uint8Array(n).fill(sent % 251));
        sent += n;
      },
    });
    const r = await fetch(p.url, { method: 'PUT', headers: p.headers, body });
    expect(r.status).toBe(200);
    expect(await disk.head(key)).toMatchObject({ size, contentType: 'video/mp4' });
    expect(tmpEntries()).toEqual([]);
    await disk.delete(key);
  });

  test('GET: ranges, HEAD, 404 for a missing object, X-Request-Id kept when mounted in the app', async () => {
    const key = newKey();
    const body = bytes(100);
    await disk.put(key, body, 'image/gif');
    const url = await disk.signedGetUrl(key, 60);
    const part = await fetch(url, { headers: { Range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 10-19/100');
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(body.slice(10, 20));
    const suffix = await fetch(url, { headers: { Range: 'bytes=-5' } });
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(body.slice(95));
    expect((await fetch(url, { headers: { Range: 'bytes=200-' } })).status).toBe(416);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('100');
    expect(head.headers.get('content-type')).toBe('image/gif');

    const missing = await fetch(await disk.signedGetUrl(newKey(), 60));
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe('not_found');

    // Mounted beside other routes, the request id set by an outer hook survives our Responses.
    const app = router()
      .onRequest(({ set }) => {
        set.headers['x-request-id'] = 'req_test';
      })
      .use(storageRoutes(disk));
    const viaApp = await app.handle(new Request(url.replace(/\/storage\/object\/.*/, '/storage/object/nope')));
    expect(viaApp.status).toBe(401);
    expect(viaApp.headers.get('x-request-id')).toBe('req_test');
    await disk.delete(key);
  });

  test('objects are plain files under the root; deleting prunes emptied folders', async () => {
    const key = newKey();
    await disk.put(key, bytes(7), 'image/png');
    expect(statSync(join(diskRoot, key)).size).toBe(7);
    await disk.delete(key);
    expect(() => statSync(join(diskRoot, key.split('/').slice(0, 2).join('/')))).toThrow();
  });

  test('signing key must be 32 bytes', () => {
    expect(() => createDiskStorage({ root: join(work, 'x'), publicBaseUrl: diskBase, signingKey: Buffer.alloc(8) })).toThrow(/32 bytes/);
  });
});

// ---- S3 only: what SeaweedFS enforces ---------------------------------------------------------

describe('S3 store against SeaweedFS', () => {
  test('the presigned PUT signs Content-Type and Content-Length; no CRC32 of an empty body', async () => {
    const p = await sw.storage().presignPut(newKey(), { contentType: 'image/png', contentLength: 42, expiresAt: inOneHour() });
    const q = new URL(p.url).searchParams;
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['content-length', 'content-type', 'host']);
    expect(p.url).not.toMatch(/x-amz-checksum|x-amz-sdk-checksum/i);
  });

  test('wrong credentials are refused', async () => {
    const wrong = createS3Storage({
      endpoint: sw.endpoint,
      region: sw.region,
      bucket: sw.bucket,
      accessKeyId: sw.accessKeyId,
      secretAccessKey: 'not-the-secret',
      forcePathStyle: true,
    });
    await expect(wrong.head(newKey())).rejects.toThrow();
    const p = await wrong.presignPut(newKey(), { contentType: 'image/png', contentLength: 1, expiresAt: inOneHour() });
    expect((await fetch(p.url, { method: 'PUT', headers: p.headers, body: bytes(1) })).status).toBe(403);
  });

  test('a tampered presigned URL is refused', async () => {
    const key = newKey();
    const p = await sw.storage().presignPut(key, { contentType: 'image/png', contentLength: 1, expiresAt: inOneHour() });
    const r = await fetch(p.url.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=604800'), {
      method: 'PUT',
      headers: p.headers,
      body: bytes(1),
    });
    expect(r.status).toBe(403);
    expect(await sw.storage().head(key)).toBeNull();
  });

  test('createS3Storage wants both keys or neither, and a bucket', () => {
    expect(() => createS3Storage({ region: 'us-east-1', bucket: 'b', accessKeyId: 'a', forcePathStyle: false })).toThrow(/both/);
    expect(() => createS3Storage({ region: 'us-east-1', bucket: '', forcePathStyle: false })).toThrow(/bucket/);
  });
});

// ---- configuration ----------------------------------------------------------------------------

describe('storage configuration', () => {
  test('defaults: disk under DATA_DIR/media, no signing key, S3 region us-east-1', () => {
    const c = loadConfig({});
    expect(c.storage).toEqual({
      driver: 'disk',
      dir: '.data/media',
      signingKey: undefined,
      s3: {
        endpoint: undefined,
        region: 'us-east-1',
        bucket: undefined,
        accessKeyId: undefined,
        secretAccessKey: undefined,
        forcePathStyle: false,
      },
    });
    expect(loadConfig({ DATA_DIR: '/var/lib/pp' }).storage.dir).toBe('/var/lib/pp/media');
    expect(loadConfig({ STORAGE_DIR: '/srv/media' }).storage.dir).toBe('/srv/media');
  });

  test('S3_BUCKET is required with STORAGE_DRIVER=s3; keys come in pairs; bad values are named', () => {
    expect(() => loadConfig({ STORAGE_DRIVER: 's3' })).toThrow(/S3_BUCKET: required when STORAGE_DRIVER=s3/);
    expect(() => loadConfig({ STORAGE_DRIVER: 's3' })).toThrow(ConfigError);
    expect(() => loadConfig({ STORAGE_DRIVER: 'gcs' })).toThrow(/STORAGE_DRIVER/);
    expect(() => loadConfig({ S3_ACCESS_KEY_ID: 'a' })).toThrow(/give both or neither/);
    expect(() => loadConfig({ S3_ENDPOINT: 'localhost:8333' })).toThrow(/S3_ENDPOINT/);
    expect(() => loadConfig({ S3_FORCE_PATH_STYLE: 'yes' })).toThrow(/S3_FORCE_PATH_STYLE/);
    expect(() => loadConfig({ STORAGE_SIGNING_KEY: 'short' })).toThrow(/STORAGE_SIGNING_KEY must be 32 bytes/);
  });

  test('S3 settings; path style defaults to on with a custom endpoint and can be turned off', () => {
    const c = loadConfig({
      STORAGE_DRIVER: 's3',
      S3_BUCKET: 'media',
      S3_ENDPOINT: 'http://127.0.0.1:8333/',
      S3_REGION: 'eu-west-1',
      S3_ACCESS_KEY_ID: 'AK',
      S3_SECRET_ACCESS_KEY: 'SK',
    });
    expect(c.storage.driver).toBe('s3');
    expect(c.storage.s3).toEqual({
      endpoint: 'http://127.0.0.1:8333',
      region: 'eu-west-1',
      bucket: 'media',
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
      forcePathStyle: true,
    });
    expect(loadConfig({ S3_ENDPOINT: 'http://x', S3_FORCE_PATH_STYLE: 'false' }).storage.s3.forcePathStyle).toBe(false);
    expect(loadConfig({ S3_FORCE_PATH_STYLE: '1' }).storage.s3.forcePathStyle).toBe(true);
    const hex = 'cd'.repeat(32);
    expect(loadConfig({ STORAGE_SIGNING_KEY: hex }).storage.signingKey?.toString('hex')).toBe(hex);
  });

  test('createStorage picks the store; the signing key is configured, derived, or ephemeral', async () => {
    const root = join(work, 'factory');
    const s3 = createStorage(
      loadConfig({
        STORAGE_DRIVER: 's3',
        S3_BUCKET: sw.bucket,
        S3_ENDPOINT: sw.endpoint,
        S3_ACCESS_KEY_ID: sw.accessKeyId,
        S3_SECRET_ACCESS_KEY: sw.secretAccessKey,
      }),
    );
    expect(s3.kind).toBe('s3');
    expect(await s3.head(newKey())).toBeNull();

    const configured = loadConfig({ STORAGE_DIR: root, STORAGE_SIGNING_KEY: 'ab'.repeat(32), PUBLIC_BASE_URL: 'https://api.example.com/' });
    const d = createStorage(configured);
    expect(d.kind).toBe('disk');
    expect((await d.presignPut('a/b', { contentType: 'image/png', contentLength: 1, expiresAt: inOneHour() })).url).toStartWith(
      'https://api.example.com/storage/upload/',
    );
    expect(storageSigningKey(configured)).toEqual({ key: Buffer.from('ab'.repeat(32), 'hex'), source: 'configured' });

    const withCreds = loadConfig({ STORAGE_DIR: root, CREDENTIALS_KEY: 'ef'.repeat(32) });
    const derived = storageSigningKey(withCreds);
    expect(derived.source).toBe('derived');
    expect(derived.key).toHaveLength(32);
    expect(derived.key.equals(withCreds.credentialsKey!)).toBe(false);
    expect(storageSigningKey(withCreds).key.equals(derived.key)).toBe(true); // stable across restarts
    // Two processes with the same CREDENTIALS_KEY accept each other's URLs.
    const a = createStorage(withCreds);
    const b = createStorage(loadConfig({ STORAGE_DIR: root, CREDENTIALS_KEY: 'ef'.repeat(32) })) as DiskStorage;
    const url = await a.signedGetUrl('a/b', 60);
    expect(b.verifyDownloadToken(url.split('/').pop()!).ok).toBe(true);

    expect(storageSigningKey(loadConfig({})).source).toBe('ephemeral');
  });
});
