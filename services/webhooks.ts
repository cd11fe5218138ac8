// Webhook endpoints of an organization and their delivery log (docs/api.md "Webhooks").
// Events and their deliveries are written by domain/webhooks/outbox.ts (the outbox); this
// module manages the endpoints and starts what a request asks for (a test event, a redelivery).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm.ts';
import {
  Organization,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
  type IWebhookDelivery,
  type IWebhookEndpoint,
} from '../db/entities/index.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { checkOutboundUrl, OutboundRefusedError, type OutboundPolicy } from '../lib/outbound.ts';
import { PLAN_LIMITS, type Plan } from '../lib/plans.ts';
import { generateWebhookSecret } from '../lib/webhook-signing.ts';
import { isTemporalOutage, type TemporalDeps, temporalUnavailable, withTemporalDeadline } from '../domain/temporal-calls.ts';
import type { StoredWebhookSecrets } from '../activities/webhooks.ts';
import { WEBHOOK_EVENT_TYPES, writeWebhookEvent } from '../domain/webhooks/outbox.ts';
import { dispatchWebhookDeliveries, redeliveryStart, startOnce } from '../domain/workflow-starts.ts';

export { WEBHOOK_EVENT_TYPES };

/** An endpoint's URL and description, in characters: the API's body schema (api/routes/webhooks.ts) and the web form read them. */
export const WEBHOOK_LIMITS = { urlChars: 2048, descriptionChars: 500 } as const;

