// An Idempotency-Key claimed inside the transaction that commits what the request creates
// (services/idempotency.ts answers with it). The claim and the created row commit together: a
// create cut off after its commit leaves a claim naming its post, so the retry answers 201 with
// that post; a create cut off before its commit leaves no claim, so the key is free at once; a
// withdrawn post takes its claim with it (foreign key, on delete cascade).
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.ts';

/** Idempotency-Keys are kept this long (DESIGN.md §3). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Which request: per API key, endpoint and key; with the hash of its body. */
export interface IdempotencyClaim {
  organizationId: string;
  apiKeyId: string;
  endpoint: string;
  key: string;
  requestHash: string;
  now: Date;
}

/** Thrown by a create whose key another request has claimed meanwhile: the caller answers as that request did. */
export class KeyAlreadyClaimed extends Error {
  override name = 'KeyAlreadyClaimed';
}

/**
 * In the create's transaction, under the organization's lock (every create of the key's
 * organization takes it, so no other claim of this key can land between the check and the insert):
 * refuses a key claimed already; the expired claim of an earlier day is forgotten first.
 */
export async function assertKeyUnclaimed(tx: EntityManager, c: IdempotencyClaim): Promise<void> {
  const [row] = await sql<{ expired: boolean }>(
    tx,
    'select created_at < ? as expired from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?',
    [new Date(c.now.getTime() - IDEMPOTENCY_TTL_MS), c.apiKeyId, c.endpoint, c.key],
  );
  if (!row) return;
  if (!row.expired) throw new KeyAlreadyClaimed(c.key);
  await sql(tx, 'delete from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?', [c.apiKeyId, c.endpoint, c.key]);
}

/** The claim, naming the post written in the same transaction (after it, for the foreign key). */
export async function recordClaim(tx: EntityManager, c: IdempotencyClaim, postId: string): Promise<void> {
  await sql(
    tx,
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, post_id, created_at)
     values (?, ?, ?, ?, ?, ?, ?)`,
    [c.apiKeyId, c.endpoint, c.key, c.organizationId, c.requestHash, postId, c.now],
  );
}
