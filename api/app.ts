// The HTTP app, built by a factory so the server and the tests run the very same thing.
import { router } from './router.ts';
import { newId } from '../lib/ids.ts';
import { defaultLog, type AppDeps } from './context.ts';
import { mapError } from './errors.ts';
import { channelRoutes } from './routes/channels.ts';
import { meRoutes } from './routes/me.ts';
import { postRoutes } from './routes/posts.ts';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createApp(deps: AppDeps) {
  const log = deps.log ?? defaultLog;
  return router()
    .onRequest(({ request, set }) => {
      const given = request.headers.get('x-request-id');
      set.headers['x-request-id'] = given && CLIENT_REQUEST_ID.test(given) ? given : newId('req');
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
          'x-request-id': String(set.headers['x-request-id'] ?? newId('req')),
          ...mapped.headers,
        },
      });
    })
    .group('/v1', (v1) => v1.use(meRoutes(deps)).use(channelRoutes(deps)).use(postRoutes(deps)));
}

export type App = ReturnType<typeof createApp>;
