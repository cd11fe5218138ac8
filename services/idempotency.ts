// Idempotency-Key (DESIGN.md §3): the same key with the same body within 24 h returns the first
// response (same ids, same status code) without doing anything again; the same key with another
// body → 409 conflict; concurrent requests with one key do the work exactly once. Keys are per
// API key: another key of the organization (maybe limited to other channels) sending the same
// Idempotency-Key makes an independent request and never sees this key's stored response.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, errorBody, errors } from '../lib/errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** 1–255 printable ASCII characters (the OpenAPI document states this very pattern). */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a request waits for a concurrent one with the same key to finish. */
const WAIT_FOR_FIRST_MS = 15_000;
/**
 * A claim still without an answer this long after it was made belongs to a request that will
 * never finish: its API process died, or Postgres went away so the failed request could not
 * release the key either (the chaos test, test/cluster/chaos.ts). It is then forgotten and the
 * retry runs. Far longer than a create takes (the Temporal call has a 5 s deadline; a concurrent
 * retry waits 15 s); were a live request ever that slow, its retry still cannot double a post —
 * the create checks for the same text on the same channel under the organization's lock
 * (duplicate_post) — so it costs one 409 at worst, where waiting 10 minutes cost every retry.
 */
const ABANDONED_AFTER_MS = 2 * 60 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
  location?: string;
}

/** Canonical JSON (sorted keys), so the same body in another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

interface Row {
  request_hash: string;
  status_code: number | null;
  response: unknown;
  location: string | null;
  created_at: Date;
}

/**
 * Runs `work` once per (API key, endpoint, key). Returns the response to send and whether
 * it is a replay. A 5xx (or any unexpected failure) is not stored: the client may retry with
 * the same key.
 */
export async function idempotent(
  em: EntityManager,
  scope: { organizationId: string; apiKeyId: string; endpoint: string; key: string | undefined; body: unknown; now: Date },
  work: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (scope.key === undefined) return { ...(await work()), replayed: false };
  if (!KEY_PATTERN.test(scope.key)) {
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }]);
  }
  const conn = em.getConnection();
  const ids = [scope.apiKeyId, scope.endpoint, scope.key];
  const hash = requestHash(scope.body);
  // A key older than 24 h is forgotten; so is a first request that never finished (its process
  // died) after 10 minutes.
  await conn.execute(
    `delete from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?
     and (created_at < ? or (status_code is null and created_at < ?))`,
    [...ids, new Date(scope.now.getTime() - IDEMPOTENCY_TTL_MS), new Date(scope.now.getTime() - ABANDONED_AFTER_MS)],
  );
  const claimed = await conn.execute<{ key: string }[]>(
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, created_at) values (?, ?, ?, ?, ?, ?)
     on conflict do nothing returning key`,
    [...ids, scope.organizationId, hash, scope.now],
  );
  if (claimed.length === 0) return { ...(await replay(em, ids, hash)), replayed: true };

  let stored: StoredResponse;
  try {
    stored = await work();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) {
      await save(em, ids, { status: err.status, body: errorBody(err.code, err.message, err.details) });
    } else {
      await conn.execute('delete from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?', ids);
    }
    throw err;
  }
  await save(em, ids, stored);
  return { ...stored, replayed: false };
}

async function save(em: EntityManager, ids: string[], r: StoredResponse): Promise<void> {
  await em
    .getConnection()
    .execute('update idempotency_keys set status_code = ?, response = ?, location = ? where api_key_id = ? and endpoint = ? and key = ?', [
      r.status,
      JSON.stringify(r.body),
      r.location ?? null,
      ...ids,
    ]);
}

async function replay(em: EntityManager, ids: string[], hash: string): Promise<StoredResponse> {
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const [row] = await em
      .getConnection()
      .execute<Row[]>(
        'select request_hash, status_code, response, location, created_at from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?',
        ids,
      );
    if (!row) throw errors.conflict('The first request with this Idempotency-Key failed; retry it.', { idempotencyKey: ids[2] });
    if (row.request_hash !== hash) {
      throw errors.conflict('This Idempotency-Key was already used with a different request body.', { idempotencyKey: ids[2] });
    }
    if (row.status_code !== null) {
      const body = typeof row.response === 'string' ? JSON.parse(row.response) : row.response;
      return { status: row.status_code, body, location: row.location ?? undefined };
    }
    if (Date.now() > deadline) {
      throw errors.conflict('A request with this Idempotency-Key is still being processed; retry shortly.', { idempotencyKey: ids[2] });
    }
    await Bun.sleep(50);
  }
}
