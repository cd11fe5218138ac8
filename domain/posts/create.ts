// Creating and editing posts: the Postgres rows and the post's Temporal workflow change together.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  Post,
  type IChannel,
  type PostApproval,
  type IOrganization,
  type IPost,
  type IPostChannel,
  type IPostChannelItem,
} from '../../db/entities/index.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { createdPostView, type MediaItemFields, type PostView } from './view.ts';
import { ApiError, errors, type FieldError } from '../../lib/errors.ts';
import { sql } from '../../db/sql.ts';
import { newId } from '../../lib/ids.ts';
import { PLAN_LIMITS } from '../../lib/plans.ts';
import { postWorkflowId } from '../../workflows/post-types.ts';
import type { MediaViewer } from '../media.ts';
import { assertChannelsUsable, channelTexts, loadPostMedia, loadTargetChannels, measureForChannel, parsePublishAt } from './checks.ts';
import { claimQueueTime, peekQueueTime } from '../queues/queues.ts';
import { assertKeyUnclaimed, type IdempotencyClaim, KeyAlreadyClaimed, recordClaim } from '../idempotency-claim.ts';
import { startAfterCommit } from '../workflow-starts.ts';
import { POST_STARTS, type PostStartRow } from './workflow-start.ts';
import type { TemporalDeps } from '../temporal-calls.ts';
import { liveOptionProblems, optionProblems, redditFromOptions, type OptionsInput } from './options.ts';
import type { PlatformOptions } from '../../platforms/options.ts';
import { liveCapabilitiesOf, type CapabilityDeps } from '../capabilities.ts';
import { approvalFor, type Requester } from './approval.ts';
import { CONTENT_COLUMNS, emptyContent, type StoredContent } from './content.ts';
import { checkFollowUps, followUpKey, measureFollowUp, NO_THREAD, type FollowUpItem, type ThreadInput } from './thread.ts';
import { linkChoiceFor } from '../links/choice.ts';
import { checkTagIds, insertPostTags } from '../tags.ts';

export type { TemporalDeps };

/** What a post is made of, for whom and from where: shared by a post and a series (its template). */
export interface PostTemplateRequest {
  organization: Pick<IOrganization, 'id' | 'plan'>;
  source: 'api' | 'app';
  /** The API key creating it: its channel list limits the channels and the media it may use. Null: the web app. */
  key: MediaViewer | null;
  channelIds: string[];
  content: string;
  contentByPlatform: Record<string, string>;
  reddit: { subreddit: string; title: string } | null;
  mediaIds: string[];
  /** Per-platform post options (platforms/options.ts, as given: domain/posts/options.ts); absent: the platforms' defaults. */
  options?: OptionsInput;
  /**
   * The body's content fields as given (domain/posts/content.ts contentOf): a field no rule reads
   * is stored as given; those above are stored as their rules decide.
   */
  given?: Partial<StoredContent>;
  /** Reads what each channel's account can do now, to check the options against it; absent: not read. */
  capabilities?: CapabilityDeps;
  /** The organization's tags to put on it (domain/tags.ts); absent: none. */
  tagIds?: string[];
}

export interface CreatePostRequest extends PostTemplateRequest {
  /** ISO 8601 with an offset; null = publish now (or, with `queue`, the queue's time). */
  publishAt: string | null;
  now: Date;
  /** At the earliest free queue slot common to every target channel (domain/queues/queues.ts); publishAt is then null. */
  queue?: boolean;
  /** A series occurrence (domain/series/occurrences.ts): its fixed post id, so a repeated create cannot double it. */
  postId?: string;
  seriesId?: string;
  /** The request's Idempotency-Key, claimed in the post's own transaction (domain/idempotency-claim.ts). */
  claim?: IdempotencyClaim;
  /** Thread and first comment (domain/posts/thread.ts); absent: none. */
  followUps?: ThreadInput;
  /** Who makes it, for approval (domain/posts/approval.ts); absent (a series occurrence): no approval. */
  requester?: Requester;
}

/**
 * A new post, from the API or the web app: the checks of checkNewPost, then the rows and the
 * workflow (schedulePost, which runs the checks against the organization's other posts under its
 * lock, commits, then starts the workflow). `fields`: what the caller already found wrong in its own input (the web form), reported
 * with publishAt's problems in one validation_failed. Returns the post id.
 */
