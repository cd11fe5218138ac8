// The embedded default store (DESIGN.md §2): objects are files under `root`, and the API itself
// receives the PUT at a signed, expiring URL (api/routes/storage.ts), so clients upload to the
// disk store exactly as they would to a presigned S3 URL.
//
// Layout under root:   <key>               the bytes
//                      .meta/<key>@meta    {"contentType","etag","contentDisposition"?} (`@` never
//                                          occurs in a key, so a sidecar cannot collide with
//                                          another key's folder)
//                      .sealed/<key>@sealed  the key's upload URLs are refused (closeUpload)
//                      .tmp/               files being written; renamed into place when whole
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { ObjectInfo, ObjectStorage, PresignedUpload, ServingMetadata } from './types.ts';
import { assertRange, assertUploadOptions, assertValidKey, ObjectNotFoundError } from './keys.ts';

export interface DiskStorageOptions {
  root: string;
  /** Where clients reach the API, e.g. `https://api.example.com` (no trailing slash needed). */
  publicBaseUrl: string;
  /** HMAC-SHA256 key for the upload and download URLs (32 random bytes). */
  signingKey: Buffer;
  now?: () => Date;
}

export interface UploadGrant {
  key: string;
  contentType: string;
  contentLength: number;
  expiresAt: Date;
}

export interface DownloadGrant {
  key: string;
  expiresAt: Date;
}

export type TokenCheck<T> = { ok: true; grant: T } | { ok: false; reason: 'invalid' | 'expired' };

/** A streamed body that is longer or shorter than it was declared; nothing was stored. */
export class UploadSizeError extends Error {
  override name = 'UploadSizeError';
  constructor(
    readonly reason: 'too_large' | 'too_short',
    readonly expected: number,
    /** Bytes read before giving up (for too_large: the first count past `expected`). */
    readonly received: number,
  ) {
    super(
      reason === 'too_large' ? `body exceeds the declared ${expected} bytes` : `body has ${received} of the declared ${expected} bytes`,
    );
  }
}

/** An upload to a key whose upload URLs were closed (the item was completed or expired). */
export class UploadClosedError extends Error {
  override name = 'UploadClosedError';
  constructor(readonly key: string) {
    super(`uploads to ${key} are closed`);
  }
}

export interface StoredObjectFile {
  path: string;
  size: number;
  contentType: string | null;
  etag: string | null;
  contentDisposition: string | null;
}

export interface DiskStorage extends ObjectStorage {
  readonly kind: 'disk';
  readonly root: string;
  verifyUploadToken(token: string): TokenCheck<UploadGrant>;
  verifyDownloadToken(token: string): TokenCheck<DownloadGrant>;
  /**
   * Streams `body` into the object under `key`, atomically: the object appears whole or not at
   * all. With `contentLength`, a longer or shorter body throws UploadSizeError (and a longer one
   * is not read past the limit). With `upload`, a key whose uploads are closed throws
   * UploadClosedError, checked before and again after the body was read.
   */
  writeStream(
    key: string,
    body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array> | null,
    opts: WriteOptions,
  ): Promise<{ etag: string; size: number }>;
  /** The file holding the object, for serving it; null when absent. */
  locate(key: string): Promise<StoredObjectFile | null>;
  /** Whether closeUpload(key) has run (and releaseUpload not yet). */
  isUploadClosed(key: string): Promise<boolean>;
}

export interface WriteOptions {
  contentType: string;
  contentDisposition?: string;
  contentLength?: number;
  /** Bytes arriving through an upload URL: refused once the key's uploads are closed. */
  upload?: boolean;
}

const TEMP_MAX_AGE_MS = 24 * 3600 * 1000;

