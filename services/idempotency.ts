// Idempotency-Key (DESIGN.md §3): the same key with the same body within 24 h returns the first
// response (same ids, same status code) without doing anything again; the same key with another
// body → 409 conflict; concurrent requests with one key do the work exactly once. Keys are per
// API key: another key of the organization (maybe limited to other channels) sending the same
// Idempotency-Key makes an independent request and never sees this key's stored response.
//
// Two ways to hold a key, one store. A create whose row commits in a transaction of its own
// (POST /v1/posts, POST /v1/series: createOnce) claims the key inside that transaction
// (domain/idempotency-claim.ts), so the claim exists if and only if the row does. An upload
// (idempotent) claims the key before its work and stores the answer after it.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.ts';
import {
  CLAIMED_BY,
  type ClaimingTable,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyClaim,
  KeyAlreadyClaimed,
} from '../domain/idempotency-claim.ts';
import { ApiError, errorBody, errors } from '../lib/errors.ts';

export { IDEMPOTENCY_TTL_MS };
/** 1–255 printable ASCII characters (the OpenAPI document states this very pattern). */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a request waits for a concurrent one with the same key to finish. */
const WAIT_FOR_FIRST_MS = 15_000;
/**
 * A claim made before its work (an upload) still without an answer this long after it was made
 * belongs to a request that will never finish: its API process died, or Postgres went away so
 * the failed request could not release the key either. It is then forgotten and the retry runs.
 * Far longer than an upload request takes (the Temporal call has a 5 s deadline; a concurrent
 * retry waits 15 s). Claims made in a create's own transaction never need it: they exist only
 * with their row.
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
  /** The row a create claimed the key with (its table's CLAIMED_BY column), or null. */
  claimed_table: ClaimingTable | null;
  claimed_id: string | null;
  created_at: Date;
}

/** Which CLAIMED_BY column names a row, and its id, as SQL over idempotency_keys' columns. */
const CLAIMED = Object.entries(CLAIMED_BY)
  .map(([table, column]) => `when ${column} is not null then '${table}'`)
  .join(' ');
const CLAIMED_ID = `coalesce(${Object.values(CLAIMED_BY).join(', ')})`;

export interface IdempotencyScope {
  organizationId: string;
  apiKeyId: string;
  endpoint: string;
  key: string | undefined;
  body: unknown;
  now: Date;
}

function checkKey(key: string): void {
  if (!KEY_PATTERN.test(key))
    throw errors.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }]);
}

/**
 * A create that claims its key in its own transaction. `create` gets the claim (undefined without
 * a key) and returns the new row's id; `answer` builds the 201 for an id. A repeat of a create
 * that committed answers with that row, stored answer or not: a create cut off after its commit
 * keeps its 201. A create cut off before its commit left no claim, so its key is free at once.
 * A refusal (4xx) is stored and repeated; a 5xx is not (the client retries with the same key).
 */