export async function createPost(
  em: EntityManager,
  /** Undefined (not configured) fails only once the request has passed every check. */
  temporal: TemporalDeps | undefined,
  r: CreatePostRequest,
  fields: FieldError[] = [],
): Promise<CreatedPost> {
  const post = await checkNewPost(em, r, fields);
  if (!temporal) throw new Error('Temporal is not configured');
  return schedulePost(em, temporal, post);
}

/**
 * A post just created: its id, and its view as committed (the rows this request wrote, without
 * reading them back: the 201 body of POST /v1/posts).
 */
export interface CreatedPost {
  id: string;
  view(storage?: ObjectStorage): Promise<PostView>;
}

/** A channel's text as POST /v1/posts/validate reports it. */
export interface ChannelTextReport {
  channelId: string;
  platform: string;
  /** The text this channel would get (its platform's contentByPlatform entry, else content). */
  content: string;
  /** Its length as the platform counts it (platforms/text-length.ts), its links as short links when the post shortens them. */
  characters: number;
  maxChars: number;
  /** The follow-up items this channel would get (domain/posts/thread.ts), each measured as its kind is counted. */
  items: (FollowUpItem & { characters: number; maxChars: number })[];
}

export interface PostValidation {
  valid: true;
  /** UTC; null = publish now. */
  publishAt: string | null;
  channels: ChannelTextReport[];
}

/**
 * POST /v1/posts/validate: every check of createPost, in its order, and nothing written. The
 * plan-limit and duplicate checks run without the organization's lock: a create racing this one
 * may still change their answer (advisory, docs/decisions.md).
 */
export async function validatePost(em: EntityManager, r: CreatePostRequest, fields: FieldError[] = []): Promise<PostValidation> {
  const post = await checkNewPost(em, r, fields);
  if (post.queue) post.publishAt = await peekQueueTime(em, post.organizationId, post.channels, post.now);
  await assertSchedulable(em, post);
  return {
    valid: true,
    publishAt: post.publishAt?.toISOString() ?? null,
    channels: post.channels.map((c) => ({
      channelId: c.id,
      platform: c.platform,
      content: post.texts[c.id]!,
      ...measureForChannel(c, post.texts[c.id]!, post.stored.links),
      items: (post.items[c.id] ?? []).map((item) => ({ ...item, ...measureFollowUp(c, item, post.stored.links) })),
    })),
  };
}

/**
 * The checks of a new post that need no lock: publishAt, the channels (within the key's list, and
 * usable), the media, each channel's text against its platform's rules. Shared by createPost and
 * validatePost, so the two cannot disagree.
 */
export async function checkNewPost(em: EntityManager, r: CreatePostRequest, fields: FieldError[]): Promise<NewPost> {
  const publishAt = r.publishAt === null ? null : parsePublishAt(r.publishAt, r.now, fields);
  if (fields.length) throw errors.validation(fields);
  const organizationId = r.organization.id;
  const channels = await loadTargetChannels(em, organizationId, r.channelIds, r.key?.channels ?? 'all');
  assertChannelsUsable(channels);
  const tagIds = await checkTagIds(em, organizationId, r.tagIds ?? []);
  const media = await loadPostMedia(em, organizationId, r.mediaIds, r.key ?? undefined);
  const followUps = r.followUps ?? NO_THREAD;
  // Decided now and stored with the post (domain/links/choice.ts): the texts are checked as they will be sent.
  const links = await linkChoiceFor(em, organizationId, r.given?.links);
  const items = await checkFollowUps(em, organizationId, channels, followUps, r.key ?? undefined, fields, links);
  const { reddit, options } = redditFromOptions(r.reddit, r.options ?? {}, fields);
  fields.push(...optionProblems(channels, options, media, { requireChoices: !r.seriesId }));
  const texts = channelTexts(channels, { content: r.content, contentByPlatform: r.contentByPlatform, media, reddit, links }, fields);
  if (r.capabilities) {
    const live = await liveCapabilitiesOf(r.capabilities, channels, reddit?.subreddit);
    const problems = liveOptionProblems(channels, live, { options, media, reddit });
    if (problems.length) throw errors.validation(problems);
  }
  const approval = await approvalFor(em, organizationId, r.requester, r.now);
  const stored: StoredContent = {
    ...emptyContent(),
    ...r.given,
    content: r.content,
    contentByPlatform: r.contentByPlatform,
    reddit,
    mediaIds: media.map((m) => m.id),
    ...followUps,
    options,
    links,
  };
  return {
    organizationId,
    stored,
    approval,
    apiKeyId: r.key?.apiKeyId ?? null,
    source: r.source,
    content: r.content,
    contentByPlatform: r.contentByPlatform,
    reddit,
    mediaIds: media.map((m) => m.id),
    media,
    publishAt: publishAt ?? null,
    queue: r.queue === true,
    postId: r.postId,
    seriesId: r.seriesId ?? null,
    channels,
    texts,
    followUps,
    items,
    options,
    tagIds,
    now: r.now,
    pendingLimit: PLAN_LIMITS[r.organization.plan].pendingScheduledPosts,
    claim: r.claim,
  };
}

