// Creating and editing posts: the Postgres rows and the post's Temporal workflow change together.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Post, PostChannel, type IChannel, type IOrganization } from '../db/entities/index.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { PLAN_LIMITS } from '../lib/plans.ts';
import { ORGANIZATION_ID, POST_ID } from '../workflows/search-attributes.ts';
import {
  editPostUpdate,
  FAILURE,
  POST_WORKFLOW_TYPE,
  postWorkflowId,
  type PostEdit,
  type PostWorkflow,
  type PostWorkflowInput,
} from '../workflows/post-types.ts';
import type { MediaViewer } from './media.ts';
import {
  assertChannelsUsable,
  channelTexts,
  loadPostMedia,
  loadTargetChannels,
  measureForChannel,
  parsePublishAt,
} from './post-validation.ts';
import { loadPostView, type PostView } from './posts.ts';
import { dispatchWebhookDeliveries, writeWebhookEvent } from '../activities/webhook-events.ts';
import {
  executeUpdateInRequest,
  startWorkflowInRequest,
  terminateInBackground,
  updateFailureType,
  type TemporalDeps,
} from './temporal-calls.ts';

export type { TemporalDeps };

export interface CreatePostRequest {
  organization: Pick<IOrganization, 'id' | 'plan'>;
  source: 'api' | 'app';
  /** The API key creating it: its channel list limits the channels and the media it may use. Null: the web app. */
  key: MediaViewer | null;
  channelIds: string[];
  content: string;
  contentByPlatform: Record<string, string>;
  reddit: { subreddit: string; title: string } | null;
  mediaIds: string[];
  /** ISO 8601 with an offset; null = publish now. */
  publishAt: string | null;
  now: Date;
}

/**
 * A new post, from the API or the web app: the checks of checkNewPost, then the rows and the
 * workflow (schedulePost, which runs the checks against the organization's other posts under its
 * lock). `fields`: what the caller already found wrong in its own input (the web form), reported
 * with publishAt's problems in one validation_failed. Returns the post id.
 */
export async function createPost(
  em: EntityManager,
  /** Undefined (not configured) fails only once the request has passed every check. */
  temporal: TemporalDeps | undefined,
  r: CreatePostRequest,
  fields: FieldError[] = [],
): Promise<string> {
  const post = await checkNewPost(em, r, fields);
  if (!temporal) throw new Error('Temporal is not configured');
  return schedulePost(em, temporal, post);
}

/** A channel's text as POST /v1/posts/validate reports it. */
export interface ChannelTextReport {
  channelId: string;
  platform: string;
  /** The text this channel would get (its platform's contentByPlatform entry, else content). */
  content: string;
  /** Its length as the platform counts it (platforms/text-length.ts). */
  characters: number;
  maxChars: number;
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
  await assertSchedulable(em, post);
  return {
    valid: true,
    publishAt: post.publishAt?.toISOString() ?? null,
    channels: post.channels.map((c) => ({
      channelId: c.id,
      platform: c.platform,
      content: post.texts[c.id]!,
      ...measureForChannel(c, post.texts[c.id]!),
    })),
  };
}

/**
 * The checks of a new post that need no lock: publishAt, the channels (within the key's list, and
 * usable), the media, each channel's text against its platform's rules. Shared by createPost and
 * validatePost, so the two cannot disagree.
 */
async function checkNewPost(em: EntityManager, r: CreatePostRequest, fields: FieldError[]): Promise<NewPost> {
  const publishAt = r.publishAt === null ? null : parsePublishAt(r.publishAt, r.now, fields);
  if (fields.length) throw errors.validation(fields);
  const organizationId = r.organization.id;
  const channels = await loadTargetChannels(em, organizationId, r.channelIds, r.key?.channels ?? 'all');
  assertChannelsUsable(channels);
  const media = await loadPostMedia(em, organizationId, r.mediaIds, r.key ?? undefined);
  const texts = channelTexts(channels, { content: r.content, contentByPlatform: r.contentByPlatform, media, reddit: r.reddit });
  return {
    organizationId,
    apiKeyId: r.key?.apiKeyId ?? null,
    source: r.source,
    content: r.content,
    contentByPlatform: r.contentByPlatform,
    reddit: r.reddit,
    mediaIds: media.map((m) => m.id),
    publishAt: publishAt ?? null,
    channels,
    texts,
    now: r.now,
    pendingLimit: PLAN_LIMITS[r.organization.plan].pendingScheduledPosts,
  };
}

