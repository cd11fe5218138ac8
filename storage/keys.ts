// Rules both stores share: what an object key may look like, what a signed upload may declare,
// and the error a read of a missing object throws.

/**
 * Segments of [A-Za-z0-9._-] joined by single slashes, none starting with a dot: this shuts out
 * `..`, `.`, absolute paths, empty segments and hidden names (the disk store keeps its own
 * bookkeeping under dot-directories of its root).
 */
const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;
export const MAX_KEY_LENGTH = 512;

export class InvalidObjectKeyError extends Error {
  override name = 'InvalidObjectKey';
}

export class ObjectNotFoundError extends Error {
  override name = 'ObjectNotFound';
  constructor(readonly key: string) {
    super(`no object stored under ${key}`);
  }
}

export function assertValidKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !KEY.test(key)) {
    throw new InvalidObjectKeyError(
      `invalid object key ${JSON.stringify(String(key).slice(0, 100))}: use [A-Za-z0-9._-] segments joined by "/", none starting with "."`,
    );
  }
}

/** A media type as a PUT header carries it: printable ASCII, no line breaks. */
const CONTENT_TYPE = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

export function assertUploadOptions(opts: { contentType: string; contentLength: number; expiresAt: Date }, now: Date): void {
  if (!CONTENT_TYPE.test(opts.contentType ?? '')) throw new TypeError('contentType must be a printable media type');
  if (!Number.isSafeInteger(opts.contentLength) || opts.contentLength < 0)
    throw new TypeError('contentLength must be a non-negative integer');
  if (!(opts.expiresAt instanceof Date) || Number.isNaN(opts.expiresAt.getTime())) throw new TypeError('expiresAt must be a valid Date');
  if (opts.expiresAt.getTime() <= now.getTime()) throw new TypeError('expiresAt must be in the future');
}

export function assertRange(start: number, endInclusive: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(endInclusive) || start < 0 || endInclusive < start) {
    throw new RangeError(`invalid byte range ${start}-${endInclusive}`);
  }
}