/** The checks against the organization's other posts: createPost runs them under its lock, validatePost without. */
async function assertSchedulable(em: EntityManager, p: NewPost): Promise<void> {
  await assertUnderPendingLimit(em, p.organizationId, p.pendingLimit);
  await assertNotDuplicate(em, p.channels, p.texts, p.publishAt ?? p.now, undefined, p.seriesId ?? undefined, p.items);
}

/** What schedulePost writes: a request checkNewPost has checked. */
export interface NewPost {
  organizationId: string;
  /** The post's content as its row stores it (domain/posts/content.ts). */
  stored: StoredContent;
  /** Pending when the requester's posts wait for approval; else null. */
  approval: PostApproval | null;
  apiKeyId: string | null;
  source: 'api' | 'app';
  content: string;
  contentByPlatform: Record<string, string>;
  reddit: { subreddit: string; title: string } | null;
  mediaIds: string[];
  /** The media items, as checked (the created post's view shows them). */
  media: MediaItemFields[];
  /** null = publish now; with `queue`, set to the claimed slot inside insertPost's transaction. */
  publishAt: Date | null;
  queue: boolean;
  postId?: string;
  seriesId: string | null;
  channels: IChannel[];
  texts: Record<string, string>;
  followUps: ThreadInput;
  /** Each channel's follow-up items, by channel id. */
  items: Record<string, FollowUpItem[]>;
  options: PlatformOptions;
  /** Its tags, checked (domain/tags.ts checkTagIds): post_tags rows written with it. */
  tagIds: string[];
  now: Date;
  /** The plan's limit of pending scheduled posts; null = unlimited. */
  pendingLimit: number | null;
  claim?: IdempotencyClaim;
}

/**
 * Writes the post, then starts its workflow, by the protocol of every row that owns a workflow
 * (domain/workflow-starts.ts), so that the organization's lock is never held across a call to
 * Temporal:
 * 1. insertPost: the checks against the organization's other posts, the rows and the
 *    Idempotency-Key claim, under its lock, committed with workflow_pending set;
 * 2. startAfterCommit: the start, no lock held, with the workflow id as its idempotency key; then
 *    workflow_pending cleared, with the post.scheduled event.
 * A start that fails takes the post back (503 on an outage: the post was not created). A process
 * that dies between 1 and 2 leaves workflow_pending set, and the start reconciler (a Temporal
 * Schedule, workflows/post-reconciler.ts) starts that post: none stays without its workflow.
 */
async function schedulePost(em: EntityManager, temporal: TemporalDeps, p: NewPost): Promise<CreatedPost> {
  const postId = p.postId ?? newId('post');
  const rows = await insertPost(em, p, postId);
  await startAfterCommit(em, temporal, POST_STARTS, startRowOf(p, postId), {
    withdrawn: 'Scheduling is unavailable right now; the post was not created. Retry shortly.',
    kept: 'Scheduling is unavailable right now; the post was saved and will be scheduled once it is back. Check GET /v1/posts before retrying.',
  });
  return createdOf(p, rows);
}

/** The columns the start protocol reads of a post just written (domain/posts/workflow-start.ts). */
export const startRowOf = (p: NewPost, postId: string): PostStartRow => ({
  id: postId,
  organization_id: p.organizationId,
  status: 'scheduled',
  scheduled_at: p.publishAt ?? p.now,
  deleted_at: null,
  approval_status: p.approval?.status ?? null,
});

