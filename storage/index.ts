// Picks the object store from the configuration (STORAGE_DRIVER): the local-disk store by
// default, S3 (or any S3-compatible store) for production and scale-out.
import { hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../lib/config.ts';
import { createDiskStorage, type DiskStorage } from './disk.ts';
import { createS3Storage, type S3Storage } from './s3.ts';

export type * from './types.ts';
export {
  createDiskStorage,
  UploadClosedError,
  UploadSizeError,
  type DiskStorage,
  type DiskStorageOptions,
  type UploadGrant,
  type DownloadGrant,
} from './disk.ts';
export { createS3Storage, type S3Storage, type S3StorageOptions } from './s3.ts';
export { assertValidKey, InvalidObjectKeyError, ObjectNotFoundError } from './keys.ts';

export type StorageSettings = Pick<Config, 'storage' | 'publicBaseUrl' | 'credentialsKey'>;

/**
 * The disk store's URL-signing key: STORAGE_SIGNING_KEY; else derived from CREDENTIALS_KEY (HKDF,
 * so the two keys stay independent); else random for this process only, which means URLs handed
 * out before a restart stop working and several API processes refuse each other's URLs.
 */
export function storageSigningKey(config: StorageSettings): { key: Buffer; source: 'configured' | 'derived' | 'ephemeral' } {
  if (config.storage.signingKey) return { key: config.storage.signingKey, source: 'configured' };
  if (config.credentialsKey) {
    const key = Buffer.from(hkdfSync('sha256', config.credentialsKey, Buffer.alloc(0), 'postpilot storage url signing', 32));
    return { key, source: 'derived' };
  }
  return { key: randomBytes(32), source: 'ephemeral' };
}

export function createStorage(config: StorageSettings, opts: { now?: () => Date } = {}): DiskStorage | S3Storage {
  const s = config.storage;
  if (s.driver === 's3') {
    if (!s.s3.bucket) throw new Error('S3_BUCKET is required when STORAGE_DRIVER=s3');
    return createS3Storage({
      endpoint: s.s3.endpoint,
      region: s.s3.region,
      bucket: s.s3.bucket,
      accessKeyId: s.s3.accessKeyId,
      secretAccessKey: s.s3.secretAccessKey,
      forcePathStyle: s.s3.forcePathStyle,
      now: opts.now,
    });
  }
  return createDiskStorage({ root: s.dir, publicBaseUrl: config.publicBaseUrl, signingKey: storageSigningKey(config).key, now: opts.now });
}
