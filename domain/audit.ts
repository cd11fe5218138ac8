// The audit log: who changed what in an organization, when and from where.
//
// Rules:
// - Every change that succeeds is recorded once, by the interface it came through (the API, the
//   web app, the MCP server, the CLI), each from one table of its operations (api/audit.ts,
//   web/audit.ts, mcp/audit.ts, cli/audit.ts). Reads, refusals and answers replayed for an
//   Idempotency-Key are not changes: nothing is recorded for them.
// - An event names its actor (a member, an API key, a reviewer, an operator, an invitee), its
//   action (AUDIT_ACTIONS), the resource it touched, the request's client address and User-Agent,
//   and the time by the database's clock.
// - An API key's events also name the member the key belongs to (details.memberUserId), read in
//   the same INSERT, so every interface a key uses records it alike.
// - Rows are only inserted: the service has no statement that changes or deletes one, and a
//   trigger (db/migrations/Migration20261127160000_audit_events.ts) refuses an UPDATE, a DELETE
//   of a row younger than 90 days and a TRUNCATE. The service keeps them; an operator may prune
//   rows older than 90 days.
// - The log is read newest first, in keyset pages (an opaque cursor), filtered by action, actor,
//   resource and time.
import { decodeKeyset, encodeKeyset } from '../lib/keyset-cursor.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEvent, type Actor, type AuditActorType, type IAuditEvent } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';
import { newId } from '../lib/ids.ts';

export { AUDIT_ACTOR_TYPES, type AuditActorType } from '../db/entities/index.ts';

