// Creating and editing posts: the Postgres rows and the post's Temporal workflow change together.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { Post, PostChannel, type IChannel } from '../db/entities/index.ts';
import { ApiError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { ORGANIZATION_ID, POST_ID } from '../workflows/search-attributes.ts';
import { postWorkflowId, type PostEdit, type PostWorkflowInput } from '../workflows/post-types.ts';

export interface TemporalDeps {
  client: Client;
  taskQueue: string;
}

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
}

/**
 * Writes the rows and starts the workflow in one step: inside the transaction, after the rows are
 * flushed and before the commit. If the start fails, the transaction rolls back and no post is
 * left behind; if the commit fails after the start, the workflow finds no row and ends by itself
 * (workflows/post.ts, confirmPost) and is terminated here at once when possible. So no post ever
 * sits in `scheduled` without a workflow.
 */
export async function schedulePost(em: EntityManager, temporal: TemporalDeps, p: NewPost): Promise<string> {
  const postId = newId('post');
  const input: PostWorkflowInput = { postId, organizationId: p.organizationId, publishAt: p.publishAt?.toISOString() ?? null };
  const workflowId = postWorkflowId(postId);
  let started = false;
  try {
    await em.transactional(async (tx) => {
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
      try {
        await temporal.client.workflow.start('postWorkflow', {
          taskQueue: temporal.taskQueue,
          workflowId,
          args: [input],
          typedSearchAttributes: [
            { key: ORGANIZATION_ID, value: p.organizationId },
            { key: POST_ID, value: postId },
          ],
        });
      } catch (err) {
        throw new ApiError('internal_error', 'The post could not be scheduled; nothing was created. Retry the request.', {
          reason: (err as Error).message.slice(0, 200),
        });
      }
      started = true;
    });
  } catch (err) {
    if (started) await temporal.client.workflow.getHandle(workflowId).terminate('post row was not committed').catch(() => {});
    throw err;
  }
  return postId;
}

/** Sends a validated edit through the workflow's Update; its validator refuses unless still scheduled. */
export async function editPost(temporal: TemporalDeps, postId: string, edit: PostEdit): Promise<void> {
  try {
    await temporal.client.workflow.getHandle(postWorkflowId(postId)).executeUpdate('editPost', { args: [edit] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || /not found|completed|already/i.test((err as Error).message)) {
      throw new ApiError('conflict', 'The post is no longer scheduled; it cannot be edited.', {});
    }
    throw err;
  }
}
