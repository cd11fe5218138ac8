// Webhook deliveries as durable workflows (workflows/webhook-delivery-types.ts): attempt, and
// while an attempt asks for a retry, sleep per the schedule and attempt again. The schedule lives
// here, in timers, so a worker or Temporal restart resumes it where it was.
import { proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  WEBHOOK_ATTEMPTS_PER_ACTIVITY,
  WEBHOOK_JITTER,
  WEBHOOK_RETRY_SCHEDULE_MS,
  type WebhookAttemptInput,
  type WebhookDeliveriesInput,
  type WebhookDeliveriesResult,
  type WebhookDeliveryInput,
  type WebhookDeliveryOutcome,
} from './webhook-delivery-types.ts';

type Activities = ReturnType<typeof createActivities>;

const ATTEMPT_OPTIONS = {
  // Above the 15 s request timeout plus the database writes around it (an activity's attempts run at once).
  startToCloseTimeout: '1 minute',
  // Retried only when the database write fails: an HTTP failure is an answer (outcome retry), not an error.
  // A retry may send the same event again: delivery is at-least-once (docs/decisions.md).
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
} as const;

const deliver = proxyActivities<Activities>(ATTEMPT_OPTIONS);
// Local: the attempts run inside the workflow task that asks for them, so an event delivered at
// once costs one workflow task and no activity task (docs/decisions.md "Webhooks").
const deliverHere = proxyLocalActivities<Activities>(ATTEMPT_OPTIONS);

/** The wait after the attempt at `step` if it must be retried, jittered; null after the last. */
function plannedDelayMs(step: number): number | null {
  const next = WEBHOOK_RETRY_SCHEDULE_MS[step + 1];
  // Math.random is deterministic in workflow code (seeded per execution), so replay agrees.
  return next === undefined ? null : Math.round(next * (1 - WEBHOOK_JITTER + 2 * WEBHOOK_JITTER * Math.random()));
}

interface Waiting {
  deliveryId: string;
  /** Its place in the schedule: the attempt it makes next. */
  step: number;
  /** Workflow time at which that attempt is due. */
  dueAt: number;
}

/**
 * An event's deliveries (or one redelivery): the deliveries due are attempted together, at most
 * WEBHOOK_ATTEMPTS_PER_ACTIVITY per activity; each one asked to retry waits its own delay (the
 * schedule's, or its receiver's longer Retry-After), and the workflow sleeps until the first is due.
 */
export async function webhookDeliveriesWorkflow({ deliveryIds }: WebhookDeliveriesInput): Promise<WebhookDeliveriesResult> {
  const outcomes: WebhookDeliveriesResult = {};
  let waiting: Waiting[] = deliveryIds.map((deliveryId) => ({ deliveryId, step: 0, dueAt: Date.now() }));
  while (waiting.length > 0) {
    const now = Date.now();
    const due = waiting.filter((w) => w.dueAt <= now);
    if (due.length === 0) {
      await sleep(Math.min(...waiting.map((w) => w.dueAt)) - now);
      continue;
    }
    waiting = waiting.filter((w) => w.dueAt > now);
    // One jittered wait per step and round: deliveries of one event that fail together come back together.
    const delays = new Map<number, number | null>();
    const attempts: WebhookAttemptInput[] = due.map((d) => {
      if (!delays.has(d.step)) delays.set(d.step, plannedDelayMs(d.step));
      return { deliveryId: d.deliveryId, plannedDelayMs: delays.get(d.step)! };
    });
    const chunks: WebhookAttemptInput[][] = [];
    for (let i = 0; i < attempts.length; i += WEBHOOK_ATTEMPTS_PER_ACTIVITY)
      chunks.push(attempts.slice(i, i + WEBHOOK_ATTEMPTS_PER_ACTIVITY));
    const results = (await Promise.all(chunks.map((chunk) => deliverHere.attemptWebhookDeliveries({ attempts: chunk })))).flat();
    const answeredAt = Date.now();
    results.forEach((result, i) => {
      const d = due[i]!;
      if (result.outcome === 'retry') waiting.push({ deliveryId: d.deliveryId, step: d.step + 1, dueAt: answeredAt + result.nextDelayMs });
      else outcomes[d.deliveryId] = result.outcome;
    });
  }
  return outcomes;
}

/** One delivery: the workflow of the executions started before webhookDeliveriesWorkflow. */
export async function webhookDeliveryWorkflow({ deliveryId }: WebhookDeliveryInput): Promise<WebhookDeliveryOutcome> {
  for (let i = 0; i < WEBHOOK_RETRY_SCHEDULE_MS.length; i++) {
    const result = await deliver.attemptWebhookDelivery({ deliveryId, plannedDelayMs: plannedDelayMs(i) });
    if (result.outcome !== 'retry') return result.outcome;
    await sleep(result.nextDelayMs);
  }
  return 'failed';
}