/** The checks against the organization's other posts: createPost runs them under its lock, validatePost without. */
async function assertSchedulable(em: EntityManager, p: NewPost): Promise<void> {
  await assertUnderPendingLimit(em, p.organizationId, p.pendingLimit);
  await assertNotDuplicate(em, p.channels, p.texts, p.publishAt ?? p.now);
}

/** What schedulePost writes: a request checkNewPost has checked. */
interface NewPost {
  organizationId: string;
  apiKeyId: string | null;
  source: 'api' | 'app';
  content: string;
  contentByPlatform: Record<string, string>;
  reddit: { subreddit: string; title: string } | null;
  mediaIds: string[];
  /** null = publish now. */
  publishAt: Date | null;
  channels: IChannel[];
  texts: Record<string, string>;
  now: Date;
  /** The plan's limit of pending scheduled posts; null = unlimited. */
  pendingLimit: number | null;
}

/**
 * Writes the rows and starts the workflow in one step: inside the transaction, after the rows are
 * flushed and before the commit. If the start fails, the transaction rolls back and no post is
 * left behind; if the commit fails after the start, the workflow finds no row and ends by itself
 * (workflows/post.ts, confirmPost) and is terminated here at once when possible. So no post ever
 * sits in `scheduled` without a workflow. The start has a deadline (services/temporal-calls.ts):
 * with Temporal down the request answers 503 within it and releases the organization's lock.
 */
async function schedulePost(em: EntityManager, temporal: TemporalDeps, p: NewPost): Promise<string> {
  const postId = newId('post');
  const input: PostWorkflowInput = { postId, organizationId: p.organizationId, publishAt: p.publishAt?.toISOString() ?? null };
  const workflowId = postWorkflowId(postId);
  let started = false;
  let events: string[] = [];
  try {
    await em.transactional(async (tx) => {
      // One writer per organization at a time: the plan limit and duplicate checks below
      // cannot both pass for two concurrent requests.
      await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [p.organizationId], 'all', tx.getTransactionContext());
      await assertSchedulable(tx, p);
      tx.create(Post, {
        id: postId,
        organization: p.organizationId,
        status: 'scheduled',
        content: p.content,
        contentByPlatform: p.contentByPlatform,
        reddit: p.reddit,
        mediaIds: p.mediaIds,
        source: p.source,
        apiKeyId: p.apiKeyId,
        scheduledAt: p.publishAt ?? p.now,
        workflowId,
      });
      for (const c of p.channels) {
        tx.create(PostChannel, {
          id: newId('pc'),
          post: postId,
          channel: c.id,
          platform: c.platform,
          status: 'draft',
          content: p.texts[c.id]!,
        });
      }
      await tx.flush();
      // post.scheduled: an outbox row committed with the post (activities/webhook-events.ts).
      events = (
        await writeWebhookEvent(tx, {
          organizationId: p.organizationId,
          type: 'post.scheduled',
          now: p.now,
          data: async () => ({ ...(await loadPostView(tx, postId)) }),
        })
      ).deliveryIds;
      await tx.flush();
      await startWorkflowInRequest<PostWorkflow>(
        temporal,
        POST_WORKFLOW_TYPE,
        {
          workflowId,
          args: [input],
          typedSearchAttributes: [
            { key: ORGANIZATION_ID, value: p.organizationId },
            { key: POST_ID, value: postId },
          ],
        },
        'Scheduling is unavailable right now; the post was not created. Retry shortly.',
      );
      started = true;
    });
  } catch (err) {
    if (started) terminateInBackground(temporal, workflowId, 'post row was not committed');
    throw err;
  }
  // The post is created whatever happens here: an undispatched delivery is started by a later dispatch's sweep.
  await dispatchWebhookDeliveries(em, temporal, events, p.now).catch(() => {});
  return postId;
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
 * duplicate_post: the same normalized text to the same channel, scheduled or published within
 * 24 h of this post's time (failed and deleted posts do not count). `excludePostId` skips the post being edited.
 */
