// Creating and editing posts: the Postgres rows and the post's Temporal workflow change together.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Post, PostChannel, type IChannel } from '../db/entities/index.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { ORGANIZATION_ID, POST_ID } from '../workflows/search-attributes.ts';
import { postWorkflowId, type PostEdit, type PostWorkflowInput } from '../workflows/post-types.ts';
import { channelTexts, loadPostMedia, loadTargetChannels } from './post-validation.ts';
import type { PostView } from './posts.ts';
import { executeUpdateInRequest, startWorkflowInRequest, terminateInBackground, type TemporalDeps } from './temporal-calls.ts';

export type { TemporalDeps };

export interface NewPost {
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
export async function schedulePost(em: EntityManager, temporal: TemporalDeps, p: NewPost): Promise<string> {
  const postId = newId('post');
  const input: PostWorkflowInput = { postId, organizationId: p.organizationId, publishAt: p.publishAt?.toISOString() ?? null };
  const workflowId = postWorkflowId(postId);
  let started = false;
  try {
    await em.transactional(async (tx) => {
      // One writer per organization at a time: the plan limit and duplicate checks below
      // cannot both pass for two concurrent requests.
      await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [p.organizationId], 'all', tx.getTransactionContext());
      await assertUnderPendingLimit(tx, p.organizationId, p.pendingLimit);
      await assertNotDuplicate(tx, p.channels, p.texts, p.publishAt ?? p.now);
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
        tx.create(PostChannel, { id: newId('pc'), post: postId, channel: c.id, platform: c.platform, status: 'draft', content: p.texts[c.id]! });
      }
      await tx.flush();
      await startWorkflowInRequest(
        temporal,
        'postWorkflow',
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
  return postId;
}

async function assertUnderPendingLimit(em: EntityManager, organizationId: string, limit: number | null): Promise<void> {
  if (limit === null) return;
  const used = await em.count(Post, { organization: organizationId, status: 'scheduled' });
  if (used >= limit) {
    throw new ApiError('limit_reached', `The plan allows ${limit} pending scheduled posts; ${used} are waiting.`, { limit, used });
  }
}

/** Trimmed, whitespace runs collapsed to one space, case kept. */
export function normalizeText(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/**
 * duplicate_post: the same normalized text to the same channel, scheduled or published within
 * 24 h of this post's time (failed posts do not count). `excludePostId` skips the post being edited.
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
       where pc.channel_id = ? and pc.status <> 'failed' and p.status <> 'failed'
         and p.scheduled_at > ? and p.scheduled_at < ? and p.id <> ?
         and btrim(regexp_replace(pc.content, '[[:space:]]+', ' ', 'g')) = ?
       limit 1`,
      [c.id, new Date(at.getTime() - day), new Date(at.getTime() + day), excludePostId ?? '', normalizeText(texts[c.id] ?? '')],
      'all',
      em.getTransactionContext(),
    );
    if (rows[0]) {
      throw new ApiError('duplicate_post', `The same text was posted to channel ${c.id} within 24 hours.`, {
        postId: rows[0].post_id,
        channelId: c.id,
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
      'editPost',
      [edit],
      // No answer in time (Temporal down, or no worker): the Update may still be applied once a
      // worker polls again. The edit only sets values, so retrying it is safe.
      'Scheduling is unavailable right now; the edit was not confirmed and may still be applied later. Check the post and retry shortly.',
    );
  } catch (err) {
    if (err instanceof ApiError) throw err; // the 503 of an outage
    if (err instanceof WorkflowUpdateFailedError || /not found|completed|already/i.test((err as Error).message)) {
      throw new ApiError('conflict', 'The post is no longer scheduled; it cannot be edited.', {});
    }
    throw err;
  }
}

export interface EditRequest {
  content?: string;
  contentByPlatform?: Record<string, string>;
  publishAt?: Date;
  mediaIds?: string[];
}

/**
 * An edit of a scheduled post, from the API or the web app: the same rules as creating it
 * (channels' text limits, media, duplicates), then the workflow's editPost Update, whose
 * validator makes the final "still scheduled?" check atomic with the workflow.
 */
export async function validateAndEditPost(
  em: EntityManager,
  temporal: TemporalDeps,
  organizationId: string,
  current: PostView,
  edit: EditRequest,
): Promise<void> {
  const channels = await loadTargetChannels(em, organizationId, current.channels.map((c) => c.channelId), 'all');
  const stored = await em.findOneOrFail(Post, { id: current.id, organization: organizationId });
  const media = await loadPostMedia(em, organizationId, edit.mediaIds ?? current.media.map((m) => m.id));
  const texts = channelTexts(channels, {
    content: edit.content ?? current.content,
    contentByPlatform: edit.contentByPlatform ?? stored.contentByPlatform ?? {},
    media,
    reddit: current.reddit,
  });
  await assertNotDuplicate(em, channels, texts, edit.publishAt ?? new Date(current.scheduledAt), current.id);
  await editPost(temporal, current.id, {
    content: edit.content,
    contentByPlatform: edit.contentByPlatform,
    publishAt: edit.publishAt?.toISOString(),
    mediaIds: edit.mediaIds,
    channelContent: texts,
  });
}
