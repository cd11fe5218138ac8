// What the API's post routes and the MCP tools share: the request createPost and validatePost
// take, made from the body they accept (newPostRequest: the web app's CSV import too, with source
// app); the create answered once per Idempotency-Key (the same stored answer whichever of the two
// repeats it); and an edit by an API key.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, errorBody, errors, type ErrorBody, type FieldError } from '../lib/errors.ts';
import type { ObjectStorage } from '../storage/types.ts';
import type { Caller } from './account.ts';
import { createOnce, idempotent, requestHash, storeAnswer, type StoredResponse } from './idempotency.ts';
import { bulkRowPostId, type BulkMode } from '../domain/posts/bulk.ts';
import { seededId } from '../lib/ids.ts';
import { type BulkRows, createRowsInBulk, type RowOutcome } from './bulk-rows.ts';
import { createPost, type CreatePostRequest } from '../domain/posts/create.ts';
import { type EditRequest, onlyTags, retagPost, validateAndEditPost } from '../domain/posts/edit.ts';
import { parsePublishAt } from '../domain/posts/checks.ts';
import { assertEditable, getPostForKey, type PostView } from '../domain/posts/view.ts';
import type { TemporalDeps } from '../domain/temporal-calls.ts';
import { threadInputOf } from '../domain/posts/thread.ts';
import { keyRequester, type Requester } from '../domain/posts/approval.ts';
import { contentOf, type ContentBody } from '../domain/posts/content.ts';
import type { CapabilityDeps } from '../domain/capabilities.ts';
import type { IdempotencyClaim } from '../domain/idempotency-claim.ts';

/** The body of a new post, as the API and the MCP tools take it (their schemas check its shape): its content (domain/posts/content.ts), where and when, its tags. */
export type NewPostBody = ContentBody & { channelIds: string[]; publishAt?: string; queue?: boolean; tagIds?: string[] };

type Who = Pick<Caller, 'organization' | 'key' | 'channels' | 'now'>;

/** Who makes a post and from where: an API key (the API, the MCP tools), or a member in the web app (source `app`, no key). */
export interface PostOrigin {
  organization: CreatePostRequest['organization'];
  source: CreatePostRequest['source'];
  key: CreatePostRequest['key'];
  now: Date;
}

/**
 * `capabilities`: reads what each channel's account can do now, to check the options against it.
 * `requester`: who makes it, for approval (absent for a validation, which approves nothing).
 */
export function createPostRequest(who: Who, body: NewPostBody, capabilities?: CapabilityDeps, requester?: Requester): CreatePostRequest {
  const origin = {
    organization: who.organization,
    source: 'api' as const,
    key: { apiKeyId: who.key.id, channels: who.channels },
    now: who.now,
  };
  return newPostRequest(origin, body, capabilities, requester);
}

/** The request of a body, from any origin (createPostRequest for an API key). */
export function newPostRequest(
  origin: PostOrigin,
  body: NewPostBody,
  capabilities?: CapabilityDeps,
  requester?: Requester,
): CreatePostRequest {
  if (body.queue && body.publishAt !== undefined) {
    throw errors.validation([{ path: 'queue', message: 'cannot be combined with publishAt: the queue chooses the time' }]);
  }
  return {
    organization: origin.organization,
    source: origin.source,
    key: origin.key,
    channelIds: body.channelIds,
    content: body.content,
    contentByPlatform: body.contentByPlatform ?? {},
    reddit: body.reddit ?? null,
    mediaIds: body.mediaIds ?? [],
    publishAt: body.publishAt ?? null,
    now: origin.now,
    queue: body.queue === true,
    followUps: threadInputOf(body),
    options: body.options ?? {},
    given: contentOf(body),
    tagIds: body.tagIds,
    capabilities,
    requester,
  };
}

/**
 * Creates the post once per (API key, Idempotency-Key): 201 with the post, or the answer of the
 * first request — the same post, even when that request was cut off after its commit.
 */
export async function createPostOnce(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined; storage: ObjectStorage | undefined; capabilities?: CapabilityDeps },
  who: Who,
  body: NewPostBody,
  idempotencyKey: string | undefined,
): Promise<StoredResponse & { replayed: boolean }> {
  return createOnce(
    deps.em,
    who,
    'POST /v1/posts',
    { body, idempotencyKey },
    (claim) => createPostFor(deps, who, body, claim),
    (id) => getPostForKey(deps.em.fork(), who.organization.id, id, 'all', deps.storage),
  );
}

/** An API key's post made from a body, its key claimed in the post's transaction: its id and its view as written. */
export async function createPostFor(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined; storage: ObjectStorage | undefined; capabilities?: CapabilityDeps },
  who: Who,
  body: NewPostBody,
  claim: IdempotencyClaim | undefined,
): Promise<{ id: string; view: () => Promise<PostView> }> {
  const requester = await keyRequester(deps.em, who.key.id);
  const created = await createPost(deps.em, deps.temporal, { ...createPostRequest(who, body, deps.capabilities, requester), claim });
  return { id: created.id, view: () => created.view(deps.storage) };
}

/**
 * A PATCH of a post by an API key: editable (scheduled), publishAt checked as on create; an edit of
 * its tags alone takes any post (domain/tags.ts). Returns the post as it is now.
 */
