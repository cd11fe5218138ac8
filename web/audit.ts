// The audit of the web app (domain/audit.ts): every route that is not a GET names its action here
// (or null when it changes nothing of an organization), and the route wrappers of web/context.ts
// record each change that succeeded (an answer below 400) with the signed-in member as its actor.
// The resource is the path's id (`param`), the id in the redirect's Location (`location`), or what
// the handler names with auditNote — as must a public route, which has no member to name.
import { recordAudit, type AuditActor, type AuditTarget } from '../domain/audit.ts';
import { requestOrigin, type SocketServer } from '../http/origin.ts';
import type { SignedIn } from '../services/users.ts';
import type { RequestContext, Web } from './context.ts';

type WebAuditTarget = AuditTarget & {
  /** The path parameter holding the resource's id. */
  param?: string;
  /** Finds the new resource's id in the redirect's Location. */
  location?: RegExp;
  /** Fixed facts of the route (e.g. `enabled: false` for Disable). */
  details?: Record<string, unknown>;
};

/** Keyed `METHOD /route/pattern`; test/web-roles.test.ts fails when a route is missing. */
export const WEB_AUDIT: Record<string, WebAuditTarget | null> = {
  // A session's own business, not an organization's.
  'POST /sign-in': null,
  'POST /sign-out': null,
  'POST /session/organization': null,
  // A person's display zone, not the organization's.
  'POST /settings/time-zone': null,
  'PUT /web/api/me/time-zone': null,
  // Counts characters: nothing changes.
  'POST /web/api/text-lengths': null,
  // Draws the composer's preview from its form: nothing is kept.
  'POST /web/api/composer/preview': null,
  // Opens the platform's authorization page; the channel is connected (and recorded) on the way back.
  'POST /channels/oauth/:platform/start': null,
  'POST /posts': { action: 'post.create', resource: 'post', location: /^\/posts\/(post_\w+)/ },
  'POST /posts/:id/edit': { action: 'post.update', resource: 'post', param: 'id' },
  // Reads a CSV file and checks its rows as POST /v1/posts/validate does: nothing is created.
  'POST /posts/import/preview': null,
  // One event for the batch, its post ids in the details (auditNote), as the API's import.
  'POST /posts/import': { action: 'post.bulk_create', resource: 'post' },
  'PATCH /web/api/posts/:id': { action: 'post.reschedule', resource: 'post', param: 'id' },
  // Drafts (web/drafts.ts), as the API's /v1/drafts records them; a schedule names the post it made (its draft in the details).
  'POST /drafts': { action: 'draft.create', resource: 'draft', location: /^\/drafts\/(drf_\w+)/ },
  'POST /drafts/:id': { action: 'draft.update', resource: 'draft', param: 'id' },
  'POST /drafts/:id/intended': { action: 'draft.update', resource: 'draft', param: 'id' },
  'PATCH /web/api/drafts/:id': { action: 'draft.update', resource: 'draft', param: 'id' },
  'POST /drafts/:id/schedule': { action: 'draft.schedule', resource: 'post', location: /^\/posts\/(post_\w+)/ },
  'POST /drafts/:id/delete': { action: 'draft.delete', resource: 'draft', param: 'id' },
  'POST /posts/:id/delete': { action: 'post.delete', resource: 'post', param: 'id' },
  'POST /posts/:id/retry': { action: 'post.retry', resource: 'post', param: 'id' },
  'POST /posts/:id/approve': { action: 'post.approve', resource: 'post', param: 'id' },
  'POST /posts/:id/reject': { action: 'post.reject', resource: 'post', param: 'id' },
  // Hands out a signed link that shows the post (and may decide on it) without an account.
  'POST /posts/:id/preview-link': { action: 'post.preview_link', resource: 'post', param: 'id' },
  'POST /posts/:id/preview-links/:linkId/revoke': { action: 'post.preview_link_revoke', resource: 'post', param: 'id' },
  // A reviewer without an account, known by the name they give: the handler names them (auditNote).
  'POST /preview/:token/approve': { action: 'post.approve', resource: 'post' },
  'POST /preview/:token/reject': { action: 'post.reject', resource: 'post' },
  // The Inbox (web/inbox.ts), as the API's comment routes record them.
  'POST /inbox/comments/:id/reply': { action: 'comment.reply', resource: 'reply' },
  'POST /inbox/comments/:id/status': { action: 'comment.update', resource: 'comment', param: 'id' },
  'POST /inbox/comments/:id/assign': { action: 'comment.update', resource: 'comment', param: 'id' },
  'POST /inbox/comments/:id/hide': { action: 'comment.hide', resource: 'comment', param: 'id' },
  'POST /inbox/comments/:id/unhide': { action: 'comment.unhide', resource: 'comment', param: 'id' },
  'POST /inbox/replies/:id/approve': { action: 'reply.approve', resource: 'reply', param: 'id' },
  'POST /inbox/replies/:id/reject': { action: 'reply.reject', resource: 'reply', param: 'id' },
  'POST /inbox/replies/:id/delete': { action: 'reply.delete', resource: 'reply', param: 'id' },
  'POST /settings/approval': { action: 'settings.update', resource: 'organization' },
  'POST /settings/links': { action: 'settings.update', resource: 'organization' },
  // Tags (web/tags.ts), as the API's /v1/tags records them; a post's tags set on its page as PATCH /v1/posts/{id} records an edit.
  'POST /settings/tags': { action: 'tag.create', resource: 'tag', location: /#(tag_\w+)$/ },
  'POST /settings/tags/:id': { action: 'tag.update', resource: 'tag', param: 'id' },
  'POST /settings/tags/:id/delete': { action: 'tag.delete', resource: 'tag', param: 'id' },
  'POST /posts/:id/tags': { action: 'post.update', resource: 'post', param: 'id' },
  'POST /web/api/media/uploads': { action: 'media.create', resource: 'media' },
  'POST /web/api/media/:id/complete': { action: 'media.complete', resource: 'media', param: 'id' },
  'POST /channels/connect/:platform': { action: 'channel.connect', resource: 'channel' },
  // A GET because the platform sends the browser back with one; recorded only once a channel is saved.
  'GET /channels/oauth/:platform/callback': { action: 'channel.connect', resource: 'channel' },
  'POST /channels/oauth/finish/:grant': { action: 'channel.connect', resource: 'channel' },
  'POST /channels/:id/queue': { action: 'queue.update', resource: 'queue', param: 'id' },
  'POST /feeds': { action: 'feed.create', resource: 'feed', location: /^\/feeds\/(feed_\w+)/ },
  'POST /feeds/:id': { action: 'feed.update', resource: 'feed', param: 'id' },
  'POST /feeds/:id/poll': { action: 'feed.poll', resource: 'feed', param: 'id' },
  'POST /feeds/:id/delete': { action: 'feed.delete', resource: 'feed', param: 'id' },
  'POST /settings/api-keys': { action: 'key.create', resource: 'api_key' },
  'POST /settings/api-keys/:id/revoke': { action: 'key.revoke', resource: 'api_key', param: 'id' },
  'POST /settings/members/invitations': { action: 'member.invite', resource: 'invitation' },
  'POST /settings/members/invitations/:id/revoke': { action: 'member.invitation_revoke', resource: 'invitation', param: 'id' },
  'POST /settings/members/:userId/role': { action: 'member.role_change', resource: 'member', param: 'userId' },
  'POST /settings/members/:userId/remove': { action: 'member.remove', resource: 'member', param: 'userId' },
  'POST /invitations/:token/accept': { action: 'member.invitation_accept', resource: 'invitation' },
  'POST /invitations/:token/register': { action: 'member.invitation_accept', resource: 'invitation' },
  'POST /invitations/:token/decline': { action: 'member.invitation_decline', resource: 'invitation' },
  'POST /settings/webhooks': { action: 'webhook.create', resource: 'webhook', location: /^\/settings\/webhooks\/(wh_\w+)/ },
  'POST /settings/webhooks/:id/disable': { action: 'webhook.update', resource: 'webhook', param: 'id', details: { enabled: false } },
  'POST /settings/webhooks/:id/enable': { action: 'webhook.update', resource: 'webhook', param: 'id', details: { enabled: true } },
  'POST /settings/webhooks/:id/test': { action: 'webhook.test', resource: 'webhook', param: 'id' },
  'POST /settings/webhooks/:id/rotate-secret': { action: 'webhook.rotate_secret', resource: 'webhook', param: 'id' },
  'POST /settings/webhooks/:id/delete': { action: 'webhook.delete', resource: 'webhook', param: 'id' },
  'POST /settings/webhooks/:id/deliveries/:deliveryId/redeliver': { action: 'webhook.redeliver', resource: 'webhook', param: 'id' },
};

/** What a handler adds to its request's event: the resource it made, or who acted on a public page. */
export interface AuditNote {
  resourceId?: string;
  /** Another organization than the session's (an invitation accepted joins its organization). */
  organizationId?: string;
  /** The actor of a public route (no session); a signed-in member otherwise. */
  actor?: AuditActor;
  details?: Record<string, unknown>;
  /** The request changed nothing after all (an import whose every row was refused): no event. */
  unchanged?: true;
}

const notes = new WeakMap<Request, AuditNote>();

/** Called by a handler once its change is made. A GET route is recorded only when its handler calls it. */
export function auditNote(ctx: { request: Request }, note: AuditNote): void {
  notes.set(ctx.request, { ...notes.get(ctx.request), ...note });
}

export const memberActor = (user: { id: string; email: string }): AuditActor => ({ type: 'member', id: user.id, name: user.email });

/** What the wrappers know of the route: its pattern and the socket (Elysia's `route`, `server`). */
export interface RouteOrigin {
  route?: string;
  server?: SocketServer;
}

/** Records the request's change, if it made one (rules at the top); a failure to record is logged, the answer stands. */
export async function auditWebChange(
  web: Web,
  input: RouteOrigin,
  ctx: RequestContext,
  signedIn: SignedIn | null,
  res: Response,
): Promise<void> {
  const { request } = ctx;
  const note = notes.get(request);
  if ((request.method === 'GET' && !note) || note?.unchanged || res.status >= 400) return;
  const key = `${request.method} ${input.route ?? ctx.url.pathname}`;
  const target = WEB_AUDIT[key];
  if (target === null) return;
  try {
    if (!target) throw new Error(`no audit action for ${key}: web/audit.ts`);
    const actor = note?.actor ?? (signedIn ? memberActor(signedIn.user) : null);
    const organizationId = note?.organizationId ?? signedIn?.organization.id;
    // A public route whose handler changed nothing (a form shown again) names nobody.
    if (!actor || !organizationId) return;
    const location = res.headers.get('location') ?? '';
    const resourceId =
      note?.resourceId ??
      (target.param ? ctx.params[target.param] : undefined) ??
      (target.location ? target.location.exec(location)?.[1] : undefined) ??
      (target.resource === 'organization' ? organizationId : null);
    await recordAudit(web.deps.orm.em.fork(), {
      organizationId,
      actor,
      action: target.action,
      resource: target.resource,
      resourceId,
      origin: requestOrigin(request, input.server, web.options().trustProxyHops ?? 0),
      details: { ...target.details, ...(signedIn && !note?.actor ? { role: signedIn.role } : {}), ...note?.details },
    });
  } catch (err) {
    web.log({
      level: 'error',
      msg: 'audit event not recorded',
      method: request.method,
      route: input.route ?? null,
      error: err instanceof Error ? { name: err.name, message: err.message } : String(err),
    });
  }
}
