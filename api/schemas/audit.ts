// The audit log (GET /v1/audit-events).
import { t } from 'elysia';
import { ActorSchema } from './posts.ts';
import { strict, DateTime, NullableString } from './primitives.ts';

/** GET /v1/audit-events (domain/audit.ts): one change made to the organization. */
export const AuditEventSchema = t.Object(
  {
    id: t.String({ description: 'Event id (`aud_…`), time-ordered.' }),
    occurredAt: DateTime('When it happened, by the service’s database clock.'),
    actor: ActorSchema,
    action: t.String({
      description: 'What was done, `resource.verb`: e.g. `post.create`, `member.role_change` (docs/decisions.md “Audit log”).',
    }),
    resource: t.Object(
      {
        type: t.String({ description: 'e.g. `post`, `webhook`, `member`, `api_key`.' }),
        id: NullableString('The resource’s id; null where the change has none.'),
      },
      strict,
    ),
    ip: NullableString('The client’s address, where the interface knows it.'),
    userAgent: NullableString('The client’s User-Agent header.'),
    details: t.Record(t.String(), t.Unknown(), {
      description: 'More about the change: e.g. the key’s member (`memberUserId`), the member’s role, the request id.',
    }),
  },
  strict,
);

export const AuditEventListSchema = t.Object(
  {
    data: t.Array(AuditEventSchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);
