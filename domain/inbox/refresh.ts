// POST /v1/posts/{id}/comments/refresh: read a post's comments now, besides the scheduled reads
// (which it does not move), also after the 30 days the schedule follows a post. At most once per
// READ_AGAIN_AFTER_MS per post: the claim is a conditional update of its follows' last read, so
// concurrent asks start one read and nobody hammers a platform through it. The read itself is the
// comments sweep's activity for that one post, run as a workflow.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { COMMENTS_SWEEP_WORKFLOW_TYPE, type CommentsSweepInput, commentsRefreshWorkflowId } from '../../workflows/comments-sweep-types.ts';
import { isTemporalOutage, temporalUnavailable, withTemporalDeadline, type TemporalDeps } from '../temporal-calls.ts';
import type { KeyChannels } from '../key-channels.ts';
import { FOLLOW_FOR } from './collection.ts';
import { postConversation, type ConversationEntry } from './comments.ts';

export const READ_AGAIN_AFTER_MS = 60_000;

export async function refreshComments(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  postId: string,
  keyChannels: KeyChannels,
  now: Date,
): Promise<ConversationEntry[]> {
  // The post as the key may see it, or not_found.
  const conversation = await postConversation(em, organizationId, postId, keyChannels);
  if (!temporal) throw new Error('Temporal is not configured for this API');
  // Followed from now on if the schedule does not follow it yet (a post of the last 30 days is
  // then read on the schedule too; an older one only when asked).
  await sql(
    em,
    `insert into comment_follows (post_channel_id, next_at)
     select pc.id, case when pc.published_at > ? then ?::timestamptz end from post_channels pc
      where pc.post_id = ? and pc.status = 'published' and pc.platform_post_id is not null
     on conflict do nothing`,
    [new Date(now.getTime() - FOLLOW_FOR), now, postId],
  );
  const claimed = await sql<{ id: string; previous: string | null }>(
    em,
    `update comment_follows f set last_read_at = ?
     from (select f2.post_channel_id, f2.last_read_at as previous from comment_follows f2
             join post_channels pc on pc.id = f2.post_channel_id
            where pc.post_id = ? for update of f2) old
     where f.post_channel_id = old.post_channel_id and (old.previous is null or old.previous <= ?)
     returning f.post_channel_id as id, old.previous`,
    [now, postId, new Date(now.getTime() - READ_AGAIN_AFTER_MS)],
  );
  if (!claimed.length) {
    const [row] = await sql<{ at: string | null }>(
      em,
      `select max(f.last_read_at) as at from comment_follows f join post_channels pc on pc.id = f.post_channel_id where pc.post_id = ?`,
      [postId],
    );
    if (!row?.at) throw errors.conflict('No channel of this post has been published yet: there is nothing to read.', { postId });
    const next = new Date(new Date(row.at).getTime() + READ_AGAIN_AFTER_MS);
    const seconds = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
    throw new ApiError('rate_limited', `This post's comments were read less than a minute ago; retry after ${seconds} s.`, {
      details: { resetsAt: next.toISOString(), postId },
      headers: { 'retry-after': String(seconds) },
    });
  }
  const input: CommentsSweepInput = { limit: 100, rounds: 1, postId };
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.client.workflow.start(COMMENTS_SWEEP_WORKFLOW_TYPE, {
        args: [input],
        taskQueue: temporal.taskQueue,
        workflowId: commentsRefreshWorkflowId(postId),
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowRunTimeout: '10 minutes',
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return conversation; // a read of this post is under way
    // Not started: the claim is given back, so asking again works at once.
    for (const c of claimed) await sql(em, 'update comment_follows set last_read_at = ? where post_channel_id = ?', [c.previous, c.id]);
    if (isTemporalOutage(err)) throw temporalUnavailable('The read could not be started; retry shortly.', err);
    throw err;
  }
  return conversation;
}
