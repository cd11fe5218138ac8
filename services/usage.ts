import type { EntityManager } from '@mikro-orm/postgresql';
import { UsageCounter } from '../db/entities/index.ts';
import { monthPeriod } from '../lib/plans.ts';

/**
 * Counts one request for the organization in the current UTC month, unless the month's quota is
 * used up: one conditional upsert, so concurrent requests on several API processes can neither
 * lose a count nor go past the quota. Returns the new total, or null when the quota is reached
 * (nothing counted). `limit` null = unlimited.
 */
export async function countRequest(
  em: EntityManager,
  organizationId: string,
  now: Date,
  limit: number | null = null,
): Promise<number | null> {
  const { period } = monthPeriod(now);
  const rows = await em.getConnection().execute<{ requests: number }[]>(
    `insert into usage_counters (organization_id, period, requests) values (?, ?, 1)
     on conflict (organization_id, period) do update set requests = usage_counters.requests + 1
     ${limit === null ? '' : 'where usage_counters.requests < ?'}
     returning requests`,
    limit === null ? [organizationId, period] : [organizationId, period, limit],
  );
  return rows[0] ? Number(rows[0].requests) : null;
}

export async function requestsThisMonth(em: EntityManager, organizationId: string, now: Date): Promise<number> {
  const { period } = monthPeriod(now);
  const row = await em.findOne(UsageCounter, { organization: organizationId, period });
  return row?.requests ?? 0;
}
