// GET /v1/audit-events: the organization's audit log (domain/audit.ts), read only. Its action is
// `audit.read` (domain/access.ts): the `read` scope, and a key made by a member needs a role that
// reads the log (owner, admin), as in the web app.
import { t } from 'elysia';
import { router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { CursorParam, LimitParam, parseTimePage } from '../../http/page-query.ts';
import { AUDIT_ACTOR_TYPES, AUDIT_FILTER_CHARS, listAuditEvents } from '../../domain/audit.ts';
import { authPlugin } from '../auth.ts';
import { AuditEventListSchema, Chars, DateTimeInput } from '../schemas.ts';
import { doc } from '../openapi/operation.ts';
import { DATE_TIME } from '../openapi/fields.ts';

const ListQuery = t.Object({
  action: t.Optional(Chars(AUDIT_FILTER_CHARS, { min: 1 })),
  actorType: t.Optional(t.Union(AUDIT_ACTOR_TYPES.map((a) => t.Literal(a)))),
  actorId: t.Optional(Chars(AUDIT_FILTER_CHARS, { min: 1 })),
  resourceType: t.Optional(Chars(AUDIT_FILTER_CHARS, { min: 1 })),
  resourceId: t.Optional(Chars(AUDIT_FILTER_CHARS, { min: 1 })),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  limit: LimitParam(),
  cursor: CursorParam(),
});

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const AUDIT_OPERATIONS = {
  listAuditEvents: doc({
    operationId: 'listAuditEvents',
    tag: 'Audit',
    action: 'audit.read',
    summary: 'The audit log: who changed what, newest first',
    description:
      'Every change made to the organization through the API, the web app, the MCP server or the admin CLI: who (a member, an API key with the member it belongs to, an operator), what (`action`), which resource, when and from where. Reads and refused requests are not recorded. Events cannot be changed or deleted through the service and are kept at least 90 days. Keyset pagination: pass `nextCursor` as `cursor` for the next page, with the same filters.',
    errors: ['validation_failed'],
    errorNotes: {
      validation_failed:
        'invalid query (`details.fields: [{path, message}]`): a value outside its schema, a limit outside 1–100, or a cursor this API did not return',
    },
    success: { description: 'A page of events.' },
    query: {
      action: 'Only events of this action, e.g. `post.create`.',
      actorType: 'Only events of this kind of actor.',
      actorId: 'Only events of this actor: a user id (`usr_…`) or a key id (`key_…`).',
      resourceType: 'Only events on this kind of resource, e.g. `post`.',
      resourceId: 'Only events on this resource (its id).',
      from: DATE_TIME('Only events at or after this instant.'),
      to: DATE_TIME('Only events before this instant.'),
      limit: { description: 'Page size.', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: opaque, only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),
};

export function auditRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/audit-events',
      async ({ auth, query }) => {
        const { from, to, limit } = parseTimePage(query);
        return listAuditEvents(deps.orm.em.fork(), auth.organization.id, { ...query, from, to, limit });
      },
      { query: ListQuery, response: { 200: AuditEventListSchema }, operation: AUDIT_OPERATIONS.listAuditEvents },
    );
}
