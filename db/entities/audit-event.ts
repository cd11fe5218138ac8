import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

/**
 * Who acted: a member in the web app, an API key (the API, the MCP server), a reviewer holding a
 * preview link, an operator's CLI, or a person answering an invitation through its link without
 * a session (they are no member yet), or the service itself (a feed or series paused because its
 * maker may no longer make its posts).
 */
export const AUDIT_ACTOR_TYPES = ['member', 'api_key', 'reviewer', 'operator', 'invitee', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/**
 * One change made to an organization (domain/audit.ts). Rows are only ever inserted: a trigger of
 * the migration refuses every UPDATE, and a DELETE of a row younger than 90 days.
 */
export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  properties: {
    id: p.string().primary(),
    // No cascade: an organization with recent events cannot be deleted (nothing deletes one).
    organization: () => p.manyToOne(Organization).mapToPk(),
    /** The database's clock, to the millisecond (a cursor carries it exactly). */
    occurredAt: p.datetime().length(3).defaultRaw('now()'),
    actorType: p.enum(AUDIT_ACTOR_TYPES),
    /** The user id, the key id; null where the actor has none (an operator, an invitee). */
    actorId: p.text().nullable(),
    /** The member's e-mail, the key's name and prefix, …: as the actor was known then. */
    actorName: p.text(),
    /** `post.create`, `member.role_change`, … (domain/audit.ts AUDIT_ACTIONS). */
    action: p.text(),
    resourceType: p.text(),
    resourceId: p.text().nullable(),
    ip: p.text().nullable(),
    userAgent: p.text().nullable(),
    details: p.json<Record<string, unknown>>().default('{}'),
  },
  indexes: [
    // The log of an organization, newest first, and its keyset pages.
    {
      name: 'audit_events_organization_occurred_index',
      expression:
        'create index "audit_events_organization_occurred_index" on "audit_events" ("organization_id", "occurred_at" desc, "id" desc)',
    },
  ],
});
export type IAuditEvent = InferEntity<typeof AuditEvent>;
