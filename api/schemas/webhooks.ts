// Webhook endpoints and their deliveries (docs/api.md "Webhooks").
import { t } from 'elysia';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/outbox.ts';
import { strict, DateTime, NullableDateTime, NullableString, NullableInteger, oneOf } from './primitives.ts';

const WebhookEvents = t.Union([t.Literal('all'), t.Array(t.String({ enum: [...WEBHOOK_EVENT_TYPES] }), { description: 'Event types.' })], {
  description: 'The event types the endpoint receives, or `"all"`.',
});

export const WebhookEndpointSchema = t.Object(
  {
    id: t.String(),
    url: t.String(),
    description: NullableString('Free text for the owner.'),
    events: WebhookEvents,
    enabled: t.Boolean({
      description:
        'False: nothing is sent (disabled by the owner, or by the service after a `410 Gone` or 5 days of only failed deliveries).',
    }),
    disabledReason: NullableString(
      'Why the service disabled the endpoint (a `410 Gone` answer, or no delivery succeeded for 5 days); null when enabled or disabled by the owner. Enabling it again clears it.',
    ),
    disabledAt: NullableDateTime('When the endpoint was disabled (by the service or the owner); null while enabled.'),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const WebhookEndpointListSchema = t.Object({ data: t.Array(WebhookEndpointSchema, { description: 'Oldest first.' }) }, strict);

export const WebhookSecretResponseSchema = t.Object(
  {
    endpoint: WebhookEndpointSchema,
    secret: t.String({ description: 'The signing secret (`whsec_…`), shown only in this answer.' }),
    previousSecretExpiresAt: t.Optional(DateTime('After a rotation: until when the previous secret signs too.')),
  },
  strict,
);

export const WebhookDeliverySchema = t.Object(
  {
    id: t.String(),
    eventId: t.String({ description: 'The `webhook-id` header of every attempt.' }),
    eventType: t.String(),
    status: oneOf(['pending', 'delivered', 'failed'], '`pending` while attempts remain.'),
    attempts: t.Integer({ description: 'Attempts made so far.' }),
    statusCode: NullableInteger('The last attempt’s HTTP status; null when it got no answer.'),
    durationMs: NullableInteger('How long the last attempt took.'),
    error: NullableString('Why the last attempt failed; null if it succeeded.'),
    lastAttemptAt: NullableDateTime('When the last attempt was made.'),
    nextRetryAt: NullableDateTime('When the next attempt is due; null unless pending after a failed attempt.'),
    createdAt: DateTime(),
  },
  strict,
);

export const WebhookDeliveryListSchema = t.Object(
  {
    data: t.Array(WebhookDeliverySchema, { description: 'Newest first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);

export const WebhookTestSchema = t.Object(
  { eventId: t.String(), deliveryId: t.String({ description: 'Follow it in the delivery log.' }) },
  strict,
);