export async function editPostForKey(
  deps: { em: EntityManager; temporal: TemporalDeps; storage: ObjectStorage | undefined; capabilities?: CapabilityDeps },
  who: Who,
  postId: string,
  edit: Omit<EditRequest, 'publishAt'> & { publishAt?: string },
): Promise<PostView> {
  const current = await getPostForKey(deps.em, who.organization.id, postId, who.channels);
  if (onlyTags(edit)) {
    await retagPost(deps.em, who.organization.id, current.id, edit.tagIds!);
    return getPostForKey(deps.em.fork(), who.organization.id, postId, who.channels, deps.storage);
  }
  assertEditable(current);
  const fields: FieldError[] = [];
  const publishAt = edit.publishAt !== undefined ? parsePublishAt(edit.publishAt, who.now, fields) : undefined;
  if (fields.length) throw errors.validation(fields);
  const key = { apiKeyId: who.key.id, channels: who.channels };
  const requester = await keyRequester(deps.em, who.key.id);
  await validateAndEditPost(
    deps.em,
    deps.temporal,
    who.organization.id,
    current,
    { ...edit, publishAt },
    key,
    deps.capabilities,
    requester,
  );
  return getPostForKey(deps.em.fork(), who.organization.id, postId, who.channels, deps.storage);
}

/**
 * The body of POST /v1/posts/bulk. An import gives its rows as a function, called only once its
 * Idempotency-Key is claimed: a replay or a conflict reads no file and fetches no media URL.
 */
export interface BulkBody {
  mode?: BulkMode;
  posts: BulkRows | (() => Promise<BulkRows>);
}

/** A row's refusal as it is answered: its field paths prefixed with `posts.<index>.`. */
function rowError(index: number, err: ApiError): { index: number; status: number; error: ErrorBody['error'] } {
  const fields = err.details?.fields as FieldError[] | undefined;
  const details = fields
    ? { ...err.details, fields: fields.map((f) => ({ ...f, path: `posts.${index}${f.path ? `.${f.path}` : ''}` })) }
    : err.details;
  return { index, status: err.status, error: errorBody(err.code, err.message, details).error };
}

/**
 * Many posts in one request (domain/posts/bulk.ts), answered once per (API key, Idempotency-Key):
 * 200 with every row's outcome (each row's post, status 201, or its error); all_or_nothing
 * answers 422 naming each refused row when nothing was created. All or nothing stores its answer in the transaction
 * of its rows; `each` stores it once every row is decided (a retry after a crash in between finds
 * the rows already created refused as duplicates, never created twice).
 */
export async function createPostsInBulkOnce(
  deps: { em: EntityManager; temporal: TemporalDeps | undefined; storage: ObjectStorage | undefined; capabilities?: CapabilityDeps },
  who: Who,
  body: BulkBody,
  idempotencyKey: string | undefined,
  /** An import: its endpoint, and the request its Idempotency-Key is held to (the file). */
  as: { endpoint: string; request: unknown } = { endpoint: 'POST /v1/posts/bulk', request: body },
): Promise<StoredResponse & { replayed: boolean }> {
  const mode = body.mode ?? 'all_or_nothing';
  const scope = {
    organizationId: who.organization.id,
    apiKeyId: who.key.id,
    endpoint: as.endpoint,
    key: idempotencyKey,
    body: as.request,
    now: who.now,
  };
  const answerOf = async (results: RowOutcome[]): Promise<StoredResponse> => {
    const rows = await Promise.all(
      results.map(async (r) =>
        'draft' in r
          ? { index: r.index, status: 201, draft: r.draft }
          : 'created' in r
            ? { index: r.index, status: 201, post: await r.created.view(deps.storage) }
            : rowError(r.index, r.error),
      ),
    );
    const created = rows.filter((r) => r.status === 201).length;
    const drafts = rows.filter((r) => 'draft' in r).length;
    const answer = { mode, created, ...(drafts ? { drafts } : {}), failed: rows.length - created, results: rows };
    if (mode === 'each' || created === rows.length) return { status: 200, body: answer };
    // Nothing created: answered as a single create would answer the first refused row (a
    // validation failure first, with the fields of every such row), every refusal in details.rows.
    const refused = rows.filter((r): r is ReturnType<typeof rowError> => 'error' in r && !r.error.details?.notCreated);
    const invalid = refused.filter((r) => r.error.code === 'validation_failed');
    const lead = invalid[0] ?? refused[0]!;
    const others = refused.length - 1;
    throw new ApiError(
      lead.error.code,
      `No post was created: row ${lead.index}: ${lead.error.message}${others ? ` (and ${others} more row${others > 1 ? 's' : ''})` : ''}`,
      {
        status: lead.status,
        details: {
          ...(invalid.length
            ? { fields: invalid.flatMap((r) => (r.error.details?.fields as FieldError[] | undefined) ?? []) }
            : lead.error.details),
          rows: refused,
        },
      },
    );
  };
  return idempotent(deps.em, scope, async () => {
    const requester = await keyRequester(deps.em, who.key.id);
    const rows = typeof body.posts === 'function' ? await body.posts() : body.posts;
    const batch =
      idempotencyKey === undefined
        ? undefined
        : { apiKeyId: who.key.id, endpoint: as.endpoint, idempotencyKey, requestHash: requestHash(as.request) };
    const outcomes = await createRowsInBulk(deps, rows, mode, {
      requestOf: (row) => createPostRequest(who, row, deps.capabilities, requester),
      drafts: { organizationId: who.organization.id, keyChannels: who.channels, actor: requester.actor, now: who.now },
      beforeCommit: async (tx, written) => storeAnswer(tx, scope, await answerOf(written)),
      fixed: batch && {
        organizationId: who.organization.id,
        postIdOf: (index) => bulkRowPostId(batch, index),
        draftIdOf: (index) => seededId('drf', `${bulkRowPostId(batch, index)}:draft`),
      },
    });
    return answerOf(outcomes);
  });
}
