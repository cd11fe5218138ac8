import type { Orm } from '../db/orm.ts';

/** What the HTTP app needs from the outside; the server and the tests build it. */
export interface AppDeps {
  orm: Orm;
  /** Injectable clock (quota periods, key expiry). */
  now?: () => Date;
  log?: (entry: Record<string, unknown>) => void;
}

export function defaultLog(entry: Record<string, unknown>): void {
  console.error(JSON.stringify({ time: new Date().toISOString(), ...entry }));
}