/** How long the secret before a rotation keeps signing. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookDeps {
  credentialsKey: Buffer;
  outbound: OutboundPolicy;
}

export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string | null;
  events: string[] | 'all';
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function webhookView(e: IWebhookEndpoint): WebhookEndpointView {
  return {
    id: e.id,
    url: e.url,
    description: e.description ?? null,
    events: e.events ?? 'all',
    enabled: e.enabled,
    disabledReason: e.disabledReason ?? null,
    disabledAt: e.disabledAt?.toISOString() ?? null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}

export interface WebhookInput {
  url?: string;
  events?: string[] | 'all';
  description?: string | null;
  enabled?: boolean;
}

/** http(s), and an address the outbound guard lets through (checked now; each attempt checks again). */
async function checkUrl(url: string, outbound: OutboundPolicy): Promise<void> {
  const refuse = (message: string) => errors.validation([{ path: 'url', message }]);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('is not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw refuse('must be an http(s) URL');
  if (parsed.username || parsed.password) throw refuse('must not carry a user name or password');
  try {
    await checkOutboundUrl(parsed, outbound);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw refuse(err.message);
    throw refuse(`its host does not resolve (${(err as Error).message})`);
  }
}

function eventsOf(events: string[] | 'all'): string[] | null {
  return events === 'all' ? null : [...new Set(events)];
}

async function findEndpoint(em: EntityManager, organizationId: string, id: string) {
  // No such id; Postgres would refuse the NUL (a 500).
  if (id.includes('\u0000')) throw errors.notFound('Webhook endpoint');
  const endpoint = await em.findOne(WebhookEndpoint, { id, organization: organizationId });
  if (!endpoint) throw errors.notFound('Webhook endpoint');
  return endpoint;
}

export async function createWebhook(
  em: EntityManager,
  deps: WebhookDeps,
  org: { id: string; plan: Plan },
  input: Required<Pick<WebhookInput, 'url' | 'events'>> & { description?: string | null },
  now: Date,
): Promise<{ endpoint: IWebhookEndpoint; secret: string }> {
  await checkUrl(input.url, deps.outbound);
  return em.transactional(async (tx) => {
    // The organization's row lock: two concurrent creates cannot both take the last place.
    await tx.findOne(Organization, { id: org.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const limit = PLAN_LIMITS[org.plan].webhookEndpoints;
    const used = await tx.count(WebhookEndpoint, { organization: org.id });
    if (limit !== null && used >= limit)
      throw new ApiError('limit_reached', `The plan allows ${limit} webhook endpoints; ${used} exist.`, {
        details: { limit, used, resource: 'webhook_endpoints' },
      });
    const secret = generateWebhookSecret();
    const endpoint = tx.create(WebhookEndpoint, {
      id: newId('wh'),
      organization: org.id,
      url: input.url,
      description: input.description ?? null,
      events: eventsOf(input.events),
      enabled: true,
      secretEncrypted: encryptJson(deps.credentialsKey, { current: secret } satisfies StoredWebhookSecrets),
      createdAt: now,
      updatedAt: now,
    });
    return { endpoint, secret };
  });
}

export async function listWebhooks(em: EntityManager, organizationId: string) {
  return em.find(WebhookEndpoint, { organization: organizationId }, { orderBy: { id: 'asc' } });
}

export const getWebhook = findEndpoint;

export async function updateWebhook(
  em: EntityManager,
  deps: WebhookDeps,
  organizationId: string,
  id: string,
  input: WebhookInput,
  now = new Date(),
) {
  const endpoint = await findEndpoint(em, organizationId, id);
  if (input.url !== undefined && input.url !== endpoint.url) {
    await checkUrl(input.url, deps.outbound);
    endpoint.url = input.url;
  }
  if (input.events !== undefined) endpoint.events = eventsOf(input.events);
  if (input.description !== undefined) endpoint.description = input.description;
  if (input.enabled !== undefined && input.enabled !== endpoint.enabled) {
    endpoint.enabled = input.enabled;
    if (input.enabled) {
      // Enabled again by its owner: the reason no longer applies, and the failures before now
      // no longer count toward the auto-disable rule (activities/webhook-auto-disable.ts).
      Object.assign(endpoint, { disabledReason: null, disabledAt: null, resumedAt: now });
    } else endpoint.disabledAt = now;
  }
  await em.flush();
  return endpoint;
}

/** Deletes the endpoint and its deliveries; a delivery workflow still waiting finds nothing to send. */
export async function deleteWebhook(em: EntityManager, organizationId: string, id: string) {
  const endpoint = await findEndpoint(em, organizationId, id);
  await em.nativeDelete(WebhookEndpoint, { id: endpoint.id });
}

export async function rotateWebhookSecret(em: EntityManager, deps: WebhookDeps, organizationId: string, id: string, now: Date) {
  const endpoint = await findEndpoint(em, organizationId, id);
  const stored = decryptJson<StoredWebhookSecrets>(deps.credentialsKey, endpoint.secretEncrypted);
  const secret = generateWebhookSecret();
  const next: StoredWebhookSecrets = {
    current: secret,
    previous: stored.current,
    previousUntil: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
  };
  endpoint.secretEncrypted = encryptJson(deps.credentialsKey, next);
  await em.flush();
  return { endpoint, secret, previousSecretExpiresAt: next.previousUntil! };
}

/** Sends `webhook.test` to this endpoint (even a disabled one is refused: enable it first). */
export async function sendTestEvent(orm: Orm, temporal: TemporalDeps | undefined, organizationId: string, id: string, now: Date) {
  const em = orm.em.fork();
  const { eventId, deliveryIds } = await em.transactional(async (tx) => {
    const endpoint = await findEndpoint(tx, organizationId, id);
    if (!endpoint.enabled) throw errors.conflict('The endpoint is disabled; enable it first.', { enabled: false });
    return writeWebhookEvent(tx, {
      organizationId,
      type: 'webhook.test',
      endpointId: endpoint.id,
      now,
      data: { endpointId: endpoint.id, message: 'A test event sent from the API.' },
    });
  });
  await dispatchWebhookDeliveries(orm.em, required(temporal), deliveryIds);
  return { eventId, deliveryId: deliveryIds[0]! };
}

function required(temporal: TemporalDeps | undefined): TemporalDeps {
  if (!temporal) throw new Error('Temporal must be configured to send webhooks');
  return temporal;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  lastAttemptAt: string | null;
  nextRetryAt: string | null;
  createdAt: string;
}

function deliveryView(d: IWebhookDelivery, eventType: string): DeliveryView {
  return {
    id: d.id,
    eventId: d.event,
    eventType,
    status: d.status,
    attempts: d.attempts,
    statusCode: d.lastStatusCode ?? null,
    durationMs: d.lastDurationMs ?? null,
    error: d.lastError ?? null,
    lastAttemptAt: d.lastAttemptAt?.toISOString() ?? null,
    nextRetryAt: d.nextRetryAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString(),
  };
}

const CURSOR = /^whd_[0-9a-z]{26}$/;

/** Newest first; the cursor is the last delivery id of the page before (ids are time-ordered). */
export async function listDeliveries(
  em: EntityManager,
  organizationId: string,
  endpointId: string,
  page: { limit: number; cursor?: string },
): Promise<{ data: DeliveryView[]; nextCursor: string | null }> {
  await findEndpoint(em, organizationId, endpointId);
  if (page.cursor !== undefined && !CURSOR.test(page.cursor))
    throw errors.validation([{ path: 'cursor', message: 'is not a cursor returned by this API' }]);
  const rows = await em.find(
    WebhookDelivery,
    { endpoint: endpointId, ...(page.cursor ? { id: { $lt: page.cursor } } : {}) },
    { orderBy: { id: 'desc' }, limit: page.limit + 1 },
  );
  const shown = rows.slice(0, page.limit);
  const events = await em.find(WebhookEvent, { id: { $in: [...new Set(shown.map((d) => d.event))] } }, { fields: ['id', 'type'] });
  const typeOf = new Map(events.map((e) => [e.id, e.type]));
  return {
    data: shown.map((d) => deliveryView(d, typeOf.get(d.event) ?? 'unknown')),
    nextCursor: rows.length > page.limit ? shown[shown.length - 1]!.id : null,
  };
}

/** Sends a finished delivery again (same event, same `webhook-id`) with a fresh schedule. */
export async function redeliver(
  orm: Orm,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  endpointId: string,
  deliveryId: string,
) {
  const em = orm.em.fork();
  const endpoint = await findEndpoint(em, organizationId, endpointId);
  if (deliveryId.includes('\u0000')) throw errors.notFound('Delivery');
  const dispatcher = required(temporal);
  // Under the delivery's row lock: two redeliveries at once start one workflow, and the loser
  // cannot put back a status the winner has just changed.
  const { delivery, before } = await em.transactional(async (tx) => {
    const found = await tx.findOne(WebhookDelivery, { id: deliveryId, endpoint: endpoint.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!found) throw errors.notFound('Delivery');
    if (!endpoint.enabled) throw errors.conflict('The endpoint is disabled; enable it first.', { enabled: false });
    if (found.status === 'pending') throw errors.conflict('The delivery is still being attempted.', { status: 'pending' });
    const was = found.status;
    Object.assign(found, { status: 'pending', nextRetryAt: null, workflowPending: false });
    return { delivery: found, before: was };
  });
  const putBack = async () => {
    await em.nativeUpdate(WebhookDelivery, { id: delivery.id, status: 'pending' }, { status: before });
  };
  let started: boolean;
  try {
    // A redelivery before this one has recorded its last attempt; until its workflow has closed, its id is not free.
    const start = redeliveryStart(delivery.id);
    started = (await withTemporalDeadline(dispatcher, () => startOnce(dispatcher.client, dispatcher.taskQueue, start))) === 'started';
  } catch (err) {
    await putBack();
    if (isTemporalOutage(err)) throw temporalUnavailable('Deliveries cannot be started right now; nothing changed. Retry shortly.', err);
    throw err;
  }
  if (!started) {
    await putBack();
    throw errors.conflict('The delivery is still being attempted.', { status: 'pending' });
  }
  delivery.status = 'pending';
  const event = await em.findOneOrFail(WebhookEvent, { id: delivery.event }, { fields: ['id', 'type'] });
  return deliveryView(delivery, event.type);
}
