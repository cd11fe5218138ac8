import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created, Timestamped } from './base.ts';
import { Organization } from './organization.ts';

// Webhooks (issue 14, docs/decisions.md "Webhooks"): an organization's endpoints, the events it
// emits (the outbox: written with the change they announce) and one delivery per (event, endpoint).

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    url: p.text(),
    description: p.text().nullable(),
    /** Event types it receives; null = all. */
    events: p.json<string[]>().nullable(),
    enabled: p.boolean().default(true),
    /** Why it was disabled by the service (a 410 Gone); null when enabled or disabled by the owner. */
    disabledReason: p.text().nullable(),
    /**
     * AES-256-GCM encrypted JSON (lib/crypto.ts) `{current, previous?, previousUntil?}`: during a
     * rotation the previous secret signs too until previousUntil. Never returned after creation.
     */
    secretEncrypted: p.text().hidden(),
  },
});
export type IWebhookEndpoint = InferEntity<typeof WebhookEndpoint>;

export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  extends: Created,
  properties: {
    /** Also the `webhook-id` header: the same on every attempt. */
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    type: p.string(),
    /** The body sent: `{type, timestamp, data}`. */
    payload: p.json<Record<string, unknown>>(),
  },
});
export type IWebhookEvent = InferEntity<typeof WebhookEvent>;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    event: () => p.manyToOne(WebhookEvent).mapToPk().deleteRule('cascade').index(),
    endpoint: () => p.manyToOne(WebhookEndpoint).mapToPk().deleteRule('cascade'),
    status: p.enum(WEBHOOK_DELIVERY_STATUSES).default('pending'),
    attempts: p.integer().default(0),
    lastStatusCode: p.integer().nullable(),
    lastDurationMs: p.integer().nullable(),
    lastError: p.text().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    nextRetryAt: p.datetime().nullable(),
    /** Its delivery workflow was started; false rows are started again by the next dispatch (the outbox sweep). */
    dispatched: p.boolean().default(false),
  },
  /** The endpoint's delivery log, newest first (ids are time-ordered). */
  indexes: [{ properties: ['endpoint', 'id'] }],
});
export type IWebhookDelivery = InferEntity<typeof WebhookDelivery>;
