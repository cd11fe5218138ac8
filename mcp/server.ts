// The MCP server for one authenticated caller (docs/decisions.md "AI assistants"): the tools of
// mcp/tools.ts with their JSON Schemas, each call checked for its scope and its input, then run;
// a failure comes back as a tool error (isError) carrying the /v1 error body, code and message.
// Built per HTTP request (stateless): nothing of a caller outlives its request.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Value } from '@sinclair/typebox/value';
import { mapError } from '../http/errors.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import type { LogEntry } from '../lib/log.ts';
import { TOOLS, type Tool, type ToolContext } from './tools.ts';
import { auditToolCall } from './audit.ts';
import { fieldErrors } from '../lib/schema-words.ts';
import { authorizeCaller } from '../services/api-keys.ts';
import { scopeOf } from '../domain/access.ts';

export const SERVER_INFO = { name: 'postpilot', title: 'Postpilot', version: '1.0.0' };

const INSTRUCTIONS = [
  'Postpilot schedules and publishes social media posts to the connected channels of one organization.',
  'Start with whoami (what this key may do) and list_channels (channel ids and each channel’s rules).',
  'Write posts that fit each channel’s maxChars (generate_post drafts them), check with validate_post, then create_post.',
  'Errors come back as {"error": {"code", "message", "details"}}; details.fields names what to fix.',
].join(' ');

/** A tool as tools/list shows it: the input schema is plain JSON Schema (TypeBox's symbols dropped). */
function listed(t: Tool) {
  return {
    name: t.name,
    title: t.title,
    description: `${t.description} Needs the "${scopeOf(t.action)}" scope.`,
    inputSchema: JSON.parse(JSON.stringify(t.input)) as { type: 'object'; [k: string]: unknown },
    annotations: { title: t.title, ...t.annotations },
  };
}

/** TypeBox's errors as details.fields (the paths as /v1 writes them: `channelIds.0`). */
const inputProblems = (t: Tool, args: unknown): FieldError[] => fieldErrors(Value.Errors(t.input, args));

const result = (body: Record<string, unknown>, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(body) }],
  structuredContent: body,
  ...(isError ? { isError: true } : {}),
});

export async function callTool(
  ctx: ToolContext,
  name: string,
  args: Record<string, unknown>,
  log: (entry: LogEntry) => void = () => {},
): Promise<CallToolResult> {
  const t = TOOLS.find((x) => x.name === name);
  if (!t) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. tools/list names the tools.`);
  try {
    // The order of /v1: the scope, then the input.
    await authorizeCaller(ctx.caller, t.action);
    const fields = inputProblems(t, args);
    if (fields.length) throw errors.validation(fields);
    // Per call: what the tool notes of itself (a replayed answer) is this call's alone.
    const call: ToolContext = { ...ctx, replayed: false };
    const answer = await t.run(call, args as never);
    await auditToolCall(call, t, args, answer).catch((err) =>
      // The change itself is made: its answer stands, and the missing record is logged.
      log({ level: 'error', msg: 'audit event not recorded', tool: name, error: err instanceof Error ? err : String(err) }),
    );
    return result(answer);
  } catch (err) {
    const mapped = mapError('UNKNOWN', err);
    if (mapped.unexpected)
      log({ level: 'error', msg: 'unexpected error in an MCP tool', tool: name, error: err instanceof Error ? err : String(err) });
    return result(mapped.body as unknown as Record<string, unknown>, true);
  }
}

export function createMcpServer(ctx: ToolContext, log?: (entry: LogEntry) => void): McpServer {
  const mcp = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  // JSON Schemas of our own (TypeBox, as /v1), so the low-level handlers rather than registerTool (zod).
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS.map(listed) }));
  mcp.server.setRequestHandler(CallToolRequestSchema, (req) => callTool(ctx, req.params.name, req.params.arguments ?? {}, log));
  return mcp;
}