/** Every action an event may name. */
export const AUDIT_ACTIONS = [
  'post.create',
  'post.bulk_create',
  'post.update',
  'post.reschedule',
  'post.delete',
  'post.retry',
  'post.approve',
  'post.reject',
  'post.preview_link',
  'post.preview_link_revoke',
  'media.create',
  'media.complete',
  'queue.update',
  'series.create',
  'series.update',
  'series.delete',
  'feed.create',
  'feed.update',
  'feed.delete',
  'feed.poll',
  'feed.pause',
  'comment.update',
  'comment.reply',
  'comment.hide',
  'comment.unhide',
  'reply.delete',
  'reply.approve',
  'reply.reject',
  'tag.create',
  'tag.update',
  'tag.delete',
  'draft.create',
  'draft.update',
  'draft.delete',
  'draft.schedule',
  'series.pause',
  'channel.connect',
  'channel.update',
  'key.create',
  'key.revoke',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.rotate_secret',
  'webhook.test',
  'webhook.redeliver',
  'member.add',
  'member.invite',
  'member.invitation_revoke',
  'member.invitation_accept',
  'member.invitation_decline',
  'member.role_change',
  'member.remove',
  'organization.create',
  'organization.plan_change',
  'settings.update',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an action touches (the resource type of its events). */
export const AUDIT_RESOURCES = [
  'post',
  'media',
  'queue',
  'series',
  'feed',
  'comment',
  'reply',
  'tag',
  'draft',
  'channel',
  'api_key',
  'webhook',
  'member',
  'invitation',
  'organization',
] as const;
export type AuditResource = (typeof AUDIT_RESOURCES)[number];

/** An action and the type of resource it touches: one row of an interface's table. */
export interface AuditTarget {
  action: AuditAction;
  resource: AuditResource;
}

/** The actor of every record: one shape with an approval's (db/entities/post.ts). */
export type AuditActor = Actor;

/** Where the request came from: the client's address and User-Agent, when the interface has them. */
export interface AuditOrigin {
  ip: string | null;
  userAgent: string | null;
}

export interface AuditEventInput extends AuditTarget {
  organizationId: string;
  actor: AuditActor;
  resourceId: string | null;
  origin: AuditOrigin;
  details?: Record<string, unknown>;
}

/** A User-Agent is kept to this many characters. */
const USER_AGENT_CHARS = 512;
// Postgres refuses NUL in text and jsonb, and an unpaired surrogate in jsonb; a header or a
// value a handler notes could hold either.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const clean = (s: string) => s.replace(UNSTORABLE, '\ufffd');
const storable = (s: string | null, max = 1024) => (s === null ? null : clean(s.slice(0, max)));

/** Records one event: a single INSERT (with the key's member looked up in it for an API key). */
export async function recordAudit(em: EntityManager, event: AuditEventInput): Promise<void> {
  const { actor, origin } = event;
  await sql(
    em,
    `insert into audit_events
       (id, organization_id, actor_type, actor_id, actor_name, action, resource_type, resource_id, ip, user_agent, details)
     select ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb || coalesce(
       (select jsonb_build_object('memberUserId', k.created_by_user_id) from api_keys k
         where ?::text = 'api_key' and k.id = ? and k.created_by_user_id is not null), '{}'::jsonb)`,
    [
      newId('aud'),
      event.organizationId,
      actor.type,
      actor.id,
      storable(actor.name),
      event.action,
      event.resource,
      event.resourceId,
      storable(origin.ip, 64),
      storable(origin.userAgent, USER_AGENT_CHARS),
      JSON.stringify(event.details ?? {}, (_, v) => (typeof v === 'string' ? clean(v) : v)),
      actor.type,
      actor.id,
    ],
  );
}

/** An event as GET /v1/audit-events and the web page show it. */
export interface AuditEventView {
  id: string;
  occurredAt: string;
  actor: AuditActor;
  action: string;
  resource: { type: string; id: string | null };
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

export const auditEventView = (e: IAuditEvent): AuditEventView => ({
  id: e.id,
  occurredAt: e.occurredAt.toISOString(),
  actor: { type: e.actorType, id: e.actorId ?? null, name: e.actorName },
  action: e.action,
  resource: { type: e.resourceType, id: e.resourceId ?? null },
  ip: e.ip ?? null,
  userAgent: e.userAgent ?? null,
  details: e.details,
});

/** A filter's text (an action, an actor's id, a resource's type or id), in characters: GET /v1/audit-events and the web page read it. */
export const AUDIT_FILTER_CHARS = 100;

export interface AuditFilters {
  limit: number;
  cursor?: string;
  action?: string;
  actorType?: AuditActorType;
  actorId?: string;
  resourceType?: string;
  resourceId?: string;
  /** Events at or after this instant. */
  from?: Date;
  /** Events before this instant. */
  to?: Date;
}

/** The organization's events, newest first (by time, then id), one keyset page. */
export async function listAuditEvents(
  em: EntityManager,
  organizationId: string,
  f: AuditFilters,
): Promise<{ data: AuditEventView[]; nextCursor: string | null }> {
  const keyset = f.cursor ? decodeKeyset(f.cursor, /^\w{1,64}$/) : null;
  const cursor = keyset ? { occurredAt: keyset.at, id: keyset.id } : null;
  const occurredAt = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lt: f.to } : {}) };
  const rows = await em.find(
    AuditEvent,
    {
      organization: organizationId,
      ...(f.action !== undefined ? { action: f.action } : {}),
      ...(f.actorType !== undefined ? { actorType: f.actorType } : {}),
      ...(f.actorId !== undefined ? { actorId: f.actorId } : {}),
      ...(f.resourceType !== undefined ? { resourceType: f.resourceType } : {}),
      ...(f.resourceId !== undefined ? { resourceId: f.resourceId } : {}),
      ...(f.from || f.to ? { occurredAt } : {}),
      ...(cursor ? { $or: [{ occurredAt: { $lt: cursor.occurredAt } }, { occurredAt: cursor.occurredAt, id: { $lt: cursor.id } }] } : {}),
    },
    { orderBy: { occurredAt: 'desc', id: 'desc' }, limit: f.limit + 1 },
  );
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return {
    data: page.map(auditEventView),
    nextCursor: rows.length > f.limit && last ? encodeKeyset(last.occurredAt, last.id) : null,
  };
}
