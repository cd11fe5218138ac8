// A media item from a URL (the MCP tool upload_media_from_url): the file is fetched through the
// private-address guard (lib/outbound.ts: the URL is the tenant's choice), then goes the normal
// way of an upload — createUpload (the item and its upload workflow), the bytes into the upload
// key, completeUpload (the workflow checks and processes them) — so it ends ready or failed
// exactly as a three-step upload would.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IMediaItem } from '../db/entities/index.ts';
import { errors } from '../lib/errors.ts';
import { BodyTooLargeError, createOutboundFetch, OutboundRefusedError, readBodyUpTo, type OutboundPolicy } from '../lib/outbound.ts';
import { CONTROL_OR_DISGUISE, MAX_FILE_NAME_CHARS, MB, normalizeMimeType, ruleFor } from '../media/catalog.ts';
import { HEAD_BYTES, sniffMimeType } from '../media/sniff.ts';
import type { ObjectStorage } from '../storage/types.ts';
import { completeUpload, createUpload, type MediaViewer } from '../domain/media.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';

/**
 * Held in memory between the fetch and the store, so smaller than a video upload may be; larger
 * files take the three-step upload, which streams.
 */
export const MAX_URL_FETCH_BYTES = 100 * MB;
/** The whole fetch (connect, headers and body). */
export const URL_FETCH_TIMEOUT_MS = 60_000;

export interface MediaFromUrl {
  organizationId: string;
  viewer: MediaViewer;
  url: string;
  fileName?: string;
  altText?: string | null;
  now: Date;
}

const refused = (message: string) => errors.validation([{ path: 'url', message }]);

/** The URL's last path segment, made into a name the upload takes; `download` when it has none. */
export function fileNameFromUrl(url: URL): string {
  let last = url.pathname.split('/').pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // keep it as it is
  }
  const clean = [...last.replace(new RegExp(CONTROL_OR_DISGUISE.source, 'g'), '').replace(/[\\/]/g, '')]
    .slice(0, MAX_FILE_NAME_CHARS)
    .join('')
    .trim();
  return clean && clean !== '.' && clean !== '..' ? clean : 'download';
}

export async function uploadMediaFromUrl(
  em: EntityManager,
  storage: ObjectStorage,
  temporal: TemporalDeps,
  outbound: OutboundPolicy,
  r: MediaFromUrl,
  transport?: typeof fetch,
): Promise<IMediaItem> {
  let url: URL;
  try {
    url = new URL(r.url);
  } catch {
    throw refused('is not a URL');
  }
  const guarded = createOutboundFetch({ ...outbound, ...(transport ? { fetch: transport } : {}) });
  let res: Response;
  try {
    res = await guarded(url, { signal: AbortSignal.timeout(URL_FETCH_TIMEOUT_MS) });
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw refused(err.message);
    const name = (err as { name?: string } | null)?.name;
    throw refused(name === 'TimeoutError' ? `did not answer within ${URL_FETCH_TIMEOUT_MS / 1000} s` : 'could not be fetched');
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw refused(`answered HTTP ${res.status}`);
  }
  const declaredType = normalizeMimeType((res.headers.get('content-type') ?? '').split(';')[0]!);
  let bytes: Uint8Array;
  try {
    bytes = await readBodyUpTo(res, MAX_URL_FETCH_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      throw refused(
        err.declared === null
          ? `the file is larger than ${err.limitBytes} bytes; files fetched by URL may be at most that (use the three-step upload)`
          : `the file is ${err.declared} bytes; files fetched by URL may be at most ${err.limitBytes} bytes (use the three-step upload)`,
      );
    }
    throw refused('could not be fetched (the connection broke)');
  }
  if (bytes.byteLength === 0) throw refused('answered an empty file');
  // The bytes say what the file is; the header only when they do not (processing checks again).
  const sniffed = sniffMimeType(bytes.subarray(0, HEAD_BYTES));
  const mimeType = sniffed && ruleFor(sniffed) ? sniffed : ruleFor(declaredType) ? declaredType : null;
  if (!mimeType) {
    throw refused(`is ${sniffed ?? (declaredType || 'a file of unknown type')}, which the media library does not take`);
  }
  const { item } = await createUpload(em, storage, temporal, {
    organizationId: r.organizationId,
    fileName: r.fileName ?? fileNameFromUrl(url),
    mimeType,
    fileSize: bytes.byteLength,
    altText: r.altText ?? null,
    now: r.now,
    apiKeyId: r.viewer.apiKeyId,
  });
  // What the client's PUT to the upload URL would have stored.
  await storage.put(item.uploadKey ?? item.storageKey, bytes, mimeType);
  return completeUpload(em.fork(), temporal, r.organizationId, item.id, r.viewer);
}
