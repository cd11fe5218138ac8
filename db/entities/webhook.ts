import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created, Timestamped } from './base.ts';
import { Organization } from './organization.ts';

// Webhooks (docs/decisions.md "Webhooks"): an organization's endpoints, the events it
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
    /**
     * Why the service disabled it (a 410 Gone, or only failed deliveries for days:
     * activities/webhook-auto-disable.ts); null when enabled or disabled by the owner.
     */
    disabledReason: p.text().nullable(),
    /** When it was disabled (by the service or its owner); null while enabled. */
    disabledAt: p.datetime().nullable(),
    /** When its owner last enabled it again: failures before it do not count toward the auto-disable rule. */
    resumedAt: p.datetime().nullable(),
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
    /** Committed, its delivery workflow not known to be started (domain/workflow-starts.ts); the outbox sweep starts it. */
    workflowPending: p.boolean().default(false),
  },
  indexes: [
    /** The endpoint's delivery log, newest first (ids are time-ordered). */
    { properties: ['endpoint', 'id'] },
    // Partial: the outbox sweep's look-up stays small however many deliveries there are.
    {
      name: 'webhook_deliveries_workflow_pending_index',
      expression:
        'create index "webhook_deliveries_workflow_pending_index" on "webhook_deliveries" ("created_at") where "workflow_pending"',
    },
  ],
});
export type IWebhookDelivery = InferEntity<typeof WebhookDelivery>;
