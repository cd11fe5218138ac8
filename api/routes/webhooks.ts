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
import { OPERATIONS } from '../openapi/operations.ts';

const EventType = t.Union(WEBHOOK_EVENT_TYPES.map((type) => t.Literal(type)));
const Events = t.Union([t.Literal('all'), t.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true })]);
// The schema says which URLs parse; where the host points (it must resolve, and not to a refused
// address) is the service's check, stated in the field's description.
const Url = HttpUrl(2048);
const Description = Chars(500);

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
        operation: OPERATIONS.createWebhook,
      },
    )
    .get('/webhooks', async ({ auth }) => ({ data: (await listWebhooks(deps.orm.em.fork(), auth.organization.id)).map(webhookView) }), {
      response: { 200: WebhookEndpointListSchema },
      operation: OPERATIONS.listWebhooks,
    })
    .get('/webhooks/:id', async ({ auth, params }) => webhookView(await getWebhook(deps.orm.em.fork(), auth.organization.id, params.id)), {
      params: IdParams,
      response: { 200: WebhookEndpointSchema },
      operation: OPERATIONS.getWebhook,
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
        operation: OPERATIONS.updateWebhook,
      },
    )
    .delete(
      '/webhooks/:id',
      async ({ auth, params, set }) => {
        await deleteWebhook(deps.orm.em.fork(), auth.organization.id, params.id);
        set.status = 204;
      },
      { params: IdParams, operation: OPERATIONS.deleteWebhook },
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
        operation: OPERATIONS.rotateWebhookSecret,
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
        operation: OPERATIONS.testWebhook,
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
        operation: OPERATIONS.listWebhookDeliveries,
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
        operation: OPERATIONS.redeliverWebhook,
      },
    );
}
