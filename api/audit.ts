// The audit of /v1 (domain/audit.ts): every operation that is not a GET names its action here, by
// its OpenAPI operationId, or null when it changes nothing of the organization. One hook on the
// /v1 group records each successful change (2xx, not an answer replayed for an Idempotency-Key):
// the actor is the key, the resource the path's id or the answer's.
import { defaultLog, type AppDeps } from '../http/deps.ts';
import { requestOrigin, type SocketServer } from '../http/origin.ts';
import { recordAudit, type AuditTarget } from '../domain/audit.ts';
import { redact, sinkRedacts, type LogEntry } from '../lib/log.ts';
import type { Auth } from './auth.ts';
import type { RouteInfo } from './openapi/document.ts';
import { operationDoc } from './openapi/operation.ts';

/**
 * `from`: the field of the answer that holds the new resource, when the answer is not the resource
 * itself. `detailsOf`: what the answer adds to the event's details (a batch's post ids).
 */
type ApiAuditTarget = AuditTarget & { from?: string; detailsOf?: (answer: unknown) => Record<string, unknown> };

/** The posts a batch created (POST /v1/posts/bulk's answer). */
const bulkDetails = (answer: unknown) => {
  const a = answer as { mode?: string; results?: { status: number; post?: { id: string } }[] } | null;
  return { mode: a?.mode ?? null, postIds: (a?.results ?? []).flatMap((r) => (r.post ? [r.post.id] : [])) };
};

export const API_AUDIT: Record<string, ApiAuditTarget | null> = {
  createPost: { action: 'post.create', resource: 'post' },
  // One event for the batch, naming every post it created.
  createPostsInBulk: { action: 'post.bulk_create', resource: 'post', detailsOf: bulkDetails },
  importPosts: { action: 'post.bulk_create', resource: 'post', detailsOf: bulkDetails },
  // Checks a body: nothing is created.
  validatePost: null,
  updatePost: { action: 'post.update', resource: 'post' },
  deletePost: { action: 'post.delete', resource: 'post' },
  retryPost: { action: 'post.retry', resource: 'post' },
  approvePost: { action: 'post.approve', resource: 'post' },
  rejectPost: { action: 'post.reject', resource: 'post' },
  // Reads the platforms' figures anew: the post is not changed.
  refreshPostAnalytics: null,
  createUpload: { action: 'media.create', resource: 'media', from: 'media' },
  completeUpload: { action: 'media.complete', resource: 'media' },
  setQueue: { action: 'queue.update', resource: 'queue' },
  createSeries: { action: 'series.create', resource: 'series' },
  updateSeries: { action: 'series.update', resource: 'series' },
  deleteSeries: { action: 'series.delete', resource: 'series' },
  createFeed: { action: 'feed.create', resource: 'feed' },
  updateFeed: { action: 'feed.update', resource: 'feed' },
  deleteFeed: { action: 'feed.delete', resource: 'feed' },
  pollFeed: { action: 'feed.poll', resource: 'feed' },
  createWebhook: { action: 'webhook.create', resource: 'webhook', from: 'endpoint' },
  updateWebhook: { action: 'webhook.update', resource: 'webhook' },
  deleteWebhook: { action: 'webhook.delete', resource: 'webhook' },
  rotateWebhookSecret: { action: 'webhook.rotate_secret', resource: 'webhook' },
  testWebhook: { action: 'webhook.test', resource: 'webhook' },
  redeliverWebhook: { action: 'webhook.redeliver', resource: 'webhook' },
  // Drafts and alt text: nothing is created or changed.
  generatePost: null,
  generateAltText: null,
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
  let known: { count: number; ids: Map<string, string> } | undefined;
  const operationId = (method: string, route: string): string | undefined => {
    const table = routes();
    if (known?.count !== table.length) {
      const ids = new Map<string, string>();
      for (const r of table) {
        const id = operationDoc(r.hooks?.detail)?.operationId;
        if (id) ids.set(`${r.method.toUpperCase()} ${r.path}`, id);
      }
      known = { count: table.length, ids };
    }
    return known.ids.get(`${method} ${route}`);
  };

  return async (ctx: AfterHandle): Promise<void> => {
    const { request, set, auth } = ctx;
    if (READS.has(request.method) || !auth) return;
    const value = ctx.responseValue ?? ctx.response;
    const status = value instanceof Response ? value.status : typeof set.status === 'number' ? set.status : 200;
    if (status < 200 || status >= 300 || set.headers['idempotent-replayed'] === 'true') return;
    const id = operationId(request.method, ctx.route);
    const target = id === undefined ? undefined : API_AUDIT[id];
    if (target === null) return;
    const { id: pathId, ...otherParams } = ctx.params ?? {};
    const body = value instanceof Response ? null : value;
    try {
      if (!target) throw new Error(`no audit action for ${request.method} ${ctx.route} (${id ?? 'no operationId'}): api/audit.ts`);
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
