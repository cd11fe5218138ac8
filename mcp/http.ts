// The MCP server over Streamable HTTP at /mcp, stateless: every POST is authenticated like a /v1
// request (the bearer API key: 401, plan, rate limit and monthly quota, counted once), then answered
// by a server built for that caller alone (mcp/server.ts) and dropped. No session id, no GET
// stream: a stateless server has nothing to push.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { bodyText, MAX_JSON_BODY_BYTES, readBody } from '../http/body.ts';
import type { AppDeps } from '../http/deps.ts';
import { router } from '../http/router.ts';
import { requestOrigin } from '../http/origin.ts';
import { errorBody } from '../lib/errors.ts';
import type { LogEntry } from '../lib/log.ts';
import type { Caller } from '../services/account.ts';
import { createMcpServer } from './server.ts';

/** Admits the request's key without a scope check (api/auth.ts keyAuthenticator, given by server/app.ts). */
export type AdmitKey = (input: { request: Request; set: { headers: Record<string, unknown> } }) => Promise<Caller>;

export const MCP_PATH = '/mcp';

export function mcpRoutes(deps: AppDeps, admit: AdmitKey, log: (entry: LogEntry) => void = () => {}) {
  return router().all(
    MCP_PATH,
    async (ctx) => {
      const { request, set } = ctx;
      if (request.method !== 'POST') {
        set.status = 405;
        return new Response(
          JSON.stringify(
            errorBody('not_found', 'The MCP endpoint takes POST only (Streamable HTTP, stateless: no GET stream, no sessions).'),
          ),
          { status: 405, headers: { allow: 'POST', 'content-type': 'application/json; charset=utf-8' } },
        );
      }
      const caller = await admit({ request, set });
      // The request log line names the organization and the key (server/app.ts onAfterResponse).
      Object.assign(ctx, { auth: caller });
      const mcp = createMcpServer({ deps, caller, origin: requestOrigin(request, ctx.server, deps.trustProxyHops) }, log);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: MAX_JSON_BODY_BYTES,
      });
      // Read here (bounded, after the key was checked) so that a body the SDK's validation would
      // fail on is refused as invalid params rather than as an internal error.
      const bytes = await readBody(request, MAX_JSON_BODY_BYTES);
      const refused = bytes && refusedKey(bodyText(bytes));
      if (refused) return refused;
      await mcp.connect(transport);
      try {
        // With JSON responses the answer is complete when this returns: the server can go.
        return await transport.handleRequest(
          new Request(request.url, { method: request.method, headers: request.headers, body: bytes ?? undefined }),
        );
      } finally {
        await mcp.close();
      }
    },
    { parse: 'none' },
  );
}

/** Keys that name an object's prototype machinery: the SDK's validation (zod) throws on them. */
const PROTOTYPE_KEYS = new Set(['constructor', '__proto__', 'prototype']);

/** A JSON-RPC "invalid params" answer when the body holds such a key anywhere; null otherwise (or when it is no JSON). */
function refusedKey(text: string): Response | null {
  let found: string | undefined;
  let message: unknown;
  try {
    message = JSON.parse(text, function (key, value) {
      if (PROTOTYPE_KEYS.has(key) && Object.hasOwn(this as object, key)) found ??= key;
      return value;
    });
  } catch {
    return null;
  }
  if (found === undefined) return null;
  const id = message && typeof message === 'object' && 'id' in message ? (message as { id: unknown }).id : null;
  const body = { jsonrpc: '2.0', id: id ?? null, error: { code: -32602, message: `Invalid params: the key "${found}" is not accepted` } };
  return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
}
