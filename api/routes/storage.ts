// The disk store's upload and download endpoints (DESIGN.md §2): the signed, expiring URLs that
// storage/disk.ts hands out point here. Mounted outside /v1 (no API key: the URL is the grant).
// The PUT mirrors a presigned S3 PUT: the signed Content-Type and length must match, the bytes
// are streamed to disk (never buffered whole), and a refused upload leaves no object behind.
// Every refusal is answered here, in the API's error body, so the routes behave the same
// wherever they are mounted. Once an upload is closed (its item completed or expired) its URL
// answers 409; downloads carry media/serving.ts's headers (nosniff, disposition, sandbox CSP).
import { router } from '../../http/router.ts';
import { ERROR_STATUS, errorBody, type ErrorCode } from '../../lib/errors.ts';
import { contentDisposition, MEDIA_SECURITY_HEADERS, servedContentType } from '../../media/serving.ts';
import { UploadClosedError, UploadSizeError, type DiskStorage } from '../../storage/disk.ts';

function fail(
  status: number,
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
): Response {
  return new Response(JSON.stringify(errorBody(code, message, details)), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

const badUploadUrl = () => fail(ERROR_STATUS.unauthorized, 'unauthorized', 'upload URL invalid or expired');
const badDownloadUrl = () => fail(ERROR_STATUS.unauthorized, 'unauthorized', 'download URL invalid or expired');
const uploadClosed = () =>
  fail(
    ERROR_STATUS.conflict,
    'conflict',
    'This upload is closed: its media item was completed (or its window ended), so the URL no longer accepts bytes. Create a new upload to send another file.',
  );
const field = (path: string, message: string, status = 422, text = 'The upload does not match its signed URL.') =>
  fail(status, 'validation_failed', text, { fields: [{ path, message }] });

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` (one range only); undefined when absent, null when unsatisfiable. */
function parseRange(header: string | null, size: number): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (!m[1] && !m[2])) return undefined; // malformed or multi-range: serve it all, as S3 does
  let start: number;
  let end: number;
  if (!m[1]) {
    const suffix = Number(m[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  }
  if (start >= size || start > end) return null;
  return { start, end };
}

export function storageRoutes(storage: DiskStorage) {
  async function serve(token: string, request: Request, withBody: boolean): Promise<Response> {
    const checked = storage.verifyDownloadToken(token);
    if (!checked.ok) return badDownloadUrl();
    const found = await storage.locate(checked.grant.key);
    if (!found) return fail(ERROR_STATUS.not_found, 'not_found', 'Object not found.');
    // Only an accepted media type is ever served as such; anything else is a download.
    const type = servedContentType(found.contentType);
    const headers: Record<string, string> = {
      'content-type': type,
      'content-disposition': found.contentDisposition ?? contentDisposition(type),
      ...MEDIA_SECURITY_HEADERS,
      'accept-ranges': 'bytes',
      'cache-control': 'private, max-age=0',
    };
    if (found.etag) headers.etag = found.etag;
    const range = parseRange(request.headers.get('range'), found.size);
    if (range === null) return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${found.size}` } });
    const start = range?.start ?? 0;
    const end = range?.end ?? found.size - 1;
    headers['content-length'] = String(Math.max(0, end - start + 1));
    if (range) headers['content-range'] = `bytes ${start}-${end}/${found.size}`;
    const body = withBody && found.size > 0 ? Bun.file(found.path).slice(start, end + 1) : null;
    return new Response(body, { status: range ? 206 : 200, headers });
  }

  return router()
    .put(
      '/storage/upload/:token',
      async ({ params, request }) => {
        const checked = storage.verifyUploadToken(params.token);
        if (!checked.ok) return badUploadUrl();
        const grant = checked.grant;
        // Before anything is read: the bytes of a completed item are final.
        if (await storage.isUploadClosed(grant.key)) return uploadClosed();
        const type = request.headers.get('content-type');
        if (type !== grant.contentType) {
          return field('headers.content-type', `must be ${JSON.stringify(grant.contentType)}, as signed`);
        }
        const declared = request.headers.get('content-length');
        if (declared !== null) {
          const n = /^\d+$/.test(declared) ? Number(declared) : NaN;
          if (n > grant.contentLength) return field('headers.content-length', `must be ${grant.contentLength}, as signed`, 413);
          if (n !== grant.contentLength) return field('headers.content-length', `must be ${grant.contentLength}, as signed`);
        }
        try {
          const { etag } = await storage.writeStream(grant.key, request.body, {
            contentType: grant.contentType,
            contentLength: grant.contentLength,
            upload: true,
          });
          return new Response(null, { status: 200, headers: { etag } });
        } catch (err) {
          if (err instanceof UploadClosedError) return uploadClosed();
          if (err instanceof UploadSizeError) {
            return err.reason === 'too_large'
              ? field('body', `exceeds the signed length of ${grant.contentLength} bytes`, 413)
              : field('body', `has ${err.received} of the signed ${grant.contentLength} bytes`);
          }
          throw err;
        }
      },
      // The raw bytes are the object: Elysia must not read or parse them.
      { parse: 'none' },
    )
    .get('/storage/object/:token', ({ params, request }) => serve(params.token, request, true))
    .head('/storage/object/:token', ({ params, request }) => serve(params.token, request, false));
}
