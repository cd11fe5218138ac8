// The audit of the MCP server (domain/audit.ts): every tool that is not read-only names its audit
// action in its own entry (mcp/tools.ts `audit`), and callTool (mcp/server.ts) records each call
// that succeeded, with the key as its actor, as /v1 does for the tool's twin (api/audit.ts).
import { recordAudit } from '../domain/audit.ts';
import type { Tool, ToolContext } from './tools.ts';

const idOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Records a successful call of a tool that changes something; an answer replayed for an idempotency key is not a change. */
export async function auditToolCall(ctx: ToolContext, tool: Tool, args: Record<string, unknown>, result: Record<string, unknown>) {
  const target = tool.audit;
  const name = tool.name;
  if (!target || ctx.replayed) return;
  const { caller } = ctx;
  await recordAudit(ctx.deps.orm.em.fork(), {
    organizationId: caller.organization.id,
    actor: { type: 'api_key', id: caller.key.id, name: `${caller.key.name} (${caller.key.prefix}…)` },
    action: target.action,
    resource: target.resource,
    resourceId: idOf(args.id) ?? idOf(result.id),
    origin: ctx.origin ?? { ip: null, userAgent: null },
    details: { tool: name },
  });
}