/** A post as written: its id and its 201 view, without reading it back. */
export const createdOf = (p: NewPost, rows: WrittenPost): CreatedPost => ({
  id: rows.post.id,
  view: (storage) => createdPostView(rows.post, rows.channels, p.media, storage, rows.items, rows.tagIds),
});

/** The rows one create wrote. */
export interface WrittenPost {
  post: IPost;
  channels: IPostChannel[];
  items: IPostChannelItem[];
  tagIds: string[];
}

/** A create waiting for its organization's next insert transaction. */
interface QueuedInsert {
  em: EntityManager;
  p: NewPost;
  postId: string;
  settle: (err: unknown, rows?: WrittenPost) => void;
}

/** Posts written in one transaction at most. */
const INSERTS_PER_TRANSACTION = 16;
const insertLines = new Map<string, QueuedInsert[]>();

/**
 * Step 1: the checks that need the organization's lock, and the rows, committed. Creates of one
 * organization in this process are written by one transaction at a time, each taking every create
 * that arrived meanwhile (group commit): one lock and one COMMIT (its WAL flush) for up to
 * INSERTS_PER_TRANSACTION posts, where each post alone made the lock's serial section three round
 * trips longer. Each post is checked against the rows of those before it (same transaction), so
 * the plan limit and duplicate_post stay exact; the Postgres lock keeps them exact across processes.
 * Creates waiting here hold no pool connection.
 */
export function insertPost(em: EntityManager, p: NewPost, postId: string): Promise<WrittenPost> {
  return new Promise<WrittenPost>((resolve, reject) => {
    const item: QueuedInsert = { em, p, postId, settle: (err, rows) => (err === undefined ? resolve(rows!) : reject(err)) };
    const line = insertLines.get(p.organizationId);
    if (line) line.push(item);
    else {
      insertLines.set(p.organizationId, [item]);
      void writeInsertLine(p.organizationId);
    }
  });
}

/** Writes the organization's queued creates, batch after batch, until none is left. */
async function writeInsertLine(organizationId: string): Promise<void> {
  const line = insertLines.get(organizationId)!;
  while (line.length) {
    const batch = line.slice(0, INSERTS_PER_TRANSACTION);
    try {
      await insertBatch(batch);
    } catch {
      // Something other than a refusal (a row gone, a lost connection): each alone, so one
      // post's failure is not its neighbours'.
      for (const item of batch) await insertBatch([item]).catch((err: unknown) => item.settle(err));
    }
    line.splice(0, batch.length);
  }
  insertLines.delete(organizationId);
}

/** One transaction under the organization's lock; a refused post is left out (its savepoint rolled back) and answered with the refusal. */
async function insertBatch(batch: QueuedInsert[]): Promise<void> {
  const refused = new Map<QueuedInsert, unknown>();
  const written = new Map<QueuedInsert, WrittenPost>();
  await batch[0]!.em.fork().transactional(async (tx) => {
    refused.clear(); // a retried transaction starts over
    written.clear();
    // One writer per organization at a time, for these few statements only: the plan limit and
    // duplicate checks below cannot both pass for two concurrent requests.
    await sql(tx, 'select pg_advisory_xact_lock(hashtext(?))', [batch[0]!.p.organizationId]);
    for (const item of batch) {
      try {
        written.set(item, await insertInSavepoint(tx, item.p, item.postId));
      } catch (err) {
        if (!(err instanceof ApiError) && !(err instanceof KeyAlreadyClaimed)) throw err;
        refused.set(item, err);
      }
    }
  });
  for (const item of batch) item.settle(refused.get(item), written.get(item));
}

/**
 * insertChecked in a savepoint of the batch's transaction: a post refused after some of its writes
 * (its queue slot claimed, its rows written before recordClaim meets a key claimed meanwhile)
 * takes all of them back, so the batch commits nothing of it. Without it, a refused post's rows
 * would commit with workflow_pending set, and the start reconciler would start and publish them.
 * The savepoint is plain SQL so that a rollback to it that fails throws (the ORM's nested
 * transaction logs such a failure and rethrows the refusal, and the batch would commit the rows):
 * the batch's transaction then rolls back whole and its posts are written again one by one.
 */
