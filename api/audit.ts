// The audit of /v1 (domain/audit.ts): every operation that is not a GET names its audit action in
// its own entry (`audit`, in its route file's table), or null when it changes nothing of the
// organization. One hook on the /v1 group records each successful change (2xx, not an answer
// replayed for an Idempotency-Key, nor one its entry's `changed` finds changed nothing): the actor
// is the key, the resource the path's id or the answer's.
import { defaultLog, type AppDeps } from '../http/deps.ts';
import { requestOrigin, type SocketServer } from '../http/origin.ts';
import { recordAudit } from '../domain/audit.ts';
import { redact, sinkRedacts, type LogEntry } from '../lib/log.ts';
import type { Auth } from './auth.ts';
import type { RouteInfo } from './openapi/document.ts';
import { operationDoc, type OperationDoc } from './openapi/operation.ts';

/** The posts a batch created (POST /v1/posts/bulk's answer): one event for the batch, naming every post. */
export const bulkDetails = (answer: unknown) => {
  const a = answer as { mode?: string; results?: { status: number; post?: { id: string }; draft?: { id: string } }[] } | null;
  const results = a?.results ?? [];
  const draftIds = results.flatMap((r) => (r.draft ? [r.draft.id] : []));
  return {
    mode: a?.mode ?? null,
    postIds: results.flatMap((r) => (r.post ? [r.post.id] : [])),
    // An import that asks for drafts.
    ...(draftIds.length ? { draftIds } : {}),
  };
};

/** Whether a batch created a post or a draft: one whose every row was refused (mode `each`, 200) changed nothing and is no event. */
export const bulkCreatedAny = (answer: unknown) => {
  const d = bulkDetails(answer);
  return d.postIds.length > 0 || (d.draftIds?.length ?? 0) > 0;
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the hook reads of Elysia's context after a handler answered. */
interface AfterHandle {
  request: Request;
  route: string;
  params?: Record<string, string>;
  set: { status?: unknown; headers: Record<string, unknown> };
  responseValue?: unknown;
  response?: unknown;
  auth?: Auth;
  server?: SocketServer;
}

const idOf = (value: unknown): string | null => {
  const id = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : null;
};

/**
 * The /v1 group's after-handle hook. `routes`: the app's route table, whose `detail` gives each
 * route's operationId (looked up once per table).
 */
export function auditHook(deps: AppDeps, routes: () => readonly RouteInfo[]) {
  const sink = deps.log ?? defaultLog;
  const log = (entry: LogEntry) => sink(sinkRedacts(sink) ? entry : redact(entry));
  let known: { count: number; ops: Map<string, OperationDoc> } | undefined;
  const operation = (method: string, route: string): OperationDoc | undefined => {
    const table = routes();
    if (known?.count !== table.length) {
      const ops = new Map<string, OperationDoc>();
      for (const r of table) {
        const op = operationDoc(r.hooks?.detail);
        if (op) ops.set(`${r.method.toUpperCase()} ${r.path}`, op);
      }
      known = { count: table.length, ops };
    }
    return known.ops.get(`${method} ${route}`);
  };

  return async (ctx: AfterHandle): Promise<void> => {
    const { request, set, auth } = ctx;
    if (READS.has(request.method) || !auth) return;
    const value = ctx.responseValue ?? ctx.response;
    const status = value instanceof Response ? value.status : typeof set.status === 'number' ? set.status : 200;
    if (status < 200 || status >= 300 || set.headers['idempotent-replayed'] === 'true') return;
    const op = operation(request.method, ctx.route);
    const id = op?.operationId;
    const target = op?.audit;
    if (target === null) return;
    const { id: pathId, ...otherParams } = ctx.params ?? {};
    const body = value instanceof Response ? null : value;
    if (target?.changed && body != null && !target.changed(body)) return;
    try {
      if (!target) throw new Error(`no audit action for ${request.method} ${ctx.route} (${id ?? 'no operationId'}): its entry's audit`);
      await recordAudit(deps.orm.em.fork(), {
        organizationId: auth.organization.id,
        actor: { type: 'api_key', id: auth.key.id, name: `${auth.key.name} (${auth.key.prefix}…)` },
        action: target.action,
        resource: target.resource,
        resourceId: pathId ?? idOf(target.from ? (body as Record<string, unknown> | null)?.[target.from] : body),
        origin: requestOrigin(request, ctx.server, deps.trustProxyHops),
        details: { operationId: id, requestId: set.headers['x-request-id'] ?? null, ...otherParams, ...target.detailsOf?.(body) },
      });
    } catch (err) {
      // The change itself is committed: its answer stands, and the missing record is logged.
      log({
        level: 'error',
        msg: 'audit event not recorded',
        requestId: set.headers['x-request-id'] ?? null,
        route: ctx.route,
        error: err instanceof Error ? err : String(err),
      });
    }
  };
}