export async function assertNotDuplicate(
  em: EntityManager,
  channels: IChannel[],
  texts: Record<string, string>,
  at: Date,
  excludePostId?: string,
): Promise<void> {
  const day = 24 * 60 * 60 * 1000;
  for (const c of channels) {
    const rows = await em.getConnection().execute<{ post_id: string }[]>(
      `select pc.post_id from post_channels pc join posts p on p.id = pc.post_id
       where pc.channel_id = ? and pc.status <> 'failed' and p.status <> 'failed' and p.deleted_at is null
         and p.scheduled_at > ? and p.scheduled_at < ? and p.id <> ?
         and btrim(regexp_replace(pc.content, '[[:space:]]+', ' ', 'g')) = ?
       limit 1`,
      [c.id, new Date(at.getTime() - day), new Date(at.getTime() + day), excludePostId ?? '', normalizeText(texts[c.id] ?? '')],
      'all',
      em.getTransactionContext(),
    );
    if (rows[0]) {
      throw new ApiError('duplicate_post', `The same text was posted to channel ${c.id} within 24 hours.`, {
        details: { postId: rows[0].post_id, channelId: c.id },
      });
    }
  }
}

/** Sends a validated edit through the workflow's Update; its validator refuses unless still scheduled. */
export async function editPost(temporal: TemporalDeps, postId: string, edit: PostEdit): Promise<void> {
  try {
    await executeUpdateInRequest(
      temporal,
      postWorkflowId(postId),
      editPostUpdate,
      [edit],
      // No answer in time (Temporal down, or no worker): the Update may still be applied once a
      // worker polls again. The edit only sets values, so retrying it is safe.
      'Scheduling is unavailable right now; the edit was not confirmed and may still be applied later. Check the post and retry shortly.',
    );
  } catch (err) {
    // Refused by the validator (publishing) or the workflow has ended (published, failed).
    if (updateFailureType(err) === FAILURE.notScheduled || err instanceof WorkflowNotFoundError) {
      throw new ApiError('conflict', 'The post is no longer scheduled; it cannot be edited.');
    }
    throw err;
  }
}

export interface EditRequest {
  content?: string;
  contentByPlatform?: Record<string, string>;
  publishAt?: Date;
  mediaIds?: string[];
  /** Replaces the target channels. */
  channelIds?: string[];
  reddit?: { subreddit: string; title: string };
}

/**
 * An edit of a scheduled post, from the API or the web app: the same rules as creating it
 * (channels' text limits, media, duplicates; new channels within the key's list and usable),
 * then the workflow's editPost Update, whose validator makes the final "still scheduled?" check
 * atomic with the workflow. `key`: the API key editing (its channel list and the media it may
 * see); null for the web app.
 */
export async function validateAndEditPost(
  em: EntityManager,
  temporal: TemporalDeps,
  organizationId: string,
  current: PostView,
  edit: EditRequest,
  key: MediaViewer | null = null,
): Promise<void> {
  const currentIds = current.channels.map((c) => c.channelId);
  const channels = await loadTargetChannels(
    em,
    organizationId,
    edit.channelIds ?? currentIds,
    edit.channelIds ? (key?.channels ?? 'all') : 'all',
  );
  // A channel the post already has keeps it whatever its status (as an edit of the text does);
  // an added one must be usable, as on create.
  assertChannelsUsable(channels.filter((c) => !currentIds.includes(c.id)));
  const stored = await em.findOneOrFail(Post, { id: current.id, organization: organizationId });
  const media = await loadPostMedia(em, organizationId, edit.mediaIds ?? current.media.map((m) => m.id), key ?? undefined);
  // New channels without new per-platform texts: the texts of platforms no longer targeted go.
  const contentByPlatform =
    edit.contentByPlatform ??
    (edit.channelIds
      ? Object.fromEntries(Object.entries(stored.contentByPlatform ?? {}).filter(([p]) => channels.some((c) => c.platform === p)))
      : (stored.contentByPlatform ?? {}));
  const reddit = edit.reddit ?? current.reddit;
  const texts = channelTexts(channels, { content: edit.content ?? current.content, contentByPlatform, media, reddit });
  await assertNotDuplicate(em, channels, texts, edit.publishAt ?? new Date(current.scheduledAt), current.id);
  await editPost(temporal, current.id, {
    content: edit.content,
    contentByPlatform: edit.contentByPlatform ?? (edit.channelIds ? contentByPlatform : undefined),
    publishAt: edit.publishAt?.toISOString(),
    mediaIds: edit.mediaIds,
    channelIds: edit.channelIds,
    reddit: edit.reddit,
    channelContent: texts,
  });
}
