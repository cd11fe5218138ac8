// Per-key, per-minute rate limits shared by every API process through Postgres
// (rate-limiter-flexible's RateLimiterPostgres: one atomic upsert per request, so concurrent
// requests on several processes never over-admit).
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Pool } from 'pg';
import { PLAN_LIMITS, PLANS, type Plan } from '../lib/plans.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends. */
  resetsAt: Date;
}

export interface RateLimiter {
  consume(keyId: string, plan: Plan): Promise<RateDecision>;
}

export function createRateLimiter(pool: Pool): RateLimiter {
  const limiters = new Map<Plan, RateLimiterPostgres>();
  for (const plan of PLANS) {
    const points = PLAN_LIMITS[plan].requestsPerMinute;
    if (points <= 0) continue;
    limiters.set(
      plan,
      new RateLimiterPostgres({
        storeClient: pool,
        tableName: 'rate_limits',
        tableCreated: true, // created by the migrations
        clearExpiredByTimeout: false,
        keyPrefix: `rpm:${plan}`,
        points,
        duration: 60,
      }),
    );
  }
  return {
    async consume(keyId, plan) {
      const limiter = limiters.get(plan);
      const limit = PLAN_LIMITS[plan].requestsPerMinute;
      if (!limiter) return { allowed: false, limit, remaining: 0, resetsAt: new Date(Date.now() + 60_000) };
      try {
        const res = await limiter.consume(keyId, 1);
        return { allowed: true, limit, remaining: res.remainingPoints, resetsAt: new Date(Date.now() + res.msBeforeNext) };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          return { allowed: false, limit, remaining: 0, resetsAt: new Date(Date.now() + rejection.msBeforeNext) };
        }
        throw rejection; // the store failed: a 500, never a silent pass
      }
    },
  };
}
