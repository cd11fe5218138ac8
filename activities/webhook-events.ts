// Webhook events emitted by activities (domain/webhooks/outbox.ts writes them; the delivery rows
// follow domain/workflow-starts.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { writeWebhookEvent, type WebhookEventType } from '../domain/webhooks/outbox.ts';
import { webhookViews, type WebhookViews } from '../domain/webhooks/views.ts';
import { dispatchWebhookDeliveries } from '../domain/workflow-starts.ts';
import type { ObjectStorage } from '../storage/types.ts';

export interface WebhookEmitterConfig {
  /** The worker's main task queue: delivery workflows run there, whichever queue the emitting activity ran on. */
  taskQueue: string;
  /** Signs the media URLs of event bodies. */
  storage?: ObjectStorage;
}

/**
 * Events emitted by activities: `write` inside the transaction of the change (called only when
 * the row really changed state, so an activity retried after its commit emits nothing twice),
 * `dispatch` after the commit with the Temporal client of the activity's worker. Without a config
 * (activities built for a test of their own) nothing is emitted.
 */
export function createWebhookEmitter(config: WebhookEmitterConfig | undefined) {
  const views = config ? webhookViews(config.storage) : undefined;
  return {
    async write(
      em: EntityManager,
      organizationId: string,
      type: WebhookEventType,
      data: (views: WebhookViews) => Promise<Record<string, unknown>>,
    ): Promise<string[]> {
      if (!views) return [];
      // No endpoint wants it: the view is never built.
      const { deliveryIds } = await writeWebhookEvent(em, { organizationId, type, data: () => data(views), now: new Date() });
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
