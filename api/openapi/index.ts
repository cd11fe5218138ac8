// GET /v1/openapi.json and GET /v1/docs (no key): the OpenAPI 3.1 document of /v1, generated
// from the app's own routes the first time it is asked for, and a readable page of it.
import { router } from '../../http/router.ts';
import { buildOpenApiDocument, type RouteInfo } from './document.ts';
import { renderDocsPage } from './docs-page.ts';

export { doc, type OperationDoc } from './operation.ts';
export { buildOpenApiDocument, AUTH_ERRORS } from './document.ts';
export { renderDocsPage } from './docs-page.ts';

/** `routes` is read at request time: the app is complete by then. */
export function openApiRoutes(routes: () => readonly RouteInfo[]) {
  let cached: { count: number; json: string; html: string } | undefined;
  const current = () => {
    const all = routes();
    if (!cached || cached.count !== all.length) {
      const document = buildOpenApiDocument(all);
      cached = { count: all.length, json: JSON.stringify(document), html: renderDocsPage(document) };
    }
    return cached;
  };
  return router()
    .get(
      '/openapi.json',
      () => new Response(current().json, { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' } }),
      { detail: { hide: true } },
    )
    .get(
      '/docs',
      () =>
        new Response(current().html, {
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-cache',
            // The page is self-contained: inline styles, no script, nothing loaded from elsewhere.
            'content-security-policy':
              "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
          },
        }),
      { detail: { hide: true } },
    );
}
