// The MCP server over stdio for desktop assistants: `bun run mcp` (docs/api.md "AI assistants: MCP and generation").
// A bridge to the service's Streamable HTTP endpoint (POSTPILOT_API_URL + /mcp) with the key of
// POSTPILOT_API_KEY: the tools, scopes, rate limit and quota are the HTTP endpoint's own, and the
// desktop needs no database or Temporal access (docs/decisions.md "AI assistants").
// stdout carries the protocol only: everything else goes to stderr.
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError, loadConfig } from '../lib/config.ts';

const fail = (message: string): never => {
  console.error(`postpilot mcp: ${message}`);
  process.exit(1);
};

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (err) {
  fail(err instanceof ConfigError ? err.message : String(err));
}
const { apiUrl, apiKey } = config!.mcp;
if (!apiKey) fail('set POSTPILOT_API_KEY to an API key of your organization (web app: Settings → API keys).');

const http = new StreamableHTTPClientTransport(new URL('/mcp', `${apiUrl}/`), {
  requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
});
const stdio = new StdioServerTransport();

/** An HTTP refusal (401, 403 plan_required, 429…) as the assistant sees it: our error body. */
function refusal(err: unknown): { status: number; body: unknown } {
  const status = err instanceof StreamableHTTPError ? (err.code ?? 0) : 0;
  const text = err instanceof Error ? err.message : String(err);
  const json = text.indexOf('{');
  try {
    if (json >= 0) return { status, body: JSON.parse(text.slice(json)) };
  } catch {
    // not our error body
  }
  return { status, body: { error: { code: 'internal_error', message: `The Postpilot API could not be reached at ${apiUrl}: ${text}` } } };
}

/** Answers a request the HTTP endpoint refused: a tool call gets a tool error, anything else a JSON-RPC error. */
async function answerRefused(message: JSONRPCMessage, err: unknown): Promise<void> {
  if (!isJSONRPCRequest(message)) return;
  const { status, body } = refusal(err);
  const text = JSON.stringify(body);
  if (message.method === 'tools/call') {
    await stdio.send({
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text }], structuredContent: body as Record<string, unknown>, isError: true },
    });
  } else {
    await stdio.send({
      jsonrpc: '2.0',
      id: message.id,
      error: { code: -32000, message: text, data: { httpStatus: status, ...(body as object) } },
    });
  }
}

stdio.onmessage = (message) => {
  http.send(message).catch((err) => answerRefused(message, err).catch((e) => console.error('postpilot mcp:', e)));
};
http.onmessage = (message) => {
  stdio.send(message).catch((e) => console.error('postpilot mcp:', e));
};
http.onerror = (err) => console.error('postpilot mcp:', err.message);
stdio.onerror = (err) => console.error('postpilot mcp:', err.message);
// The assistant closed stdin: done.
stdio.onclose = () => {
  void http.close().finally(() => process.exit(0));
};

await http.start();
await stdio.start();
console.error(`postpilot mcp: bridging stdio to ${apiUrl}/mcp`);
