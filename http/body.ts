// Request bodies read with a byte limit (docs/decisions.md "Request bodies"). The server accepts
// bodies up to MAX_REQUEST_BODY_BYTES for the storage upload route only; every other route reads
// its body through here: counted chunk by chunk and cut off as soon as the limit is passed, with
// or without Content-Length, so a client can never make the process hold more than the limit.
import { ApiError } from '../lib/errors.ts';

/** The largest JSON body a /v1 request may have. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

const sizeText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${Math.round(bytes / 1024)} KB`);

/** 413 in the error body (SPEC.md §7 has no code of its own for it: validation_failed). */
export const bodyTooLarge = (limitBytes: number) =>
  new ApiError('validation_failed', `The request body is larger than ${sizeText(limitBytes)}.`, { details: { limitBytes }, status: 413 });

export const isBodyTooLarge = (err: unknown): err is ApiError => err instanceof ApiError && err.status === 413;

/**
 * The body's bytes, or null when the request has none. A declared Content-Length over the limit
 * is refused before anything is read; otherwise chunks are counted as they arrive and reading
 * stops (the stream is cancelled, the rest is never buffered) at the first byte past the limit.
 */
export async function readBody(request: Request, limitBytes: number): Promise<Uint8Array | null> {
  const stream = request.body;
  if (!stream) return null;
  const declared = request.headers.get('content-length')?.trim();
  if (declared && /^\d+$/.test(declared) && Number(declared) > limitBytes) {
    void stream.cancel().catch(() => {});
    throw bodyTooLarge(limitBytes);
  }
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      void reader.cancel().catch(() => {});
      throw bodyTooLarge(limitBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** UTF-8 text, as Request.text() decodes it (a BOM dropped, broken sequences → U+FFFD). */
export const bodyText = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** application/json and any `+json` type, in any letter case and with any parameters. */
export function isJsonType(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

export const malformedJson = () =>
  new ApiError('validation_failed', 'The request body is not valid JSON.', {
    details: { fields: [{ path: '', message: 'malformed JSON' }] },
  });

/**
 * A JSON API's body: parsed JSON for a JSON content type (or none: a client that names no type
 * is read as JSON), null when there is none. Never undefined: after a parse hook that answers
 * undefined Elysia runs its own parsers, on a stream already read. `other`: a route that takes
 * another media type too (the CSV import) gets any other type's body as text; elsewhere a body
 * of another type is one 422 naming `Content-Type: application/json`, not the schema's refusals
 * of a string.
 */
export async function readJsonBody(request: Request, limitBytes: number, other?: string): Promise<unknown> {
  const bytes = await readBody(request, limitBytes);
  const type = request.headers.get('content-type');
  // An empty file (text/csv) is a body of its own, refused by its route's rules; empty JSON is no body.
  if (bytes === null || bytes.byteLength === 0) return type && !isJsonType(type) ? '' : null;
  const text = bodyText(bytes);
  if (type !== null && !isJsonType(type)) {
    if (other) return text;
    throw new ApiError(
      'validation_failed',
      `The body must be JSON, sent with "Content-Type: application/json" (this one was sent as "${type.slice(0, 100)}").`,
      {
        details: { fields: [{ path: '', message: 'send JSON with Content-Type: application/json' }], contentType: type.slice(0, 100) },
      },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformedJson();
  }
}

/**
 * Elysia wraps whatever a parse hook throws in its ParseError ("not valid JSON"). The hooks that
 * authenticate and read bodies throw ApiErrors for the client and wrap anything else in this, so
 * the app's onError can answer with the real error (a 401, a 413, or a logged 500).
 */
export class EarlyStepFailure extends Error {
  constructor(readonly failure: unknown) {
    super('failure before the body was parsed', { cause: failure });
  }
}

/** Runs a parse hook's work; its errors reach onError as themselves (see EarlyStepFailure). */
export async function earlyStep<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw err instanceof ApiError ? err : new EarlyStepFailure(err);
  }
}

/** For onError: the error a parse hook meant, unwrapped from Elysia's ParseError. */
export function unwrapParseError(code: string | number, error: unknown): { code: string | number; error: unknown } {
  if (code !== 'PARSE') return { code, error };
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof ApiError) return { code: 'UNKNOWN', error: cause };
  if (cause instanceof EarlyStepFailure) return { code: 'UNKNOWN', error: cause.failure };
  return { code, error };
}
