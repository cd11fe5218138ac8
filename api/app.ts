// The HTTP app, built by a factory so the server and the tests run the very same thing.
import { router } from './router.ts';
import { newId } from '../lib/ids.ts';
import { ApiError } from '../lib/errors.ts';
import { defaultLog, type AppDeps } from './context.ts';
import { mapError } from './errors.ts';
import { channelRoutes } from './routes/channels.ts';
import { meRoutes } from './routes/me.ts';
import { postRoutes } from './routes/posts.ts';
import { mediaRoutes } from './routes/media.ts';
import { storageRoutes } from './routes/storage.ts';
import type { DiskStorage } from '../storage/disk.ts';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The server accepts bodies this large (a 1 GB video PUT to the disk store, plus headroom)… */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024 * 1024 + 1024 * 1024;
/** …but a JSON request to /v1 may be at most 1 MB. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** RateLimit-* headers set by auth stay on error responses too. */
function rateLimitHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.startsWith('ratelimit-') && v !== undefined) out[k] = String(v);
  return out;
}

export function createApp(deps: AppDeps) {
  const log = deps.log ?? defaultLog;
  return router()
    .onRequest(({ request, set }) => {
      const given = request.headers.get('x-request-id');
      set.headers['x-request-id'] = given && CLIENT_REQUEST_ID.test(given) ? given : newId('req');
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > MAX_JSON_BODY_BYTES && new URL(request.url).pathname.startsWith('/v1/')) {
        throw new ApiError('validation_failed', 'The request body is larger than 1 MB.', { limitBytes: MAX_JSON_BODY_BYTES }, undefined, 413);
      }
    })
    .onError(({ code, error, set, request, path }) => {
      const mapped = mapError(code, error);
      if (mapped.unexpected) {
        log({
          level: 'error',
          requestId: set.headers['x-request-id'],
          method: request.method,
          path,
          error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
        });
      }
      return new Response(JSON.stringify(mapped.body), {
        status: mapped.status,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          ...rateLimitHeaders(set.headers as Record<string, unknown>),
          'x-request-id': String(set.headers['x-request-id'] ?? newId('req')),
          ...mapped.headers,
        },
      });
    })
    // The disk store receives uploads and serves files itself, at signed URLs outside /v1.
    .use(deps.storage?.kind === 'disk' ? storageRoutes(deps.storage as DiskStorage) : router())
    .group('/v1', (v1) => v1.use(meRoutes(deps)).use(channelRoutes(deps)).use(postRoutes(deps)).use(mediaRoutes(deps)));
}

export type App = ReturnType<typeof createApp>;