export async function insertInSavepoint(tx: EntityManager, p: NewPost, postId: string): Promise<WrittenPost> {
  await sql(tx, 'savepoint new_post');
  let written: WrittenPost;
  try {
    written = await insertChecked(tx, p, postId);
  } catch (err) {
    await sql(tx, 'rollback to savepoint new_post');
    throw err;
  }
  await sql(tx, 'release savepoint new_post');
  return written;
}

/** The checks against the organization's other posts (those committed and those written before in this transaction), then the rows. */
async function insertChecked(tx: EntityManager, p: NewPost, postId: string): Promise<WrittenPost> {
  // Queued: the slot is claimed in this transaction, so it is taken if and only if the post is committed.
  if (p.claim) await assertKeyUnclaimed(tx, p.claim);
  if (p.queue) p.publishAt = await claimQueueTime(tx, p.organizationId, p.channels, postId, p.now);
  await assertSchedulable(tx, p);
  const now = new Date();
  const post: IPost = {
    id: postId,
    organization: p.organizationId,
    status: 'scheduled',
    ...p.stored,
    source: p.source,
    apiKeyId: p.apiKeyId,
    scheduledAt: p.publishAt ?? p.now,
    publishedAt: null,
    workflowId: postWorkflowId(postId),
    deletedAt: null,
    seriesId: p.seriesId,
    workflowPending: true,
    metricsRefreshedAt: null,
    approval: p.approval,
    createdAt: now,
    updatedAt: now,
  };
  const channels: IPostChannel[] = p.channels.map((c) => ({
    id: newId('pc'),
    post: postId,
    channel: c.id,
    platform: c.platform,
    status: 'draft',
    content: p.texts[c.id]!,
    platformPostId: null,
    url: null,
    publishedAt: null,
    error: null,
    errorCode: null,
    retryable: null,
    attempts: 0,
    metricsStep: 0,
    metricsNextAt: null,
    metricsError: null,
    createdAt: now,
    updatedAt: now,
  }));
  // The post and its channels in one statement, in the transaction: the next post's checks in it
  // see them. (The ORM's unit of work took two statements and a third of a create's ORM time.)
  const content = CONTENT_COLUMNS.map((c) => ({ ...c, value: c.param(post[c.field]) }));
  await sql(
    tx,
    `with post as (
       insert into posts (id, organization_id, status, ${content.map((c) => c.column).join(', ')},
         source, api_key_id, scheduled_at, workflow_id, workflow_pending, series_id, approval, created_at, updated_at)
       values (?, ?, 'scheduled', ${content.map((c) => c.placeholder).join(', ')}, ?, ?, ?, ?, true, ?, ?::jsonb, ?, ?)
       returning id
     )
     insert into post_channels (id, post_id, channel_id, platform, status, content, attempts, created_at, updated_at)
     select c.id, post.id, c.channel_id, c.platform, 'draft', c.content, 0, ?, ?
     from post, jsonb_to_recordset(?::jsonb) as c(id text, channel_id text, platform text, content text)`,
    [
      post.id,
      post.organization,
      ...content.map((c) => c.value),
      post.source,
      post.apiKeyId,
      post.scheduledAt,
      post.workflowId,
      post.seriesId,
      post.approval === null ? null : JSON.stringify(post.approval),
      now,
      now,
      now,
      now,
      JSON.stringify(channels.map((c) => ({ id: c.id, channel_id: c.channel, platform: c.platform, content: c.content }))),
    ],
  );
  const items = followUpRows(channels, p.items, now);
  if (items.length) await insertFollowUps(tx, items);
  const tagIds = await insertPostTags(tx, postId, p.tagIds);
  if (p.claim) await recordClaim(tx, p.claim, { table: 'posts', id: postId });
  return { post, channels, items, tagIds };
}

