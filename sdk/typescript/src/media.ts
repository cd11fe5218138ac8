// A file into the media library in one call: the three steps of an upload (create, PUT the bytes
// to the address given with exactly the headers given, complete), then the item read until it is
// `ready` (or `failed`, an error then).
import { PostpilotError } from './errors.ts';
import type { components } from './generated/openapi.ts';
import type { RequestOptions, Transport } from './transport.ts';
import { OPERATIONS } from './generated/operations.ts';

export type MediaItem = components['schemas']['MediaItem'];
type MimeType = components['schemas']['CreateUploadRequest']['mimeType'];

export interface UploadInput {
  /** The bytes: a Blob (a File), an ArrayBuffer or a Uint8Array. */
  file: Blob | ArrayBuffer | Uint8Array;
  fileName: string;
  /** The file's type; a Blob's own type when not given. */
  mimeType?: MimeType;
  altText?: string;
  /** How long to wait for `ready` after completing; default 60 s. */
  readyWithinMs?: number;
}

const POLL_MS = 250;

export async function uploadMedia(
  t: Transport,
  fetcher: typeof fetch,
  input: UploadInput,
  options: RequestOptions = {},
): Promise<MediaItem> {
  const blob = input.file instanceof Blob ? input.file : new Blob([input.file as ArrayBuffer]);
  const mimeType = input.mimeType ?? (blob.type as MimeType);
  if (!mimeType) throw new TypeError('mimeType is required when the file has no type');
  const started = await t.call<components['schemas']['UploadResponse']>(
    OPERATIONS.createUpload,
    {
      body: { fileName: input.fileName, mimeType, fileSize: blob.size, ...(input.altText !== undefined ? { altText: input.altText } : {}) },
    },
    options,
  );
  const put = await fetcher(started.upload.url, { method: 'PUT', headers: started.upload.headers, body: blob, signal: options.signal });
  if (!put.ok) {
    throw new PostpilotError(`PUT of the file answered ${put.status}`, put.status, 'upload_failed', undefined, undefined);
  }
  let item = await t.call<MediaItem>(OPERATIONS.completeUpload, { path: { id: started.media.id } }, options);
  const deadline = Date.now() + (input.readyWithinMs ?? 60_000);
  while (item.status === 'pending' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    item = await t.call<MediaItem>(OPERATIONS.getMedia, { path: { id: item.id } }, options);
  }
  if (item.status === 'failed') {
    throw new PostpilotError(`the media item failed: ${JSON.stringify(item.error ?? null)}`, 0, 'media_failed', { media: item }, undefined);
  }
  if (item.status !== 'ready')
    throw new PostpilotError('the media item is not ready in time', 0, 'media_not_ready', { media: item }, undefined);
  return item;
}
