import type { EntityManager } from '@mikro-orm/postgresql';
import { UsageCounter } from '../db/entities/index.ts';
import { monthPeriod } from '../lib/plans.ts';

/**
 * Counts one authenticated request for the organization in the current UTC month and returns
 * the new total. A single upsert, so concurrent requests (and several API processes) never lose
 * a count.
 */
export async function countRequest(em: EntityManager, organizationId: string, now: Date): Promise<number> {
  const { period } = monthPeriod(now);
  const rows = await em.getConnection().execute<{ requests: number }[]>(
    `insert into usage_counters (organization_id, period, requests) values (?, ?, 1)
     on conflict (organization_id, period) do update set requests = usage_counters.requests + 1
     returning requests`,
    [organizationId, period],
  );
  return Number(rows[0]?.requests ?? 0);
}

export async function requestsThisMonth(em: EntityManager, organizationId: string, now: Date): Promise<number> {
  const { period } = monthPeriod(now);
  const row = await em.findOne(UsageCounter, { organization: organizationId, period });
  return row?.requests ?? 0;
}
