// Many posts in one request (POST /v1/posts/bulk).
//
// Rules:
// - Each row is exactly what POST /v1/posts takes, checked by the same code (checkNewPost, then
//   insertInSavepoint under the organization's lock), so a row is refused with the code and the
//   field paths a single create would give; the paths are prefixed with `posts.<index>.`.
// - The rows are decided in their order, as if created one after another: the plan's limit of
//   pending posts, duplicate_post (a row and an earlier row of the batch too) and queue slots
//   count the rows before. Each row is written in a savepoint: a row refused after some of its
//   writes (a queue slot, its rows) takes them all back, in both modes.
// - mode `all_or_nothing`: every row is checked and written in one transaction; one refused row
//   rolls all of it back and nothing is created. A row refused by its own checks (invalid) does not
//   stop the others' checks under the lock, so the answer lists every refused row, duplicate_post
//   and the plan's limit included.
//   mode `each`: the rows that pass are created, through the create path's group commit (in order,
//   up to 16 a transaction); each refused row is answered with its error.
// - Workflows start after the commit, as for a single create. A start that fails leaves its post
//   committed and marked, and the start reconciler starts it within seconds: a post of a batch is
//   never taken back after others were created.
// - A batch sent with an Idempotency-Key gives each row a fixed post id (bulkRowPostId: the API
//   key, the Idempotency-Key, the request's hash, the row's index). In mode `each` a retry of a
//   batch cut off midway meets the rows it made: a row whose post exists (made within the key's
//   24 h) is answered as created with that post, queued rows included, and never created twice;
//   a post still marked for its start is started. All or nothing needs no such ids: its rows and
//   its answer commit together.
// - At most BULK_MAX_ROWS rows.
import { createHash } from 'node:crypto';
import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { ApiError } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { sql } from '../../db/sql.ts';
import { IDEMPOTENCY_TTL_MS } from '../idempotency-claim.ts';
import { startAfterCommit } from '../workflow-starts.ts';
import type { TemporalDeps } from '../temporal-calls.ts';
import {
  checkNewPost,
  createdOf,
  insertInSavepoint,
  insertPost,
  startRowOf,
  type CreatedPost,
  type CreatePostRequest,
  type NewPost,
  type WrittenPost,
} from './create.ts';
import { POST_STARTS, type PostStartRow } from './workflow-start.ts';
import { getPostForKey } from './view.ts';

export const BULK_MAX_ROWS = 500;
/** The largest body of a batch: 500 rows of a few kilobytes each. */
export const BULK_MAX_BODY_BYTES = 8 * 1024 * 1024;
export const BULK_MODES = ['all_or_nothing', 'each'] as const;
export type BulkMode = (typeof BULK_MODES)[number];

/** One row's outcome: the post created, or why not. */
export type BulkRowResult = { index: number; created: CreatedPost } | { index: number; error: ApiError };

/** Checks at once, not more: each takes a pool connection for its reads. */
export const CHECKS_AT_ONCE = 8;
/** Workflow starts at once after the commit. */
const STARTS_AT_ONCE = 16;

/** Runs `fn` over the items, at most `limit` at a time, keeping their order. */
export async function inTurns<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** A refusal to answer for its row; anything else (a lost connection) fails the whole request. */
function refusalOf(err: unknown): ApiError {
  if (err instanceof ApiError && err.status < 500) return err;
  throw err;
}

/**
 * The post id of row `index` of a batch sent with an Idempotency-Key: the same for a retry of
 * that batch (same API key, key and body), so the retry meets the post the row made.
 */
export function bulkRowPostId(
  request: { apiKeyId: string; endpoint: string; idempotencyKey: string; requestHash: string },
  index: number,
): string {
  const batch = createHash('sha256')
    .update([request.apiKeyId, request.endpoint, request.idempotencyKey, request.requestHash].join('\u0000'))
    .digest('hex')
    .slice(0, 26);
  return `post_b${batch}_${index}`;
}

