// Per-key, per-minute rate limits shared by every API process through Postgres, in
// rate-limiter-flexible's table layout (RateLimiterPostgres: one atomic upsert, so concurrent
// requests on several processes never over-admit). Authenticated requests are admitted by
// `admit` (services/admission.ts): key, rate limit, quota and last-used in one statement,
// batched; `consume` is the limiter alone.
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import pgDriver, { type Pool } from 'pg';
import { isStaleConnection } from '../db/connection-errors.ts';
import { PLAN_LIMITS, PLANS, type Plan } from '../lib/plans.ts';
import { createAdmissionBatcher, runAdmission, type Admission, type AdmissionRequest } from './admission.ts';
import { createAdmissionCache, type AdmissionCache } from './admission-cache.ts';
import type { ChangeFeed } from '../db/change-feed.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the current window ends. */
  resetsAt: Date;
}

export interface RateLimiter {
  consume(keyId: string, plan: Plan): Promise<RateDecision>;
  /** The whole admission of an authenticated request (api/auth.ts), rate limit included. */
  admit(request: AdmissionRequest): Promise<Admission>;
  /** With an admission cache: it, for its state; close() writes its counts and ends its connection. */
  cache?: AdmissionCache;
  close(): Promise<void>;
}

/** Postgres broke the tie between two batches that locked the same rows in turn: nothing of it ran. */
const DEADLOCK = '40P01';

/**
 * The limiter's own pg pool (and the admission's). Postgres closing idle connections (a restart, a failover,
 * pg_terminate_backend) is an `error` event on the pool, and an `error` event nobody listens to
 * ends the process: the listener only reports it, pg-pool has already dropped the dead client
 * and the next query opens a new connection.
 */
export function createRateLimiterPool(connectionString: string, onError: (err: Error) => void, max = 5): Pool {
  // Asynchronous commit on this pool only: its statements write counters (rate windows, monthly
  // counts, last-used stamps), and waiting for the WAL flush of each would be most of a request's
  // time. Other sessions see a commit at once as ever; only a crash of Postgres itself may lose
  // the last fraction of a second of counts (docs/decisions.md "Keys, admission, plans and quota").
  const pool = new pgDriver.Pool({ connectionString, max, options: '-c synchronous_commit=off' });
  pool.on('error', onError);
  return pool;
}

/**
 * `cache`: admit from memory (services/admission-cache.ts), told of changes by the process's change
 * feed (db/change-feed.ts) on the pool's database; without it every request is one statement (batched).
 */
export function createRateLimiter(
  pool: Pool,
  options: { cache?: { feed: ChangeFeed; onError?: (message: string, err: unknown) => void } } = {},
): RateLimiter {
  // A dead client can fail twice (its socket's end may come after its error): twice the pool, plus one.
  const attempts = 2 * ((pool as { options?: { max?: number } }).options?.max ?? 10) + 1;
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
  const batcher = createAdmissionBatcher(async (requests) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runAdmission(async (text, values, name) => (await pool.query({ name, text, values })).rows, requests, true);
      } catch (err) {
        // As for consume below; a deadlock rolled the whole statement back, so it is sent again too.
        const again = isStaleConnection(err) || (err as { code?: string }).code === DEADLOCK;
        if (attempt >= attempts || !again) throw err;
      }
    }
  });
  const exact = (request: AdmissionRequest) => batcher.admit(request);
  const cache = options.cache && createAdmissionCache({ pool, exact, ...options.cache });
  return {
    admit: cache ? cache.admit : exact,
    ...(cache ? { cache } : {}),
    close: async () => {
      await cache?.close();
    },
    async consume(keyId, plan) {
      const limiter = limiters.get(plan);
      const limit = PLAN_LIMITS[plan].requestsPerMinute;
      if (!limiter) return { allowed: false, limit, remaining: 0, resetsAt: new Date(Date.now() + 60_000) };
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await limiter.consume(keyId, 1);
          return { allowed: true, limit, remaining: res.remainingPoints, resetsAt: new Date(Date.now() + res.msBeforeNext) };
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) {
            return { allowed: false, limit, remaining: 0, resetsAt: new Date(Date.now() + rejection.msBeforeNext) };
          }
          // An idle client killed by a Postgres restart: pg-pool drops it, the next attempt takes
          // another (at worst one request is counted twice). Anything else: the store failed, a
          // 5xx, never a silent pass.
          if (attempt >= attempts || !isStaleConnection(rejection)) throw rejection;
        }
      }
    },
  };
}