/** The post_channel_items rows of these channels' follow-ups, as drafts. */
export function followUpRows(
  channels: Pick<IPostChannel, 'id' | 'channel'>[],
  items: Record<string, FollowUpItem[]>,
  now: Date,
): IPostChannelItem[] {
  return channels.flatMap((pc) =>
    (items[pc.channel] ?? []).map((item) => ({
      id: newId('pci'),
      postChannel: pc.id,
      position: item.position,
      kind: item.kind,
      content: item.content,
      mediaIds: item.mediaIds,
      status: 'draft' as const,
      platformPostId: null,
      url: null,
      publishedAt: null,
      error: null,
      errorCode: null,
      retryable: null,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    })),
  );
}

/** Writes follow-up rows in one statement. */
export async function insertFollowUps(em: EntityManager, rows: IPostChannelItem[]): Promise<void> {
  await sql(
    em,
    `insert into post_channel_items (id, post_channel_id, position, kind, content, media_ids, status, attempts, created_at, updated_at)
     select i.id, i.post_channel_id, i.position, i.kind, i.content, i.media_ids, 'draft', 0, ?, ?
     from jsonb_to_recordset(?::jsonb) as i(id text, post_channel_id text, position int, kind text, content text, media_ids jsonb)`,
    [
      rows[0]!.createdAt,
      rows[0]!.createdAt,
      JSON.stringify(
        rows.map((r) => ({
          id: r.id,
          post_channel_id: r.postChannel,
          position: r.position,
          kind: r.kind,
          content: r.content,
          media_ids: r.mediaIds,
        })),
      ),
    ],
  );
}

async function assertUnderPendingLimit(em: EntityManager, organizationId: string, limit: number | null): Promise<void> {
  if (limit === null) return;
  // A cancelled post (deleted while scheduled) no longer waits.
  const used = await em.count(Post, { organization: organizationId, status: 'scheduled', deletedAt: null });
  if (used >= limit) {
    throw new ApiError('limit_reached', `The plan allows ${limit} pending scheduled posts; ${used} are waiting.`, {
      details: { limit, used },
    });
  }
}

/** Trimmed, whitespace runs collapsed to one space, case kept. */
export function normalizeText(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/**
 * A post of the channel with the same normalized text and items in the window. The channel's texts
 * are found through an index by their key (the MD5 of post_text_normalized, the SQL form of
 * normalizeText: its migration), then compared as normalized text.
 * Parameters: channel, window start and end, post to skip, series to skip, the text (twice), the items' key.
 */
export const DUPLICATE_QUERY = `select pc.post_id from post_channels pc join posts p on p.id = pc.post_id
       where pc.channel_id = ? and pc.status <> 'failed' and p.status <> 'failed' and p.deleted_at is null
         and p.scheduled_at > ? and p.scheduled_at < ? and p.id <> ? and (p.series_id is null or p.series_id is distinct from ?)
         and md5(post_text_normalized(pc.content)) = md5(post_text_normalized(?)) and post_text_normalized(pc.content) = ?
         and coalesce((select string_agg(post_text_normalized(i.content), E'\n' order by i.position)
           from post_channel_items i where i.post_channel_id = pc.id), '') = ?
       limit 1`;

/**
 * duplicate_post: the same normalized text (and follow-up items) to the same channel, scheduled or published within
 * 24 h of this post's time (failed and deleted posts do not count). `excludePostId` skips the post being edited.
 */
export async function assertNotDuplicate(
  em: EntityManager,
  channels: IChannel[],
  texts: Record<string, string>,
  at: Date,
  excludePostId?: string,
  /** Occurrences of one series repeat its text on purpose: they are not duplicates of each other. */
  seriesId?: string,
  /** Each channel's follow-up items: the whole conversation is compared (domain/posts/thread.ts). */
  items: Record<string, FollowUpItem[]> = {},
): Promise<void> {
  const day = 24 * 60 * 60 * 1000;
  for (const c of channels) {
    const rows = await sql<{ post_id: string }>(em, DUPLICATE_QUERY, [
      c.id,
      new Date(at.getTime() - day),
      new Date(at.getTime() + day),
      excludePostId ?? '',
      seriesId ?? null,
      normalizeText(texts[c.id] ?? ''),
      normalizeText(texts[c.id] ?? ''),
      followUpKey(items[c.id]),
    ]);
    if (rows[0]) {
      throw new ApiError('duplicate_post', `The same text was posted to channel ${c.id} within 24 hours.`, {
        details: { postId: rows[0].post_id, channelId: c.id },
      });
    }
  }
}
