// 405 Method Not Allowed and OPTIONS for the paths of /v1 (docs/decisions.md "Errors, request ids and ids"),
// derived from the app's own route table: a path the API serves answers any other method with
// 405 and `Allow`, OPTIONS with 204 and `Allow`; an unknown path stays 404. Nothing else of the
// request is read, and no key is needed: the methods are public in the OpenAPI document too.
import { errorBody } from '../lib/errors.ts';
import type { RouteInfo } from './openapi/document.ts';

interface PathMethods {
  pattern: RegExp;
  /** The route as written (`/v1/posts/:id`), for the message. */
  path: string;
  allow: string[];
}

const PREFIX = '/v1/';

/** One entry per /v1 path: its methods (HEAD wherever GET is, as Bun answers it; OPTIONS). */
function compile(routes: readonly RouteInfo[]): PathMethods[] {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    if (!r.path.startsWith(PREFIX) || r.path.includes('*')) continue;
    const methods = byPath.get(r.path) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    byPath.set(r.path, methods);
  }
  return [...byPath]
    .map(([path, methods]) => {
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      // As Elysia matches: a `:param` is one non-empty segment; a trailing slash is ignored.
      const source = path
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      return { pattern: new RegExp(`^${source}/?$`), path, allow: [...methods].sort() };
    })
    .sort((a, b) => a.path.split(':').length - b.path.split(':').length);
}

/**
 * The answer for a request no route took (Elysia's NOT_FOUND), when its path is one the API
 * serves with other methods; undefined when the path is unknown (a 404 then).
 */
export function methodNotAllowed(routes: () => readonly RouteInfo[]) {
  let cached: { count: number; paths: PathMethods[] } | undefined;
  return (request: Request, requestId: string): Response | undefined => {
    const pathname = new URL(request.url).pathname;
    if (!pathname.startsWith(PREFIX)) return undefined;
    const all = routes();
    if (!cached || cached.count !== all.length) cached = { count: all.length, paths: compile(all) };
    // `/v1/media/uploads` is also `/v1/media/:id`: a path takes the methods of every route it matches.
    const found = cached.paths.filter((p) => p.pattern.test(pathname));
    if (!found.length) return undefined;
    const allow = [...new Set(found.flatMap((p) => p.allow))].sort();
    const headers = { allow: allow.join(', '), 'x-request-id': requestId };
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers });
    const method = request.method.slice(0, 20);
    const body = errorBody(
      'not_found',
      `${method} is not allowed on ${found[0]!.path.replace(/:(\w+)/g, '{$1}')}; allowed: ${allow.join(', ')}.`,
      {
        method,
        allow,
      },
    );
    return new Response(request.method === 'HEAD' ? null : JSON.stringify(body), {
      status: 405,
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
    });
  };
}