async function idempotentCreate(
  em: EntityManager,
  scope: IdempotencyScope,
  create: (claim: IdempotencyClaim | undefined) => Promise<string>,
  answer: (id: string) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (scope.key === undefined) return { ...(await answer(await create(undefined))), replayed: false };
  checkKey(scope.key);
  const claim: IdempotencyClaim = {
    organizationId: scope.organizationId,
    apiKeyId: scope.apiKeyId,
    endpoint: scope.endpoint,
    key: scope.key,
    requestHash: requestHash(scope.body),
    now: scope.now,
  };
  const ids = [claim.apiKeyId, claim.endpoint, claim.key];
  await forgetExpired(em, ids, scope.now);
  const earlier = await answerEarlier(em, ids, claim.requestHash, answer);
  if (earlier) return { ...earlier, replayed: true };
  let id: string;
  try {
    id = await create(claim);
  } catch (err) {
    if (err instanceof KeyAlreadyClaimed) {
      // A request with this key committed while this one was checking: answer as it does.
      const first = await answerEarlier(em, ids, claim.requestHash, answer);
      if (first) return { ...first, replayed: true };
      throw errors.conflict('The first request with this Idempotency-Key failed; retry it.', { idempotencyKey: claim.key });
    }
    if (err instanceof ApiError && err.status < 500) {
      await sql(
        em.fork(),
        `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, status_code, response, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
        [
          ...ids,
          claim.organizationId,
          claim.requestHash,
          err.status,
          JSON.stringify(errorBody(err.code, err.message, err.details)),
          scope.now,
        ],
      );
    }
    throw err;
  }
  const stored = await answer(id);
  await save(em, ids, stored);
  return { ...stored, replayed: false };
}

/** The creates whose key is claimed in their own transaction (domain/idempotency-claim.ts); a reply's names its comment, a draft's schedule its draft. */
export type CreateEndpoint =
  | 'POST /v1/posts'
  | 'POST /v1/series'
  | `POST /v1/comments/${string}/reply`
  | `POST /v1/drafts/${string}/schedule`;

/**
 * A create answered once per (API key, Idempotency-Key): 201 with the row's view and its Location,
 * or the answer of the first request with the key — the same row, even when that request was
 * cut off after its commit. Shared by every such create (API routes and MCP tools).
 */
export function createOnce(
  em: EntityManager,
  who: { organization: { id: string }; key: { id: string }; now: Date },
  endpoint: CreateEndpoint,
  request: { body: unknown; idempotencyKey: string | undefined },
  /** The new row's id, or its id and its view as written (the 201 body without reading the row back). */
  create: (claim: IdempotencyClaim | undefined) => Promise<string | { id: string; view: () => Promise<unknown> }>,
  /** The row's view as stored: the answer to a retry of a request cut off after its commit. */
  view: (id: string) => Promise<unknown>,
  /** The answer's status and Location (a reply: 202, its outcome follows; a draft scheduled: the post's path). Default: 201 at the endpoint's path and the id. */
  placed?: { status: 201 | 202; location: (id: string) => string },
): Promise<StoredResponse & { replayed: boolean }> {
  let written: { id: string; view: () => Promise<unknown> } | undefined;
  const scope = {
    organizationId: who.organization.id,
    apiKeyId: who.key.id,
    endpoint,
    key: request.idempotencyKey,
    body: request.body,
    now: who.now,
  };
  const createRow = async (claim: IdempotencyClaim | undefined) => {
    const created = await create(claim);
    if (typeof created === 'string') return created;
    written = created;
    return created.id;
  };
  return idempotentCreate(em, scope, createRow, async (id) => ({
    status: placed?.status ?? 201,
    body: written?.id === id ? await written.view() : await view(id),
    location: placed ? placed.location(id) : `${endpoint.slice('POST '.length)}/${id}`,
  }));
}

/**
 * The answer of an earlier request with this key, or undefined when there is none (or it expired).
 * A claim naming a row still being started (workflow_pending) is waited for a while, so a live
 * first request that withdraws its post after a failed start is not answered 201 here; a row
 * whose request died is answered once the wait is over (the reconciler starts it).
 */
async function answerEarlier(
  em: EntityManager,
  ids: string[],
  hash: string,
  answer: (id: string) => Promise<StoredResponse>,
): Promise<StoredResponse | undefined> {
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  for (;;) {
    const [row] = await sql<Row>(
      em.fork(),
      `select request_hash, status_code, response, location, case ${CLAIMED} end as claimed_table, ${CLAIMED_ID} as claimed_id, created_at
       from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?`,
      ids,
    );
    if (!row) return undefined;
    if (row.request_hash !== hash) {
      throw errors.conflict('This Idempotency-Key was already used with a different request body.', { idempotencyKey: ids[2] });
    }
    if (row.status_code !== null) return storedOf(row);
    const created = row.claimed_id;
    const table = row.claimed_table;
    if (created !== null && table !== null) {
      const [found] = await sql<{ workflow_pending: boolean }>(em.fork(), `select workflow_pending from ${table} where id = ?`, [created]);
      if (found && (!found.workflow_pending || Date.now() > deadline)) {
        const stored = await answer(created);
        await save(em, ids, stored);
        return stored;
      }
    } else if (Date.now() > deadline) {
      throw errors.conflict('A request with this Idempotency-Key is still being processed; retry shortly.', { idempotencyKey: ids[2] });
    }
    await Bun.sleep(50);
  }
}

/** A claim that names no created row (every CLAIMED_BY column null): one made before its work. */
const NAMES_NO_ROW = Object.values(CLAIMED_BY)
  .map((column) => `${column} is null`)
  .join(' and ');

/**
 * A key older than 24 h is forgotten; so is a claim made before its work that never got an answer
 * (its process died). A claim naming its row (a post, a series) without an answer belongs to a
 * create cut off after its commit: it is kept its 24 h like any other, so its retry answers with
 * that row instead of creating a second.
 */
async function forgetExpired(em: EntityManager, ids: string[], now: Date): Promise<void> {
  await sql(
    em.fork(),
    `delete from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?
     and (created_at < ? or (status_code is null and ${NAMES_NO_ROW} and created_at < ?))`,
    [...ids, new Date(now.getTime() - IDEMPOTENCY_TTL_MS), new Date(now.getTime() - ABANDONED_AFTER_MS)],
  );
}

function storedOf(row: Row): StoredResponse {
  const body = typeof row.response === 'string' ? JSON.parse(row.response) : row.response;
  return { status: row.status_code!, body, location: row.location ?? undefined };
}

/**
 * Runs `work` once per (API key, endpoint, key). Returns the response to send and whether
 * it is a replay. A 5xx (or any unexpected failure) is not stored: the client may retry with
 * the same key.
 */
export async function idempotent(
  em: EntityManager,
  scope: IdempotencyScope,
  work: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (scope.key === undefined) return { ...(await work()), replayed: false };
  checkKey(scope.key);
  const ids = [scope.apiKeyId, scope.endpoint, scope.key];
  const hash = requestHash(scope.body);
  await forgetExpired(em, ids, scope.now);
  const claimed = await sql<{ key: string }>(
    em,
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, created_at) values (?, ?, ?, ?, ?, ?)
     on conflict do nothing returning key`,
    [...ids, scope.organizationId, hash, scope.now],
  );
  if (claimed.length === 0) {
    const first = await answerEarlier(em, ids, hash, () => Promise.reject(new Error('this endpoint claims no row')));
    if (first) return { ...first, replayed: true };
    throw errors.conflict('The first request with this Idempotency-Key failed; retry it.', { idempotencyKey: scope.key });
  }

  let stored: StoredResponse;
  try {
    stored = await work();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) {
      await save(em, ids, { status: err.status, body: errorBody(err.code, err.message, err.details) });
    } else {
      await sql(em, 'delete from idempotency_keys where api_key_id = ? and endpoint = ? and key = ?', ids);
    }
    throw err;
  }
  await save(em, ids, stored);
  return { ...stored, replayed: false };
}

/**
 * Stores the answer of a request claimed by `idempotent` inside the transaction of its change, so
 * the two commit together (POST /v1/posts/bulk, all or nothing). Without a key: nothing.
 */
export async function storeAnswer(tx: EntityManager, scope: IdempotencyScope, r: StoredResponse): Promise<void> {
  if (scope.key === undefined) return;
  await save(tx, [scope.apiKeyId, scope.endpoint, scope.key], r);
}

async function save(em: EntityManager, ids: string[], r: StoredResponse): Promise<void> {
  await sql(
    em,
    'update idempotency_keys set status_code = ?, response = ?, location = ? where api_key_id = ? and endpoint = ? and key = ?',
    [r.status, JSON.stringify(r.body), r.location ?? null, ...ids],
  );
}
