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
  /**
   * One character per segment, `0` literal and `1` parameter. Paths that fit the same request
   * have as many segments, so the smallest rank is the most literal one: the path that request names.
   */
  rank: string;
}

interface Compiled {
  count: number;
  /** Most literal first. */
  paths: PathMethods[];
  /**
   * Literal paths that a template beside them fits too (`/v1/posts/validate`, `/v1/posts/:id`),
   * trailing slash removed. The router takes a method only the template serves to the template,
   * so these are answered before routing.
   */
  shadowed: Map<string, PathMethods>;
}

const PREFIX = '/v1/';

/** One entry per /v1 path: its methods (HEAD wherever GET is, as Bun answers it; OPTIONS). */
function compile(routes: readonly RouteInfo[]): Compiled {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    if (!r.path.startsWith(PREFIX) || r.path.includes('*')) continue;
    const methods = byPath.get(r.path) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    byPath.set(r.path, methods);
  }
  const paths = [...byPath]
    .map(([path, methods]): PathMethods => {
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      const segments = path.split('/');
      // As Elysia matches: a `:param` is one non-empty segment; a trailing slash is ignored.
      const source = segments.map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      const rank = segments.map((seg) => (seg.startsWith(':') ? '1' : '0')).join('');
      return { pattern: new RegExp(`^${source}/?$`), path, allow: [...methods].sort(), rank };
    })
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  const shadowed = new Map<string, PathMethods>();
  for (const p of paths) {
    if (p.path.includes('/:')) continue;
    if (paths.some((other) => other !== p && other.pattern.test(p.path))) shadowed.set(p.path, p);
  }
  return { count: routes.length, paths, shadowed };
}

/** The path of a request URL, without parsing all of it (this runs on every request). */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  let end = url.length;
  for (const c of ['?', '#']) {
    const at = url.indexOf(c, start);
    if (at >= 0 && at < end) end = at;
  }
  return url.slice(start, end);
}

/**
 * Answers for /v1 requests by the route table. `beforeRouting`: a literal path (`/v1/media/uploads`)
 * asked with a method only the template beside it serves (`GET /v1/media/:id`) is a 405, not a
 * request for the item "uploads". `notFound`: a request no route took (Elysia's NOT_FOUND) whose
 * path the API serves with other methods; undefined when the path is unknown (a 404 then).
 */
export function methodNotAllowed(routes: () => readonly RouteInfo[]) {
  let cached: Compiled | undefined;
  const compiled = () => {
    const all = routes();
    if (!cached || cached.count !== all.length) cached = compile(all);
    return cached;
  };
  const answer = (request: Request, requestId: string, found: PathMethods): Response => {
    const headers = { allow: found.allow.join(', '), 'x-request-id': requestId };
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers });
    const method = request.method.slice(0, 20);
    const body = errorBody(
      'not_found',
      `${method} is not allowed on ${found.path.replace(/:(\w+)/g, '{$1}')}; allowed: ${found.allow.join(', ')}.`,
      { method, allow: found.allow },
    );
    return new Response(request.method === 'HEAD' ? null : JSON.stringify(body), {
      status: 405,
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
    });
  };
  return {
    beforeRouting(request: Request, requestId: string): Response | undefined {
      const pathname = pathOf(request.url);
      if (!pathname.startsWith(PREFIX)) return undefined;
      const found = compiled().shadowed.get(pathname.endsWith('/') ? pathname.slice(0, -1) : pathname);
      if (!found || found.allow.includes(request.method)) return undefined;
      return answer(request, requestId, found);
    },
    notFound(request: Request, requestId: string): Response | undefined {
      const pathname = new URL(request.url).pathname;
      if (!pathname.startsWith(PREFIX)) return undefined;
      // The most literal path that fits: `/v1/posts/validate` is that route's, not `/v1/posts/:id`'s.
      const found = compiled().paths.find((p) => p.pattern.test(pathname));
      return found && answer(request, requestId, found);
    },
  };
}
