import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { parseLimit } from '../../http/page-query.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
  webhookView,
} from '../../services/webhooks.ts';
import { authPlugin } from '../auth.ts';
import {
  Chars,
  HttpUrl,
  PathId,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookSecretResponseSchema,
  WebhookTestSchema,
} from '../schemas.ts';
import { doc } from '../openapi/operation.ts';

const EventType = t.Union(WEBHOOK_EVENT_TYPES.map((type) => t.Literal(type)));
const Events = t.Union([t.Literal('all'), t.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true })]);
// The schema says which URLs parse; where the host points (it must resolve, and not to a refused
// address) is the service's check, stated in the field's description.
const Url = HttpUrl(WEBHOOK_LIMITS.urlChars);
const Description = Chars(WEBHOOK_LIMITS.descriptionChars);

const CreateBody = t.Object({ url: Url, events: Events, description: t.Optional(Description) }, { additionalProperties: false });
const PatchBody = t.Object(
  {
    url: t.Optional(Url),
    events: t.Optional(Events),
    enabled: t.Optional(t.Boolean()),
    description: t.Optional(t.Union([Description, t.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
const IdParams = t.Object({ id: PathId() });
const DeliveryParams = t.Object({ id: PathId(), deliveryId: PathId() });
const DeliveryQuery = t.Object({
  limit: t.Optional(t.String({ maxLength: 16 })),
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]{0,512}$', error: 'is not a cursor returned by this API' })),
});

/** The page size, or the 422 of a limit outside 1–100. */
function pageLimit(value: string | undefined): number {
  const fields: FieldError[] = [];
  const limit = parseLimit(value, fields);
  if (fields.length) throw errors.validation(fields);
  return limit;
}

const WEBHOOK_ID = 'Webhook endpoint id (`wh_…`).';
const WEBHOOK_URL = `Where events are POSTed: an http(s) URL (https advised), at most ${WEBHOOK_LIMITS.urlChars} characters, without user name or password (the pattern). A host label beginning \`xn--\` must be valid Punycode. Its host must resolve, and not to a private, loopback or link-local address (unless the operator allows private addresses); redirects are not followed.`;

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const WEBHOOK_OPERATIONS = {
  createWebhook: doc({
    operationId: 'createWebhook',
    audit: { action: 'webhook.create', resource: 'webhook', from: 'endpoint' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Add a webhook endpoint',
    description:
      'Events are POSTed to `url` signed as the Standard Webhooks specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature`); the signing `secret` is in this answer only. Retried for about three days; at-least-once, in no guaranteed order.',
    errors: ['limit_reached', 'validation_failed'],
    errorNotes: {
      limit_reached: 'the plan’s number of webhook endpoints is reached (PRO 5, TEAM 20)',
      validation_failed:
        'invalid body (`details.fields`), or a `url` that is not http(s) or whose host is a refused (private, loopback, link-local) address',
    },
    success: { status: 201, description: 'The endpoint and its signing secret.', location: true },
    body: {
      name: 'CreateWebhookRequest',
      fields: {
        url: WEBHOOK_URL,
        events: 'The event types to receive, or `"all"`.',
        description: 'Free text for you.',
      },
    },
  }),

  listWebhooks: doc({
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'List the webhook endpoints',
    description: 'Oldest first. Secrets are never shown.',
    success: { description: 'The organization’s endpoints.' },
  }),

  getWebhook: doc({
    operationId: 'getWebhook',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'A webhook endpoint',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint, with why the service disabled it if it did.' },
    params: { id: WEBHOOK_ID },
  }),

  updateWebhook: doc({
    operationId: 'updateWebhook',
    audit: { action: 'webhook.update', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Change a webhook endpoint',
    description: 'Give at least one field. Enabling an endpoint the service disabled clears `disabledReason` and `disabledAt`.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint.' },
    params: { id: WEBHOOK_ID },
    body: {
      name: 'UpdateWebhookRequest',
      fields: {
        url: WEBHOOK_URL,
        events: 'The event types to receive, or `"all"`.',
        enabled: 'False: nothing more is sent (pending deliveries end `failed`).',
        description: 'Free text for you; null clears it.',
      },
    },
  }),

  deleteWebhook: doc({
    operationId: 'deleteWebhook',
    audit: { action: 'webhook.delete', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Delete a webhook endpoint',
    description: 'With its delivery log. Deliveries still waiting for a retry are not sent.',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted; no body.' },
    params: { id: WEBHOOK_ID },
  }),

  rotateWebhookSecret: doc({
    operationId: 'rotateWebhookSecret',
    audit: { action: 'webhook.rotate_secret', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Rotate the signing secret',
    description:
      'A new secret, shown only in this answer. For 24 hours every delivery carries two signatures (space-separated in `webhook-signature`), one per secret, so receivers can switch without missing an event.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The endpoint, the new secret and when the previous one stops signing.' },
    params: { id: WEBHOOK_ID },
  }),

  testWebhook: doc({
    operationId: 'testWebhook',
    audit: { action: 'webhook.test', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Send a test event',
    description: 'Sends `webhook.test` to this endpoint (whatever its event list), with the usual retries. Follow it in the delivery log.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the endpoint is disabled' },
    success: { status: 202, description: 'The event and its delivery, on their way.' },
    temporal: true,
    params: { id: WEBHOOK_ID },
  }),

  listWebhookDeliveries: doc({
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    action: 'webhooks.read',
    summary: 'The delivery log of an endpoint',
    description:
      'Newest first: each delivery’s event, status, attempts, and its last attempt’s status code, duration and error, and the next retry. Keyset pagination: pass `nextCursor` as `cursor`.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: { validation_failed: 'invalid query (`details.fields`): a limit outside 1–100, or a cursor this API did not return' },
    success: { description: 'A page of deliveries.' },
    params: { id: WEBHOOK_ID },
    query: {
      limit: { description: 'Page size (default 20).', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),

  redeliverWebhook: doc({
    operationId: 'redeliverWebhook',
    audit: { action: 'webhook.redeliver', resource: 'webhook' },
    tag: 'Webhooks',
    action: 'webhooks.manage',
    summary: 'Send a delivery again',
    description: 'For a `delivered` or `failed` delivery: the same event (same `webhook-id`) with a fresh retry schedule.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the delivery is still `pending`, or the endpoint is disabled' },
    success: { status: 202, description: 'The delivery, `pending` again.' },
    temporal: true,
    params: { id: WEBHOOK_ID, deliveryId: 'Delivery id (`whd_…`), from the delivery log.' },
  }),
};

export function webhookRoutes(deps: AppDeps) {
  const need = () => {
    if (!deps.webhooks) throw new Error('CREDENTIALS_KEY must be configured for webhooks');
    return deps.webhooks;
  };
  return router()
    .use(authPlugin(deps))
    .post(
      '/webhooks',
      async ({ auth, body, set }) => {
        const { endpoint, secret } = await createWebhook(deps.orm.em.fork(), need(), auth.organization, body, auth.now);
        set.status = 201;
        set.headers.location = `/v1/webhooks/${endpoint.id}`;
        return { endpoint: webhookView(endpoint), secret };
      },
      {
        body: CreateBody,
        transform: refuseUnstorableBody,
        response: { 201: WebhookSecretResponseSchema },
        operation: WEBHOOK_OPERATIONS.createWebhook,
      },
    )
    .get('/webhooks', async ({ auth }) => ({ data: (await listWebhooks(deps.orm.em.fork(), auth.organization.id)).map(webhookView) }), {
      response: { 200: WebhookEndpointListSchema },
      operation: WEBHOOK_OPERATIONS.listWebhooks,
    })
    .get('/webhooks/:id', async ({ auth, params }) => webhookView(await getWebhook(deps.orm.em.fork(), auth.organization.id, params.id)), {
      params: IdParams,
      response: { 200: WebhookEndpointSchema },
      operation: WEBHOOK_OPERATIONS.getWebhook,
    })
    .patch(
      '/webhooks/:id',
      async ({ auth, params, body }) =>
        webhookView(await updateWebhook(deps.orm.em.fork(), need(), auth.organization.id, params.id, body, auth.now)),
      {
        params: IdParams,
        body: PatchBody,
        transform: refuseUnstorableBody,
        response: { 200: WebhookEndpointSchema },
        operation: WEBHOOK_OPERATIONS.updateWebhook,
      },
    )
    .delete(
      '/webhooks/:id',
      async ({ auth, params, set }) => {
        await deleteWebhook(deps.orm.em.fork(), auth.organization.id, params.id);
        set.status = 204;
      },
      { params: IdParams, operation: WEBHOOK_OPERATIONS.deleteWebhook },
    )
    .post(
      '/webhooks/:id/rotate-secret',
      async ({ auth, params }) => {
        const r = await rotateWebhookSecret(deps.orm.em.fork(), need(), auth.organization.id, params.id, auth.now);
        return { endpoint: webhookView(r.endpoint), secret: r.secret, previousSecretExpiresAt: r.previousSecretExpiresAt };
      },
      {
        params: IdParams,
        response: { 200: WebhookSecretResponseSchema },
        operation: WEBHOOK_OPERATIONS.rotateWebhookSecret,
      },
    )
    .post(
      '/webhooks/:id/test',
      async ({ auth, params, set }) => {
        set.status = 202;
        return sendTestEvent(deps.orm, deps.temporal, auth.organization.id, params.id, auth.now);
      },
      {
        params: IdParams,
        response: { 202: WebhookTestSchema },
        operation: WEBHOOK_OPERATIONS.testWebhook,
      },
    )
    .get(
      '/webhooks/:id/deliveries',
      async ({ auth, params, query }) =>
        listDeliveries(deps.orm.em.fork(), auth.organization.id, params.id, { limit: pageLimit(query.limit), cursor: query.cursor }),
      {
        params: IdParams,
        query: DeliveryQuery,
        response: { 200: WebhookDeliveryListSchema },
        operation: WEBHOOK_OPERATIONS.listWebhookDeliveries,
      },
    )
    .post(
      '/webhooks/:id/deliveries/:deliveryId/redeliver',
      async ({ auth, params, set }) => {
        set.status = 202;
        return redeliver(deps.orm, deps.temporal, auth.organization.id, params.id, params.deliveryId);
      },
      {
        params: DeliveryParams,
        response: { 202: WebhookDeliverySchema },
        operation: WEBHOOK_OPERATIONS.redeliverWebhook,
      },
    );
}
