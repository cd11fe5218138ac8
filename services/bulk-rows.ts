// A batch's rows with drafts among them (an import that asks for drafts: domain/posts/csv.ts):
// the drafts checked as a draft's create checks them, the posts created by the one batch create
// (domain/posts/bulk.ts), and the drafts written in the posts' transaction in mode all_or_nothing
// (with the posts or not at all), or on their own. The API's import (services/post-csv.ts, through
// createPostsInBulkOnce) and the web app's import page (web/csv-import-rows.ts) both go through it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../db/entities/post.ts';
import { IDEMPOTENCY_TTL_MS } from '../domain/idempotency-claim.ts';
import { type BulkMode, type BulkRowIds, type BulkRowResult, CHECKS_AT_ONCE, createPostsInBulk, inTurns } from '../domain/posts/bulk.ts';
import type { CreatePostRequest } from '../domain/posts/create.ts';
import { type CheckedDraft, checkDraft, type DraftInput, type DraftView, getDraft, insertDraft } from '../domain/posts/drafts.ts';
import type { KeyChannels } from '../domain/key-channels.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { ApiError } from '../lib/errors.ts';
import type { NewPostBody } from './post-requests.ts';

/** An import's row kept as a draft (a row without a time, when asked). */
export interface DraftRow {
  draft: DraftInput;
}

/** A batch's rows; an import's may be refusals already (a row's cells that cannot be read), or drafts. */
export type BulkRows = (NewPostBody | DraftRow | ApiError)[];

export const isDraftRow = (row: BulkRows[number]): row is DraftRow => !(row instanceof ApiError) && 'draft' in row;

/** A row's outcome: a post (or its refusal) from the batch, or a draft written. */
export type RowOutcome = BulkRowResult | { index: number; draft: DraftView };

/** Who writes the batch's drafts, and which channels they may name. */
export interface DraftWriter {
  organizationId: string;
  keyChannels: KeyChannels;
  actor: Actor;
  now: Date;
}

/** A batch's requests: each row's, or its refusal (a row refused already, or one whose fields contradict each other). */
export function bulkRequests(
  posts: (NewPostBody | ApiError)[],
  requestOf: (body: NewPostBody) => CreatePostRequest,
): (CreatePostRequest | ApiError)[] {
  return posts.map((row) => {
    if (row instanceof ApiError) return row;
    try {
      return requestOf(row);
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
  });
}

/**
 * The draft of a batch's row: under the row's fixed id when it has one (an Idempotency-Key: the
 * draft the first attempt wrote, unless the key has been forgotten since), else a new one.
 */
async function writeRowDraft(em: EntityManager, by: DraftWriter, d: CheckedDraft, fixedId: string | undefined): Promise<DraftView> {
  if (fixedId) {
    const written = await insertDraft(em, by, d, fixedId);
    if (written) return written;
    const earlier = await getDraft(em, by.organizationId, fixedId, 'all');
    if (new Date(earlier.createdAt).getTime() >= by.now.getTime() - IDEMPOTENCY_TTL_MS) return earlier;
  }
  return (await insertDraft(em, by, d))!;
}

const notCreated = (index: number): RowOutcome => ({
  index,
  error: new ApiError('conflict', 'Not created: another row of the batch was refused (mode all_or_nothing).', {
    details: { notCreated: true },
  }),
});

/**
 * Every row of a batch, in its order: each post created (or refused) by createPostsInBulk, each
 * draft written. `beforeCommit` runs in the transaction that writes the rows in mode
 * all_or_nothing, once all are written (the caller stores its answer there); `fixed` gives a
 * row's post and draft ids for a batch sent with an Idempotency-Key.
 */
export async function createRowsInBulk(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined },
  rows: BulkRows,
  mode: BulkMode,
  o: {
    requestOf: (body: NewPostBody) => CreatePostRequest;
    drafts: DraftWriter;
    beforeCommit?: (tx: EntityManager, outcomes: RowOutcome[]) => Promise<void>;
    fixed?: { organizationId: string; postIdOf(index: number): string; draftIdOf(index: number): string };
  },
): Promise<RowOutcome[]> {
  // Drafts are checked first, as a draft's create checks them; one refused stays a refusal among the posts' rows.
  const checkedDrafts = new Map<number, CheckedDraft>();
  const given = await inTurns(rows, CHECKS_AT_ONCE, async (row, index) => {
    if (!isDraftRow(row)) return row;
    try {
      checkedDrafts.set(index, await checkDraft(deps.em.fork(), o.drafts, row.draft));
      return null;
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return err;
      throw err;
    }
  });
  // The rows the posts' batch takes, each at its place in the whole.
  const postIndex = given.flatMap((row, index) => (row === null ? [] : [index]));
  const placeOf = new Map(postIndex.map((index, j) => [index, j]));
  const requests = bulkRequests(
    postIndex.map((i) => given[i] as NewPostBody | ApiError),
    o.requestOf,
  );
  const rowIds: BulkRowIds | undefined = o.fixed && {
    organizationId: o.fixed.organizationId,
    postIdOf: (j) => o.fixed!.postIdOf(postIndex[j]!),
  };
  const drafts = new Map<number, DraftView>();
  const writeDrafts = async (em: EntityManager) => {
    drafts.clear();
    for (const [index, d] of checkedDrafts) drafts.set(index, await writeRowDraft(em, o.drafts, d, o.fixed?.draftIdOf(index)));
  };
  const whole = (posts: BulkRowResult[]): RowOutcome[] =>
    given.map((_, index): RowOutcome => {
      const j = placeOf.get(index);
      if (j !== undefined) return { ...posts[j]!, index };
      const draft = drafts.get(index);
      return draft ? { index, draft } : notCreated(index);
    });
  const posts = await createPostsInBulk(
    deps.em,
    deps.temporal,
    requests,
    mode,
    async (tx, written) => {
      await writeDrafts(tx);
      await o.beforeCommit?.(tx, whole(written));
    },
    rowIds,
  );
  // No post row was written (none given, or all or nothing with one refused): the drafts go
  // alone, in a transaction of their own, unless a refusal stops the whole batch.
  const refused = posts.some((r) => 'error' in r);
  const postsWritten = posts.some((r) => 'created' in r);
  if (checkedDrafts.size && !drafts.size && (mode === 'each' || (!refused && !postsWritten))) {
    await deps.em.fork().transactional(async (tx) => {
      await writeDrafts(tx);
      if (mode === 'all_or_nothing') await o.beforeCommit?.(tx, whole(posts));
    });
  }
  return whole(posts);
}
