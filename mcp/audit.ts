// The audit of the MCP server (domain/audit.ts): every tool that is not read-only names its action
// here (or null when it changes nothing), and callTool (mcp/server.ts) records each call that
// succeeded, with the key as its actor, as /v1 does for the tool's twin (api/audit.ts).
import { recordAudit, type AuditTarget } from '../domain/audit.ts';
import type { ToolContext } from './tools.ts';

export const MCP_AUDIT: Record<string, AuditTarget | null> = {
  create_post: { action: 'post.create', resource: 'post' },
  update_post: { action: 'post.update', resource: 'post' },
  cancel_post: { action: 'post.delete', resource: 'post' },
  retry_post: { action: 'post.retry', resource: 'post' },
  approve_post: { action: 'post.approve', resource: 'post' },
  reject_post: { action: 'post.reject', resource: 'post' },
  upload_media_from_url: { action: 'media.create', resource: 'media' },
};

const idOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Records a successful call of a tool that changes something; an answer replayed for an idempotency key is not a change. */
export async function auditToolCall(ctx: ToolContext, name: string, args: Record<string, unknown>, result: Record<string, unknown>) {
  const target = MCP_AUDIT[name];
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
