// The service's short links (domain/links/clicks.ts states the rules): `GET /l/{code}` answers 302
// to the link's recorded target and counts the click. Mounted outside /v1, without a key: whoever
// reads a published post follows it. Not in the /v1 OpenAPI document (docs/api.md "Tracked links").
import { router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import type { SocketServer } from '../../http/origin.ts';
import { ERROR_STATUS, errorBody } from '../../lib/errors.ts';
import { clickHasher, followLink, isCrawler } from '../../domain/links/clicks.ts';
import { clientAddress } from '../../services/sign-in-throttle.ts';

// Every answer: never kept by a cache (each GET is a click to count), no referrer passed on (the
// target learns where a visit came from by its UTM parameters), not indexed.
const HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex' };

const notFound = () =>
  new Response(JSON.stringify(errorBody('not_found', 'No such link.')), {
    status: ERROR_STATUS.not_found,
    headers: { 'content-type': 'application/json; charset=utf-8', ...HEADERS },
  });

export function shortLinkRoutes(deps: AppDeps) {
  const now = deps.now ?? (() => new Date());
  const hash = clickHasher(deps.webhooks?.credentialsKey ?? deps.platforms?.credentialsKey);
  async function follow(code: string, request: Request, server: SocketServer, count: boolean): Promise<Response> {
    const socket = server?.requestIP(request)?.address ?? null;
    const click = count && !isCrawler(request.headers.get('user-agent'));
    const address = click ? clientAddress(request, socket, deps.trustProxyHops ?? 0) : '';
    const target = await followLink(deps.orm.em.fork(), code, click ? { addressHash: hash(code, address), at: now() } : null);
    if (target === null) return notFound();
    return new Response(null, { status: 302, headers: { location: target, ...HEADERS } });
  }
  return router()
    .get('/l/:code', ({ params, request, server }) => follow(params.code, request, server, true))
    .head('/l/:code', ({ params, request, server }) => follow(params.code, request, server, false));
}
