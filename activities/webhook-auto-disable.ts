// The auto-disable rule (docs/api.md "Webhooks", docs/decisions.md "Webhooks"): an
// endpoint that has received nothing but failures for days is disabled, with the reason shown to
// its organization, so the service stops retrying into the void. Checked by the delivery activity
// each time a delivery ends `failed` (its last attempt failed).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IWebhookEndpoint } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';

/** How long an endpoint may receive only failures before it is disabled. */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

interface FailureRun {
  since: Date | null;
  failed: number;
}

/**
 * The run of failures the endpoint is in: its `failed` deliveries created after the later of its
 * last successful attempt and its owner's last re-enable (`resumedAt`); `since` is the oldest
 * one's creation. A delivered one ends the run; so does enabling the endpoint again.
 */
async function failureRun(em: EntityManager, endpoint: IWebhookEndpoint): Promise<FailureRun> {
  const [row] = await sql<FailureRun>(
    em,
    `select min(d.created_at) as since, count(*)::int as failed
       from webhook_deliveries d
      where d.endpoint_id = ? and d.status = 'failed'
        and d.created_at > greatest(
          coalesce((select max(s.last_attempt_at) from webhook_deliveries s where s.endpoint_id = ? and s.status = 'delivered'), '-infinity'),
          coalesce(?::timestamptz, '-infinity'))`,
    [endpoint.id, endpoint.id, endpoint.resumedAt ?? null],
  );
  return { since: row?.since ? new Date(row.since) : null, failed: row?.failed ?? 0 };
}

/**
 * Call after a delivery to `endpoint` ended `failed` and was flushed: disables the endpoint (in
 * `em`, flushed by the caller) when every delivery in its current run of failures failed and the
 * run began at least AUTO_DISABLE_AFTER_MS before `now`. True when it disabled it.
 */
export async function disableIfFailingForDays(em: EntityManager, endpoint: IWebhookEndpoint, now: Date): Promise<boolean> {
  if (!endpoint.enabled) return false;
  const run = await failureRun(em, endpoint);
  if (!run.since || now.getTime() - run.since.getTime() < AUTO_DISABLE_AFTER_MS) return false;
  const days = Math.floor((now.getTime() - run.since.getTime()) / 86_400_000);
  endpoint.enabled = false;
  endpoint.disabledAt = now;
  endpoint.disabledReason =
    `Disabled on ${now.toISOString()}: no delivery succeeded for ${days} days ` +
    `(${run.failed} deliveries of events since ${run.since.toISOString()} all failed after every retry).`;
  return true;
}
