// Webhook events as an outbox (docs/decisions.md "Webhooks"): writeWebhookEvent inserts the event
// and one delivery per matching endpoint inside the caller's transaction, so an event exists if
// and only if the change it announces was committed. After the commit, dispatchWebhookDeliveries
// starts one delivery workflow per delivery and marks it dispatched. A process that dies between
// the two leaves rows with dispatched = false: the outbox sweep (sweepUndispatched below, run by a
// Temporal Schedule: workflows/webhook-outbox-sweep.ts) starts them, so none is lost.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../../db/entities/index.ts';
import { newId } from '../../lib/ids.ts';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
  type WebhookDeliveryWorkflow,
} from '../../workflows/webhook-delivery-types.ts';

/** Event types a webhook endpoint can subscribe to (README "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'post.scheduled',
  'post.published',
  'post.failed',
  'post.cancelled',
  'post.channel.published',
  'post.channel.failed',
  'channel.reauth_required',
  'media.ready',
  'media.failed',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface NewWebhookEvent {
  organizationId: string;
  type: WebhookEventType;
  /** The body's `data`, or a function that builds it (only called when some endpoint wants the event). */
  data: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
  now: Date;
  /** Only this endpoint (webhook.test); otherwise every enabled endpoint subscribed to the type. */
  endpointId?: string;
}

/** Writes the event and its deliveries in `em`'s transaction (flushed by the caller). Returns the delivery ids. */
export async function writeWebhookEvent(em: EntityManager, input: NewWebhookEvent): Promise<{ eventId: string; deliveryIds: string[] }> {
  const endpoints = await em.find(
    WebhookEndpoint,
    input.endpointId ? { id: input.endpointId, organization: input.organizationId } : { organization: input.organizationId, enabled: true },
  );
  const targets = endpoints.filter((e) => input.endpointId || !e.events || e.events.includes(input.type));
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
    em.create(WebhookDelivery, { id, event: eventId, endpoint: endpoint.id, createdAt: input.now, updatedAt: input.now });
    return id;
  });
  return { eventId, deliveryIds };
}

export interface WebhookDispatcher {
  client: Client;
  /** The worker's main task queue (where the delivery workflows run). */
  taskQueue: string;
}

/** Starts the delivery workflows of these (just committed) deliveries and marks them dispatched. */
export async function dispatchWebhookDeliveries(parent: EntityManager, temporal: WebhookDispatcher, deliveryIds: string[]) {
  if (!deliveryIds.length) return;
  for (const id of deliveryIds) await startDeliveryWorkflow(temporal, id);
  await parent.fork().nativeUpdate(WebhookDelivery, { id: { $in: deliveryIds } }, { dispatched: true });
}

/**
 * The outbox sweep: starts the workflow of every delivery committed at least `olderThanMs` before
 * `now` and never marked dispatched (its process died between the commit and the start).
 */
export async function sweepUndispatched(
  parent: EntityManager,
  temporal: WebhookDispatcher,
  opts: { olderThanMs: number; limit: number; now: Date; beat?: () => void },
): Promise<{ started: number; alreadyStarted: number }> {
  const em = parent.fork();
  const rows = await em.find(
    WebhookDelivery,
    { dispatched: false, createdAt: { $lte: new Date(opts.now.getTime() - opts.olderThanMs) } },
    { fields: ['id'], limit: opts.limit, orderBy: { createdAt: 'asc' } },
  );
  const result = { started: 0, alreadyStarted: 0 };
  for (const { id } of rows) {
    opts.beat?.();
    if (await startDeliveryWorkflow(temporal, id)) result.started++;
    else result.alreadyStarted++;
    await em.nativeUpdate(WebhookDelivery, { id }, { dispatched: true });
  }
  return result;
}

/** Starts `whd-<id>`; one already running (a dispatch repeated) is left as it is. */
export async function startDeliveryWorkflow(temporal: WebhookDispatcher, deliveryId: string): Promise<boolean> {
  try {
    await temporal.client.workflow.start<WebhookDeliveryWorkflow>(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      taskQueue: temporal.taskQueue,
      args: [{ deliveryId } satisfies WebhookDeliveryInput],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * The API's own objects for event bodies (post, channel, media item views). They are built by the
 * services layer, above the activities, so the worker passes them in (worker/webhook-views.ts).
 */
export interface WebhookViews {
  post(em: EntityManager, postId: string): Promise<Record<string, unknown>>;
  channel(em: EntityManager, channelId: string): Promise<Record<string, unknown>>;
  media(em: EntityManager, mediaId: string): Promise<Record<string, unknown>>;
}

export interface WebhookEmitterConfig {
  views: WebhookViews;
  /** The worker's main task queue: delivery workflows run there, whichever queue the emitting activity ran on. */
  taskQueue: string;
}

/**
 * Events emitted by activities: `write` inside the transaction of the change (called only when
 * the row really changed state, so an activity retried after its commit emits nothing twice),
 * `dispatch` after the commit with the Temporal client of the activity's worker. Without a config
 * (activities built for a test of their own) nothing is emitted.
 */
export function createWebhookEmitter(config: WebhookEmitterConfig | undefined) {
  return {
    views: config?.views,
    async write(
      em: EntityManager,
      organizationId: string,
      type: WebhookEventType,
      data: (views: WebhookViews) => Promise<Record<string, unknown>>,
    ): Promise<string[]> {
      if (!config) return [];
      // No endpoint wants it: skip building the view.
      const { deliveryIds } = await writeWebhookEvent(em, { organizationId, type, data: () => data(config.views), now: new Date() });
      return deliveryIds;
    },
    /** Starts the deliveries' workflows; if this fails (or the process dies first), the outbox sweep starts them. */
    async dispatch(em: EntityManager, deliveryIds: string[]): Promise<void> {
      if (!config) return;
      await dispatchWebhookDeliveries(em, { client: Context.current().client, taskQueue: config.taskQueue }, deliveryIds);
    },
  };
}
export type WebhookEmitter = ReturnType<typeof createWebhookEmitter>;
