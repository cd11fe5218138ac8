// The S3 store (AWS S3, MinIO, SeaweedFS, R2). Clients PUT straight to the bucket through a
// presigned URL whose signature covers Content-Type and Content-Length, so S3 itself refuses
// an upload of another type or size.
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ObjectInfo, ObjectStorage, PresignedUpload, ServingMetadata } from './types.ts';
import { assertRange, assertUploadOptions, assertValidKey, ObjectNotFoundError } from './keys.ts';

export interface S3StorageOptions {
  /** Omit for AWS S3; e.g. `http://127.0.0.1:8333` for SeaweedFS, MinIO, R2. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Both or neither; without them the SDK's default chain (env, profile, instance role) applies. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** `http://endpoint/bucket/key` rather than `http://bucket.endpoint/key` (needed by most non-AWS stores). */
  forcePathStyle: boolean;
  /** Signing clock (tests presign in the past to get an expired URL without waiting). */
  now?: () => Date;
}

export interface S3Storage extends ObjectStorage {
  readonly kind: 's3';
  readonly client: S3Client;
  readonly bucket: string;
}

/** S3 refuses presigned URLs valid for longer than 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export function createS3Storage(opts: S3StorageOptions): S3Storage {
  if (!opts.bucket) throw new TypeError('bucket is required');
  if (Boolean(opts.accessKeyId) !== Boolean(opts.secretAccessKey)) {
    throw new TypeError('give both accessKeyId and secretAccessKey, or neither');
  }
  const now = opts.now ?? (() => new Date());
  const bucket = opts.bucket;
  const client = new S3Client({
    region: opts.region,
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    forcePathStyle: opts.forcePathStyle,
    ...(opts.accessKeyId && opts.secretAccessKey
      ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } }
      : {}),
    // DESIGN.md §6: newer SDKs otherwise sign a CRC32 of an empty body into presigned PUT URLs,
    // which no real upload can match, and validate checksums that not every S3 clone returns.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

  function expiresInFor(expiresAt: Date, signingDate: Date): number {
    const seconds = Math.ceil((expiresAt.getTime() - signingDate.getTime()) / 1000);
    if (seconds > MAX_PRESIGN_SECONDS) throw new RangeError('S3 presigned URLs last at most 7 days');
    return Math.max(1, seconds);
  }

  async function getObject(key: string, range?: string): Promise<GetObjectCommandOutput> {
    assertValidKey(key);
    try {
      return await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(range ? { Range: range } : {}) }));
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFoundError(key);
      throw err;
    }
  }

  async function deleteObject(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  return {
    kind: 's3',
    client,
    bucket,

    async presignPut(key, o): Promise<PresignedUpload> {
      assertValidKey(key);
      const signingDate = now();
      assertUploadOptions(o, signingDate);
      const cmd = new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: o.contentType, ContentLength: o.contentLength });
      const url = await getSignedUrl(client, cmd, {
        expiresIn: expiresInFor(o.expiresAt, signingDate),
        signingDate,
        // Content-Length is signed by default; Content-Type only when asked for.
        signableHeaders: new Set(['content-type', 'content-length']),
      });
      return { method: 'PUT', url, headers: { 'Content-Type': o.contentType }, expiresAt: new Date(o.expiresAt.getTime()) };
    },

    async head(key): Promise<ObjectInfo | null> {
      assertValidKey(key);
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { size: Number(out.ContentLength ?? 0), contentType: out.ContentType ?? null, etag: out.ETag ?? null };
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },

    async readRange(key, start, endInclusive) {
      assertRange(start, endInclusive);
      try {
        const out = await getObject(key, `bytes=${start}-${endInclusive}`);
        return await out.Body!.transformToByteArray();
      } catch (err) {
        // A range that starts past the end: S3 answers 416, the contract says "fewer bytes".
        if (statusOf(err) === 416 || (err as { name?: string })?.name === 'InvalidRange') return new Uint8Array(0);
        throw err;
      }
    },

    async read(key) {
      const out = await getObject(key);
      return await out.Body!.transformToByteArray();
    },

    async downloadTo(key, path) {
      const out = await getObject(key);
      const body = out.Body as unknown as Readable | { transformToWebStream(): ReadableStream<Uint8Array> };
      const source =
        body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as import('node:stream/web').ReadableStream);
      try {
        await pipeline(source, createWriteStream(path));
      } catch (err) {
        await unlink(path).catch(() => {});
        throw err;
      }
    },

    async put(key, body, contentType) {
      assertValidKey(key);
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }),
      );
    },

    async delete(key) {
      await deleteObject(key);
    },

    async copy(from, to, meta: ServingMetadata) {
      assertValidKey(from);
      assertValidKey(to);
      let etag: string | null;
      try {
        // REPLACE: the copy is served with the metadata given here, not what the uploader sent.
        // (S3 has no way to store X-Content-Type-Options or a CSP on an object; see
        // docs/decisions.md "Media".) Keys are [A-Za-z0-9._/-] only: no escaping needed.
        const out = await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: to,
            CopySource: `${bucket}/${from}`,
            MetadataDirective: 'REPLACE',
            ContentType: meta.contentType,
            ...(meta.contentDisposition ? { ContentDisposition: meta.contentDisposition } : {}),
          }),
        );
        etag = out.CopyObjectResult?.ETag ?? null;
      } catch (err) {
        if (isNotFound(err)) throw new ObjectNotFoundError(from);
        throw err;
      }
      // The copy's ETag as head() reports it (some stores leave the quotes off in CopyObjectResult).
      const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: to }));
      return { size: Number(out.ContentLength ?? 0), etag: out.ETag ?? (etag ? `"${etag.replace(/^"|"$/g, '')}"` : null) };
    },

    // A presigned URL cannot be revoked: it works until it expires. Callers copy the upload to a
    // key no URL names and never read this one again (see ObjectStorage.closeUpload).
    async closeUpload(key) {
      assertValidKey(key);
    },

    async releaseUpload(key) {
      await deleteObject(key);
    },

    async signedGetUrl(key, expiresInSeconds) {
      assertValidKey(key);
      if (!Number.isFinite(expiresInSeconds) || expiresInSeconds <= 0) throw new TypeError('expiresInSeconds must be positive');
      const expiresIn = Math.ceil(expiresInSeconds);
      if (expiresIn > MAX_PRESIGN_SECONDS) throw new RangeError('S3 presigned URLs last at most 7 days');
      return getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn, signingDate: now() });
    },
  };
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  // A missing bucket is a misconfiguration, not a missing object (where S3 says which it is).
  if (name === 'NoSuchBucket') return false;
  return name === 'NotFound' || name === 'NoSuchKey' || statusOf(err) === 404;
}
