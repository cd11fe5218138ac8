import type { Orm } from '../db/orm.ts';
import type { TemporalDeps } from '../services/post-scheduler.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { RateLimiter } from '../services/rate-limit.ts';

/** What the HTTP app needs from the outside; the server and the tests build it. */
export interface AppDeps {
  orm: Orm;
  /** Starts and updates post workflows; routes that need it fail without it. */
  temporal?: TemporalDeps;
  /** Per-minute limits per key; built by the entry points from a pg pool (createRateLimiter). */
  rateLimiter?: RateLimiter;
  /** Object storage of the media library. */
  storage?: ObjectStorage;
  /** Injectable clock (quota periods, key expiry). */
  now?: () => Date;
  log?: (entry: Record<string, unknown>) => void;
}

export function defaultLog(entry: Record<string, unknown>): void {
  console.error(JSON.stringify({ time: new Date().toISOString(), ...entry }));
}