export function createDiskStorage(opts: DiskStorageOptions): DiskStorage {
  const root = resolve(opts.root);
  const baseUrl = opts.publicBaseUrl.replace(/\/+$/, '');
  const now = opts.now ?? (() => new Date());
  if (!Buffer.isBuffer(opts.signingKey) || opts.signingKey.length < 32) throw new TypeError('signingKey must be at least 32 bytes');
  const signingKey = Buffer.from(opts.signingKey);
  const tmpDir = join(root, '.tmp');
  const metaDir = join(root, '.meta');
  const sealDir = join(root, '.sealed');
  mkdirSync(tmpDir, { recursive: true });
  mkdirSync(metaDir, { recursive: true });
  mkdirSync(sealDir, { recursive: true });
  sweepStaleTemp(tmpDir);

  const dataPath = (key: string) => inside(root, join(root, key));
  const metaPath = (key: string) => inside(root, join(metaDir, `${key}@meta`));
  const sealPath = (key: string) => inside(root, join(sealDir, `${key}@sealed`));

  function sign(payload: string): string {
    return createHmac('sha256', signingKey).update(`postpilot-storage.${payload}`).digest('base64url');
  }

  function issue(claims: Record<string, unknown>): string {
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${payload}.${sign(payload)}`;
  }

  /** Checks the signature first; only then is the payload parsed and trusted. */
  function check(
    token: string,
    op: 'put' | 'get',
  ): { ok: true; claims: Record<string, unknown>; exp: Date } | { ok: false; reason: 'invalid' | 'expired' } {
    if (typeof token !== 'string' || token.length > 4096) return { ok: false, reason: 'invalid' };
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return { ok: false, reason: 'invalid' };
    // Compared as text: base64url has several spellings of the same last byte, and only the
    // canonical one is ours.
    const given = Buffer.from(m[2]!);
    const expected = Buffer.from(sign(m[1]!));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (!claims || typeof claims !== 'object' || claims.op !== op || typeof claims.key !== 'string' || typeof claims.exp !== 'number') {
      return { ok: false, reason: 'invalid' };
    }
    try {
      assertValidKey(claims.key);
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    if (claims.exp <= now().getTime()) return { ok: false, reason: 'expired' };
    return { ok: true, claims, exp: new Date(claims.exp) };
  }

  async function readMeta(key: string): Promise<{ contentType: string | null; etag: string | null; contentDisposition: string | null }> {
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    try {
      const m = JSON.parse(await readFile(metaPath(key), 'utf8'));
      return { contentType: text(m.contentType), etag: text(m.etag), contentDisposition: text(m.contentDisposition) };
    } catch {
      return { contentType: null, etag: null, contentDisposition: null };
    }
  }

  async function isUploadClosed(key: string): Promise<boolean> {
    assertValidKey(key);
    try {
      await stat(sealPath(key));
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async function locate(key: string): Promise<StoredObjectFile | null> {
    assertValidKey(key);
    const path = dataPath(key);
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
    if (!st.isFile()) return null;
    return { path, size: st.size, ...(await readMeta(key)) };
  }

  async function mustLocate(key: string): Promise<StoredObjectFile> {
    const found = await locate(key);
    if (!found) throw new ObjectNotFoundError(key);
    return found;
  }

  /** Renames a finished temp file into place, creating folders (again, if a delete raced us). */
  async function moveIntoPlace(tmp: string, dest: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await mkdir(dirname(dest), { recursive: true });
      try {
        await rename(tmp, dest);
        return;
      } catch (err) {
        if (attempt < 2 && isMissing(err)) continue;
        throw err;
      }
    }
  }

  async function writeMeta(key: string, meta: { contentType: string; etag: string; contentDisposition?: string }): Promise<void> {
    const tmp = join(tmpDir, `${randomUUID()}.meta`);
    try {
      await writeFile(tmp, JSON.stringify(meta), { mode: 0o600 });
      await moveIntoPlace(tmp, metaPath(key));
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  async function writeStream(
    key: string,
    body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array> | null,
    o: WriteOptions,
  ): Promise<{ etag: string; size: number }> {
    assertValidKey(key);
    if (o.upload && (await isUploadClosed(key))) throw new UploadClosedError(key);
    const dest = dataPath(key);
    const tmp = join(tmpDir, randomUUID());
    const md5 = createHash('md5');
    const limit = o.contentLength;
    let size = 0;
    const fh = await open(tmp, 'wx', 0o600);
    try {
      if (body) {
        for await (const chunk of body as AsyncIterable<Uint8Array>) {
          size += chunk.byteLength;
          // Stop reading at the first byte past the declared length: never store more.
          if (limit !== undefined && size > limit) throw new UploadSizeError('too_large', limit, size);
          md5.update(chunk);
          await writeAll(fh, chunk);
        }
      }
      if (limit !== undefined && size !== limit) throw new UploadSizeError('too_short', limit, size);
      await fh.datasync();
      await fh.close();
      const etag = `"${md5.digest('hex')}"`;
      // Closed while the body streamed in (the item was completed meanwhile): keep nothing.
      if (o.upload && (await isUploadClosed(key))) throw new UploadClosedError(key);
      // Sidecar first: an object file that exists always has its metadata beside it.
      await writeMeta(key, {
        contentType: o.contentType,
        etag,
        ...(o.contentDisposition ? { contentDisposition: o.contentDisposition } : {}),
      });
      await moveIntoPlace(tmp, dest);
      return { etag, size };
    } catch (err) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  /** Removes folders the last delete emptied, up to (not including) the root. */
  async function pruneEmpty(start: string, stop: string): Promise<void> {
    let dir = start;
    while (dir.startsWith(stop + sep) && dir !== stop) {
      try {
        await rmdir(dir);
      } catch {
        return;
      }
      dir = dirname(dir);
    }
  }

  async function deleteObject(key: string): Promise<void> {
    assertValidKey(key);
    const path = dataPath(key);
    // Bytes first: without them the object is gone, whatever happens to the sidecar.
    await unlink(path).catch((err) => {
      if (!isMissing(err)) throw err;
    });
    await unlink(metaPath(key)).catch((err) => {
      if (!isMissing(err)) throw err;
    });
    await pruneEmpty(dirname(path), root);
    await pruneEmpty(dirname(metaPath(key)), metaDir);
  }

  return {
    kind: 'disk',
    root,

    async presignPut(key, o): Promise<PresignedUpload> {
      assertValidKey(key);
      assertUploadOptions(o, now());
      const token = issue({ op: 'put', key, contentType: o.contentType, contentLength: o.contentLength, exp: o.expiresAt.getTime() });
      return {
        method: 'PUT',
        url: `${baseUrl}/storage/upload/${token}`,
        headers: { 'Content-Type': o.contentType },
        expiresAt: new Date(o.expiresAt.getTime()),
      };
    },

    verifyUploadToken(token) {
      const r = check(token, 'put');
      if (!r.ok) return r;
      const { key, contentType, contentLength } = r.claims as { key: string; contentType: unknown; contentLength: unknown };
      if (typeof contentType !== 'string' || typeof contentLength !== 'number') return { ok: false, reason: 'invalid' };
      return { ok: true, grant: { key, contentType, contentLength, expiresAt: r.exp } };
    },

    verifyDownloadToken(token) {
      const r = check(token, 'get');
      if (!r.ok) return r;
      return { ok: true, grant: { key: r.claims.key as string, expiresAt: r.exp } };
    },

    async head(key): Promise<ObjectInfo | null> {
      const found = await locate(key);
      return found ? { size: found.size, contentType: found.contentType, etag: found.etag } : null;
    },

    async readRange(key, start, endInclusive) {
      assertRange(start, endInclusive);
      const { path, size } = await mustLocate(key);
      if (start >= size) return new Uint8Array(0);
      const want = Math.min(endInclusive, size - 1) - start + 1;
      const out = new Uint8Array(want);
      const fh = await open(path, 'r');
      try {
        let filled = 0;
        while (filled < want) {
          const { bytesRead } = await fh.read(out, filled, want - filled, start + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return filled === want ? out : out.subarray(0, filled);
      } finally {
        await fh.close();
      }
    },

    async read(key) {
      const { path } = await mustLocate(key);
      const buf = await readFile(path);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    },

    async downloadTo(key, path) {
      const found = await mustLocate(key);
      await copyFile(found.path, path);
    },

    async put(key, body, contentType) {
      await writeStream(key, [body], { contentType, contentLength: body.byteLength });
    },

    async copy(from, to, meta: ServingMetadata) {
      assertValidKey(to);
      const src = await mustLocate(from);
      // Streamed through writeStream, so the ETag is computed from the bytes actually copied
      // (an upload renamed over `from` meanwhile is either wholly in or wholly out).
      const stream = createReadStream(src.path);
      try {
        return await writeStream(to, stream as AsyncIterable<Uint8Array>, {
          contentType: meta.contentType,
          contentDisposition: meta.contentDisposition,
        });
      } catch (err) {
        if (isMissing(err)) throw new ObjectNotFoundError(from);
        throw err;
      } finally {
        stream.destroy();
      }
    },

    async closeUpload(key) {
      assertValidKey(key);
      const path = sealPath(key);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, '', { mode: 0o600 });
    },

    async releaseUpload(key) {
      await deleteObject(key);
      const path = sealPath(key);
      await unlink(path).catch((err) => {
        if (!isMissing(err)) throw err;
      });
      await pruneEmpty(dirname(path), sealDir);
    },

    isUploadClosed,

    delete: deleteObject,

    async signedGetUrl(key, expiresInSeconds) {
      assertValidKey(key);
      if (!Number.isFinite(expiresInSeconds) || expiresInSeconds <= 0) throw new TypeError('expiresInSeconds must be positive');
      const token = issue({ op: 'get', key, exp: now().getTime() + Math.round(expiresInSeconds * 1000) });
      return `${baseUrl}/storage/object/${token}`;
    },

    writeStream,
    locate,
  };
}

async function writeAll(fh: import('node:fs/promises').FileHandle, chunk: Uint8Array): Promise<void> {
  let off = 0;
  while (off < chunk.byteLength) {
    const { bytesWritten } = await fh.write(chunk, off, chunk.byteLength - off);
    off += bytesWritten;
  }
}

/** Belt and braces: a validated key cannot leave the root, and this checks it did not. */
function inside(root: string, path: string): string {
  const abs = resolve(path);
  if (!abs.startsWith(root + sep)) throw new Error(`path escapes the storage root: ${path}`);
  return abs;
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Temp files left by a crash mid-upload; anything a day old is no live upload. */
function sweepStaleTemp(dir: string): void {
  const cutoff = Date.now() - TEMP_MAX_AGE_MS;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    try {
      if (statSync(p).mtimeMs < cutoff) rmSync(p, { force: true });
    } catch {
      // another process may have moved it into place meanwhile
    }
  }
}