/** A batch's fixed post ids (bulkRowPostId), for the organization they belong to. */
export interface BulkRowIds {
  organizationId: string;
  postIdOf(index: number): string;
}

/** The rows of a batch whose posts an earlier request with its key made: each row's post, or its refusal (deleted since). */
async function rowsMadeEarlier(
  em: EntityManager,
  temporal: TemporalDeps,
  ids: BulkRowIds,
  count: number,
  now: Date,
): Promise<{ made: Map<number, CreatedPost | ApiError>; stale: Set<number> }> {
  const byId = new Map(Array.from({ length: count }, (_, i) => [ids.postIdOf(i), i]));
  const found = await sql<PostStartRow & { workflow_pending: boolean; fresh: boolean }>(
    em.fork(),
    `select ${POST_STARTS.columns}, workflow_pending, created_at >= ? as fresh from posts where id in (?) and organization_id = ?`,
    [new Date(now.getTime() - IDEMPOTENCY_TTL_MS), [...byId.keys()], ids.organizationId],
  );
  const made = new Map<number, CreatedPost | ApiError>();
  // A post made with this key more than 24 h ago: the key is forgotten, the row is created anew under another id.
  const stale = new Set<number>();
  for (const row of found) {
    const index = byId.get(row.id)!;
    if (!row.fresh) {
      stale.add(index);
      continue;
    }
    if (row.deleted_at !== null) {
      made.set(
        index,
        new ApiError(
          'conflict',
          'This row was created by an earlier request with this Idempotency-Key; that post has been deleted since.',
          {
            details: { postId: row.id },
          },
        ),
      );
      continue;
    }
    made.set(index, { id: row.id, view: (storage) => getPostForKey(em.fork(), ids.organizationId, row.id, 'all', storage) });
  }
  // Made, but its request was cut off before the start: started now (the workflow id makes a second start a no-op).
  const kept = { ...POST_STARTS, withdraw: undefined };
  await inTurns(
    found.filter((r) => r.fresh && r.workflow_pending),
    STARTS_AT_ONCE,
    (r) => startAfterCommit(em, temporal, kept, r, { withdrawn: '', kept: '' }),
  );
  return { made, stale };
}

/** Thrown inside the all-or-nothing transaction to roll it back once a row is refused. */
class RowsRefused extends Error {}

