// An Idempotency-Key claimed inside the transaction that commits what the request creates (a
// post, a series; services/idempotency.ts answers with it). The claim and the created row commit
// together: a create cut off after its commit leaves a claim naming its row, so the retry answers
// 201 with that row; a create cut off before its commit leaves no claim, so the key is free at
// once; a withdrawn row takes its claim with it (foreign key, on delete cascade).
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.ts';

/** Idempotency-Keys are kept this long (DESIGN.md §3). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** The tables whose creates claim their key in their own transaction, and the claim's column naming the row. */
export const CLAIMED_BY = { posts: 'post_id', series: 'series_id', comment_replies: 'reply_id' } as const;
export type ClaimingTable = keyof typeof CLAIMED_BY;

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

/** Refuses a key claimed already, before the create writes anything; the expired claim of an earlier day is forgotten first. */
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

/**
 * The claim, naming the row written in the same transaction (after it, for the foreign key). A
 * concurrent create with the same key that committed first wins: this one throws
 * KeyAlreadyClaimed, and its transaction (its row) is rolled back.
 */
export async function recordClaim(tx: EntityManager, c: IdempotencyClaim, created: { table: ClaimingTable; id: string }): Promise<void> {
  const claimed = await sql<{ key: string }>(
    tx,
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, ${CLAIMED_BY[created.table]}, created_at)
     values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning key`,
    [c.apiKeyId, c.endpoint, c.key, c.organizationId, c.requestHash, created.id, c.now],
  );
  if (!claimed.length) throw new KeyAlreadyClaimed(c.key);
}
