// The HTTP app, built by a factory so the server and the tests run the very same thing: request
// ids, error mapping and the request log for everything, the probes, the disk store's URLs, the
// short links of published posts (/l/{code}), the API under /v1 and the web app at /. It sits above api/ and web/, which never import each other
// (docs/architecture.md).
import { router } from '../http/router.ts';
import { newId } from '../lib/ids.ts';
import { unwrapParseError } from '../http/body.ts';
import { defaultLog, type AppDeps } from '../http/deps.ts';
import { mapError } from '../http/errors.ts';
import { methodNotAllowed } from '../api/allowed-methods.ts';
import { healthRoutes } from '../api/health.ts';
import type { RouteInfo } from '../api/openapi/document.ts';
import { v1Api } from '../api/v1.ts';
import { keyAuthenticator } from '../api/auth.ts';
import { mcpRoutes } from '../mcp/http.ts';
import { redact, sinkRedacts, type LogEntry, type LogLevel } from '../lib/log.ts';
import { storageRoutes } from '../api/routes/storage.ts';
import { shortLinkRoutes } from '../api/routes/short-links.ts';
import type { DiskStorage } from '../storage/disk.ts';
import { webApp } from '../web/app.ts';
import type { WebDeps } from '../web/context.ts';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * The server accepts bodies this large (a 1 GB video PUT to the disk store, plus headroom), for
 * the storage upload route only: every other route reads its body through http/body.ts, with its
 * own small limit (1 MB on /v1, web/context.ts for the web app).
 */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024 * 1024 + 1024 * 1024;

/** The API's dependencies and the web app's settings. */
export type ServerDeps = AppDeps & WebDeps;

/** RateLimit-* headers set by auth stay on error responses too. */
function rateLimitHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k.startsWith('ratelimit-') && v !== undefined) out[k] = String(v);
  return out;
}

/** Liveness and readiness probes are polled every few seconds: their request lines are debug. */
const PROBE_ROUTES = new Set(['/health', '/ready']);

function statusOf(set: { status?: unknown }, value: unknown): number {
  if (value instanceof Response) return value.status;
  const s = set.status;
  return typeof s === 'number' ? s : Number(s) || 200;
}

/** What the request log line reads of a finished request (`auth` once a key was admitted). */
interface AfterResponse {
  request: Request;
  set: { headers: Record<string, unknown>; status?: unknown };
  route?: string;
  responseValue?: unknown;
  auth?: { organization?: { id?: string }; key?: { id?: string } };
}

export function createApp(deps: ServerDeps) {
  const sink = deps.log ?? defaultLog;
  // Whatever an entry holds (an error's message, a header), no secret leaves through the log:
  // redacted here unless the sink redacts it itself (the entry points' logger).
  const log = sinkRedacts(sink)
    ? (entry: LogEntry) => sink({ time: new Date().toISOString(), ...entry })
    : (entry: LogEntry) => sink(redact({ time: new Date().toISOString(), ...entry }));
  const started = new WeakMap<Request, number>();
  // The OpenAPI document is built from the finished app's routes, on first request.
  const self: { routes: () => readonly RouteInfo[] } = { routes: () => [] };
  // A /v1 path asked with a method it does not serve: 405 (OPTIONS: 204), from the route table.
  const otherMethod = methodNotAllowed(() => self.routes());
  const authenticateKey = keyAuthenticator(deps);
  const app = router()
    .onRequest(({ request, set }) => {
      started.set(request, performance.now());
      const given = request.headers.get('x-request-id');
      const requestId = given && CLIENT_REQUEST_ID.test(given) ? given : newId('req');
      set.headers['x-request-id'] = requestId;
      // A literal path asked with a method only the template beside it serves: 405 here, or the
      // router would take `/v1/posts/validate` for the post "validate".
      const shadowed = otherMethod.beforeRouting(request, requestId);
      if (shadowed) {
        set.status = shadowed.status; // for the request log line
        return shadowed;
      }
      // No body is read here: the key (or the web session) is checked first, then the body is
      // read with its limit (api/auth.ts, web/context.ts).
    })
    // Every hook names the parts of the context it reads (no spread, no context handed on): Elysia
    // reads the hooks' source to decide what to build per request, and a whole context passed
    // along makes it parse every request's cookies, headers and query for nothing.
    .onError(({ set, request, code: thrown, error: raised, route }) => {
      // A 401 or 413 thrown while the body was being read arrives wrapped in Elysia's ParseError.
      const { code, error } = unwrapParseError(thrown, raised);
      if (code === 'NOT_FOUND') {
        const answer = otherMethod.notFound(request, String(set.headers['x-request-id'] ?? newId('req')));
        if (answer) {
          set.status = answer.status; // for the request log line
          return answer;
        }
      }
      // A handler's answer that breaks its own response schema is our bug, not the client's.
      const badResponse = code === 'VALIDATION' && (error as { type?: unknown }).type === 'response';
      const mapped = badResponse ? mapError('UNKNOWN', error) : mapError(code, error);
      if (mapped.unexpected) {
        log({
          level: 'error',
          msg: badResponse ? 'response does not match its schema' : 'unexpected error',
          requestId: set.headers['x-request-id'],
          method: request.method,
          route: route ?? null,
          error: error instanceof Error ? error : String(error),
        });
      }
      // Read by the request log line (onAfterResponse).
      set.status = mapped.status;
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
    // One line per request: the matched route pattern (never the raw URL, which holds ids and
    // signed tokens), the organization once authenticated, the status and the time taken.
    .onAfterResponse(({ request, set, route: matched, responseValue, auth }: AfterResponse) => {
      const route = matched || null;
      const status = statusOf(set, responseValue);
      const t0 = started.get(request);
      const level: LogLevel = route && PROBE_ROUTES.has(route) ? 'debug' : status >= 500 ? 'error' : 'info';
      log({
        level,
        msg: 'request',
        requestId: set.headers['x-request-id'] ?? null,
        ...(auth?.organization?.id ? { organizationId: auth.organization.id, keyId: auth.key?.id } : {}),
        method: request.method,
        route,
        status,
        latencyMs: t0 === undefined ? null : Math.round((performance.now() - t0) * 10) / 10,
      });
    })
    .use(healthRoutes(deps, log))
    // The disk store receives uploads and serves files itself, at signed URLs outside /v1.
    .use(deps.storage?.kind === 'disk' ? storageRoutes(deps.storage as DiskStorage) : router())
    // Short links in published posts (api/routes/short-links.ts): followed by anyone, outside /v1.
    .use(shortLinkRoutes(deps))
    .use(v1Api(deps, () => self.routes()))
    // The MCP server for AI assistants (mcp/): the same keys, limits and services as /v1.
    .use(mcpRoutes(deps, (input) => authenticateKey(input, null), log))
    // The web application (web/README.md): HTML pages at /, its session JSON under /web/api.
    .use(webApp(deps));
  self.routes = () => app.routes;
  return app;
}

export type App = ReturnType<typeof createApp>;
