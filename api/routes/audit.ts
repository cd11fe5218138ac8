// GET /v1/audit-events: the organization's audit log (domain/audit.ts), read only. Its action is
// `audit.read` (domain/access.ts): the `read` scope, and a key made by a member needs a role that
// reads the log (owner, admin), as in the web app.
import { t } from 'elysia';
import { router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { CursorParam, LimitParam, parseTimePage } from '../../http/page-query.ts';
import { AUDIT_ACTOR_TYPES, listAuditEvents } from '../../domain/audit.ts';
import { authPlugin } from '../auth.ts';
import { AuditEventListSchema, Chars, DateTimeInput } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

const ListQuery = t.Object({
  action: t.Optional(Chars(100, { min: 1 })),
  actorType: t.Optional(t.Union(AUDIT_ACTOR_TYPES.map((a) => t.Literal(a)))),
  actorId: t.Optional(Chars(100, { min: 1 })),
  resourceType: t.Optional(Chars(100, { min: 1 })),
  resourceId: t.Optional(Chars(100, { min: 1 })),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  limit: LimitParam(),
  cursor: CursorParam(),
});

export function auditRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/audit-events',
      async ({ auth, query }) => {
        const { from, to, limit } = parseTimePage(query);
        return listAuditEvents(deps.orm.em.fork(), auth.organization.id, { ...query, from, to, limit });
      },
      { query: ListQuery, response: { 200: AuditEventListSchema }, operation: OPERATIONS.listAuditEvents },
    );
}
