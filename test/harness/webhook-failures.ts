// Delivery rows with chosen timestamps, and a delivery's last attempt at a chosen moment, for the
// webhook auto-disable rule (activities/webhook-auto-disable.ts): days of failures without
// waiting days, and without timed assertions.
import { createWebhookActivities } from '../../activities/webhooks.ts';
import { newId } from '../../lib/ids.ts';
import { harness } from './index.ts';

/** A port nothing listens on: an attempt to it fails at once (connection refused). */
export const REFUSING_URL = 'http://127.0.0.1:9/hook';

const DAY = 86_400_000;
export const daysBefore = (at: Date, days: number) => new Date(at.getTime() - days * DAY);

/** Inserts an event and its delivery to `endpointId` as they would be after `status`. Returns the delivery id. */
export async function addDelivery(
  endpointId: string,
  opts: { createdAt: Date; status: 'pending' | 'delivered' | 'failed'; lastAttemptAt?: Date },
): Promise<string> {
  const conn = (await harness()).orm.em.fork().getConnection();
  const [endpoint] = await conn.execute<{ organization_id: string }[]>('select organization_id from webhook_endpoints where id = ?', [
    endpointId,
  ]);
  const eventId = newId('evt');
  const deliveryId = newId('whd');
  await conn.execute(`insert into webhook_events (id, created_at, organization_id, type, payload) values (?, ?, ?, 'webhook.test', ?)`, [
    eventId,
    opts.createdAt,
    endpoint!.organization_id,
    JSON.stringify({ type: 'webhook.test', timestamp: opts.createdAt, data: {} }),
  ]);
  const finished = opts.status !== 'pending';
  await conn.execute(
    `insert into webhook_deliveries (id, created_at, updated_at, event_id, endpoint_id, status, attempts, last_attempt_at, last_error, workflow_pending)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, false)`,
    [
      deliveryId,
      opts.createdAt,
      opts.lastAttemptAt ?? opts.createdAt,
      eventId,
      endpointId,
      opts.status,
      finished ? 10 : 9,
      finished ? (opts.lastAttemptAt ?? opts.createdAt) : null,
      opts.status === 'failed' ? 'HTTP 503' : null,
    ],
  );
  return deliveryId;
}

/** The delivery's last scheduled attempt (plannedDelayMs null), made at `at`: what the workflow's tenth attempt does. */
export async function lastAttempt(deliveryId: string, at: Date) {
  const h = await harness();
  const activities = createWebhookActivities({
    orm: h.orm,
    credentialsKey: h.credentialsKey,
    outbound: { allowPrivate: true },
    timeoutMs: 5_000,
    now: () => at,
  });
  return activities.attemptWebhookDelivery({ deliveryId, plannedDelayMs: null });
}
