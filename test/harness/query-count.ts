// Counts the statements this process sends to Postgres (round trips per request).
import pgDriver from 'pg';

/**
 * Every statement any pg client of this process sends while `fn` runs (the ORM's pool and the
 * rate limiter's both go through pg's Client.query): one call, one round trip.
 */
export async function countQueries<T>(fn: () => Promise<T>): Promise<{ result: T; queries: string[] }> {
  const proto = pgDriver.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const queries: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string; name?: string };
    queries.push(typeof q === 'string' ? q : (q?.name ?? q?.text ?? '?'));
    return original.apply(this, args);
  };
  try {
    return { result: await fn(), queries };
  } finally {
    proto.query = original;
  }
}