export async function createPostsInBulk(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  /** Each row's request, or the refusal its caller already found (a row whose fields contradict each other). */
  requests: (CreatePostRequest | ApiError)[],
  mode: BulkMode,
  /**
   * All or nothing: runs in the transaction that writes the rows, once every row is written, with
   * their results (the caller stores its answer for the Idempotency-Key there, so the answer
   * commits with the rows).
   */
  beforeCommit?: (tx: EntityManager, results: BulkRowResult[]) => Promise<void>,
  /** Mode `each` with an Idempotency-Key: each row's fixed post id, so a retry meets the posts made before. */
  rowIds?: BulkRowIds,
): Promise<BulkRowResult[]> {
  // 0. A retry of a batch cut off midway: the rows whose posts the earlier request made are answered with them.
  const fixed = mode === 'each' && rowIds && temporal ? rowIds : undefined;
  const earlier = fixed
    ? await rowsMadeEarlier(
        em,
        temporal!,
        fixed,
        requests.length,
        requests.find((r): r is CreatePostRequest => !(r instanceof ApiError))?.now ?? new Date(),
      )
    : { made: new Map<number, CreatedPost | ApiError>(), stale: new Set<number>() };
  const postIdOf = (i: number) => (fixed && !earlier.stale.has(i) ? fixed.postIdOf(i) : newId('post'));
  // 1. The checks that need no lock, row by row (a few at a time).
  const checked = await inTurns(requests, CHECKS_AT_ONCE, async (r, i) => {
    if (earlier.made.has(i)) return null;
    if (r instanceof ApiError) return r;
    try {
      return await checkNewPost(em.fork(), r, []);
    } catch (err) {
      return refusalOf(err);
    }
  });
  const refused = new Map<number, ApiError>();
  const madeBefore = new Map<number, CreatedPost>();
  for (const [i, m] of earlier.made) {
    if (m instanceof ApiError) refused.set(i, m);
    else madeBefore.set(i, m);
  }
  checked.forEach((c, i) => {
    if (c instanceof ApiError) refused.set(i, c);
  });
  if (!temporal) throw new Error('Temporal is not configured');

  // 2. The rows, under the organization's lock.
  const rows = checked.map((c, i) => (c === null || c instanceof ApiError ? null : { index: i, p: c, postId: postIdOf(i) }));
  const written = new Map<number, Written>();
  if (mode === 'all_or_nothing') {
    // A row refused by its checks does not stop the others': they are still checked under the
    // lock (duplicate_post, the plan's limit), so the answer names every refused row; the
    // transaction is then rolled back and nothing is created.
    const invalid = new Map(refused);
    const first = rows.find((r) => r);
    if (!first) return results(requests.length, refused, new Map());
    try {
      await em.fork().transactional(async (tx) => {
        written.clear();
        refused.clear();
        for (const [i, err] of invalid) refused.set(i, err);
        await sql(tx, 'select pg_advisory_xact_lock(hashtext(?))', [first.p.organizationId]);
        for (const row of rows) {
          if (!row) continue;
          try {
            // In a savepoint, as a single create: a refused row leaves nothing for the rows after it to count.
            written.set(row.index, { p: row.p, rows: await insertInSavepoint(tx, row.p, row.postId) });
          } catch (err) {
            refused.set(row.index, refusalOf(err));
          }
        }
        if (refused.size) throw new RowsRefused();
        if (beforeCommit) await beforeCommit(tx, results(requests.length, refused, createdMap(written)));
      });
    } catch (err) {
      if (!(err instanceof RowsRefused)) throw err;
      return results(requests.length, refused, new Map());
    }
  } else {
    await Promise.all(
      rows.map(async (row) => {
        if (!row) return;
        try {
          written.set(row.index, { p: row.p, rows: await insertPost(em, row.p, row.postId) });
        } catch (err) {
          // The earlier request with this key, still running, wrote this row meanwhile: it is that post.
          if (fixed && err instanceof UniqueConstraintViolationException) {
            const id = row.postId;
            madeBefore.set(row.index, { id, view: (storage) => getPostForKey(em.fork(), fixed.organizationId, id, 'all', storage) });
            return;
          }
          refused.set(row.index, refusalOf(err));
        }
      }),
    );
  }

  // 3. Their workflows, after the commit. No withdrawal: a post whose start fails stays marked for the reconciler.
  const kept = { ...POST_STARTS, withdraw: undefined };
  await inTurns([...written.values()], STARTS_AT_ONCE, (w) =>
    startAfterCommit(em, temporal, kept, startRowOf(w.p, w.rows.post.id), { withdrawn: '', kept: '' }),
  );
  return results(requests.length, refused, new Map([...madeBefore, ...createdMap(written)]));
}

const createdMap = (written: Map<number, Written>) => new Map([...written].map(([i, w]) => [i, createdOf(w.p, w.rows)]));

/** A row written, with what was checked of it. */
interface Written {
  p: NewPost;
  rows: WrittenPost;
}

function results(count: number, refused: Map<number, ApiError>, created: Map<number, CreatedPost>): BulkRowResult[] {
  return Array.from({ length: count }, (_, index) => {
    const error = refused.get(index);
    if (error) return { index, error };
    const post = created.get(index);
    if (post) return { index, created: post };
    // All or nothing, another row refused: this one was fine but is not created.
    return {
      index,
      error: new ApiError('conflict', 'Not created: another row of the batch was refused (mode all_or_nothing).', {
        details: { notCreated: true },
      }),
    };
  });
}
