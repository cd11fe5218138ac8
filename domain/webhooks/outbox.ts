// Webhook events as an outbox (docs/decisions.md "Webhooks"): writeWebhookEvent inserts the event
// and one delivery per matching endpoint inside the caller's transaction, so an event exists if
// and only if the change it announces was committed. Each delivery row owns a workflow and
// follows the protocol of every such row (domain/workflow-starts.ts): written with
// workflow_pending set, started after the commit (dispatchWebhookDeliveries), and started by the
// outbox sweep (a Temporal Schedule: workflows/webhook-outbox-sweep.ts) if its process died first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookDelivery, WebhookEvent } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { newId } from '../../lib/ids.ts';

/** Event types a webhook endpoint can subscribe to (docs/api.md "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'post.scheduled',
  'post.published',
  'post.failed',
  'post.cancelled',
  'post.channel.published',
  'post.channel.failed',
  'post.analytics.updated',
  'post.approval.requested',
  'post.approval.approved',
  'post.approval.rejected',
  'channel.reauth_required',
  'media.ready',
  'media.failed',
  'feed.item.posted',
  'feed.failed',
  'feed.paused',
  'series.paused',
  'comment.received',
  'comment.reply.published',
  'comment.reply.failed',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Webhook events, written in the transaction of their change and started after its commit (activities/webhook-events.ts). */
export interface WebhookEvents {
  write(em: EntityManager, organizationId: string, type: WebhookEventType, data: () => Promise<Record<string, unknown>>): Promise<string[]>;
  dispatch(em: EntityManager, deliveryIds: string[]): Promise<void>;
}

export interface NewWebhookEvent {
  organizationId: string;
  type: WebhookEventType;
  /** The body's `data`, or a function that builds it (only called when some endpoint wants the event). */
  data: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
  now: Date;
  /** Only this endpoint (webhook.test); otherwise every enabled endpoint subscribed to the type. */
  endpointId?: string;
}

/**
 * Who gets an event: the enabled endpoints of its organization subscribed to its type (no list:
 * every type), as a condition on `webhook_endpoints e` over two SQL expressions, the organization
 * and the type (`?` for parameters). writeWebhookEvent finds the deliveries by it; a statement
 * that makes a change without an event when nobody wants one (activities/posts.ts) asks it in the
 * change's own snapshot.
 */
export const endpointWants = (organization: string, type: string) =>
  `e.organization_id = ${organization} and e.enabled and (e.events is null or e.events @> jsonb_build_array((${type})::text))`;

/** Writes the event and its deliveries in `em`'s transaction (flushed by the caller). Returns the delivery ids. */
export async function writeWebhookEvent(em: EntityManager, input: NewWebhookEvent): Promise<{ eventId: string; deliveryIds: string[] }> {
  // A plain statement: every post's publish writes two events, most to no endpoint.
  const targets = await sql<{ id: string }>(
    em,
    input.endpointId
      ? 'select id from webhook_endpoints e where id = ? and organization_id = ?'
      : `select id from webhook_endpoints e where ${endpointWants('?', '?')}`,
    input.endpointId ? [input.endpointId, input.organizationId] : [input.organizationId, input.type],
  );
  const eventId = newId('evt');
  if (targets.length === 0) return { eventId, deliveryIds: [] };
  em.create(WebhookEvent, {
    id: eventId,
    organization: input.organizationId,
    type: input.type,
    payload: {
      type: input.type,
      timestamp: input.now.toISOString(),
      data: typeof input.data === 'function' ? await input.data() : input.data,
    },
    createdAt: input.now,
  });
  const deliveryIds = targets.map((endpoint) => {
    const id = newId('whd');
    em.create(WebhookDelivery, {
      id,
      event: eventId,
      endpoint: endpoint.id,
      createdAt: input.now,
      updatedAt: input.now,
      workflowPending: true,
    });
    return id;
  });
  return { eventId, deliveryIds };
}
