// Hiding a comment (and showing it again) on its platform, and deleting a reply we sent.
//
// Rules:
// - A hide asks the platform to hide the comment from everyone but its author (where the platform
//   allows it: platforms/catalog.ts COMMENTS `hide`); once the platform has, the comment is
//   `hidden`. Show again (`unhide`) undoes it: the comment is `read`. Our own replies are not
//   hidden: they are deleted.
// - One hide or show-again of a comment at a time (409 while one is under way); its outcome is
//   the comment's `moderation` (`pending`, `done`, `failed` with the reason and its class).
// - Delete (domain/inbox/replies.ts states when): `deleting` while the platform is asked, then
//   `deleted`, and the reply leaves the conversation; a refusal leaves it `published` with the
//   reason.
// - Each is a workflow on the platform's publish queue (workflows/comment-actions.ts); the request
//   waits a few seconds for it: 200 with the outcome when it came, 202 with `pending` or
//   `deleting` when it did not (follow it with GET).
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommentModeration } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { errors } from '../../lib/errors.ts';
import { COMMENTS } from '../../platforms/catalog.ts';
import {
  COMMENT_MODERATION_WORKFLOW_TYPE,
  type CommentModerationInput,
  type CommentModerationResult,
  commentModerationWorkflowId,
} from '../../workflows/comment-actions-types.ts';
import type { KeyChannels } from '../key-channels.ts';
import { isTemporalOutage, resultWithin, type TemporalDeps, temporalUnavailable, withTemporalDeadline } from '../temporal-calls.ts';
import { type CommentView, getComment } from './comments.ts';
import { getReply, type ReplyView } from './replies.ts';

/** How long a request waits for the platform's answer before it answers 202. */
export const MODERATION_WAIT_MS = 5_000;

async function start(temporal: TemporalDeps, input: CommentModerationInput): Promise<void> {
  await withTemporalDeadline(temporal, () =>
    temporal.client.workflow.start(COMMENT_MODERATION_WORKFLOW_TYPE, {
      args: [input],
      taskQueue: temporal.taskQueue,
      workflowId: commentModerationWorkflowId(input),
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    }),
  );
}

/** POST /v1/comments/{id}/hide and /unhide. `done`: the platform answered within the wait (200), else under way (202). */
export async function moderateComment(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  commentId: string,
  keyChannels: KeyChannels,
  action: 'hide' | 'unhide',
  now: Date,
): Promise<{ comment: CommentView; done: boolean }> {
  const comment = await getComment(em, organizationId, commentId, keyChannels);
  const fact = COMMENTS[comment.platform];
  if (!fact.read || !fact.hide)
    throw errors.conflict(`${comment.platform} does not let the service hide comments.`, { platform: comment.platform });
  if (comment.ours) throw errors.conflict('This is one of your own replies: delete it instead (DELETE /v1/replies/{id}).', { commentId });
  if (!temporal) throw new Error('Temporal is not configured for this API');
  const moderation: CommentModeration = { action, status: 'pending', requestedAt: now.toISOString(), error: null, errorCode: null };
  // Claimed unless one is under way: a conditional update, so two asks never both start.
  const claimed = await sql<{ previous: CommentModeration | null }>(
    em,
    `update comments c set moderation = ?::jsonb, updated_at = ?
     from (select id, moderation as previous from comments where id = ? for update) old
     where c.id = old.id and (old.previous is null or old.previous->>'status' <> 'pending' or (old.previous->>'requestedAt')::timestamptz < ?)
     returning old.previous`,
    [JSON.stringify(moderation), now, commentId, new Date(now.getTime() - 60 * 60_000)],
  );
  if (!claimed.length) throw errors.conflict('A hide or show-again of this comment is under way; retry once it is done.', { commentId });
  const input: CommentModerationInput = { action, id: commentId, platform: comment.platform };
  try {
    await start(temporal, input);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      // Not started: the comment is as it was, and asking again works at once.
      await sql(em, 'update comments set moderation = ?::jsonb where id = ?', [JSON.stringify(claimed[0]!.previous), commentId]);
      if (isTemporalOutage(err)) throw temporalUnavailable('Publishing is unavailable right now; nothing was changed. Retry shortly.', err);
      throw err;
    }
  }
  const result = await resultWithin<CommentModerationResult>(temporal, commentModerationWorkflowId(input), MODERATION_WAIT_MS);
  return { comment: await getComment(em.fork(), organizationId, commentId, keyChannels), done: result !== undefined };
}

/** DELETE /v1/replies/{id} (rules above). `done`: deleted (200), else under way (202). */
export async function deleteReply(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  replyId: string,
  keyChannels: KeyChannels,
  now: Date,
): Promise<{ reply: ReplyView; done: boolean }> {
  const reply = await getReply(em, organizationId, replyId, keyChannels);
  if (reply.status === 'deleted') return { reply, done: true };
  if (reply.status === 'publishing')
    throw errors.conflict('The reply is being published; delete it once it is out.', { status: reply.status });
  if (reply.status !== 'published' && reply.status !== 'deleting') {
    // Never sent: nothing to remove from the platform (a waiting reply's workflow then sends nothing).
    await sql(em, `update comment_replies set status = 'deleted', updated_at = ? where id = ? and status = ?`, [
      now,
      replyId,
      reply.status,
    ]);
    return { reply: await getReply(em.fork(), organizationId, replyId, keyChannels), done: true };
  }
  const fact = COMMENTS[reply.platform];
  if (!fact.read || !fact.delete)
    throw errors.conflict(`${reply.platform} does not let the service delete replies.`, { platform: reply.platform });
  if (!temporal) throw new Error('Temporal is not configured for this API');
  await sql(em, `update comment_replies set status = 'deleting', updated_at = ? where id = ? and status = 'published'`, [now, replyId]);
  const input: CommentModerationInput = { action: 'delete', id: replyId, platform: reply.platform };
  try {
    await start(temporal, input);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      await sql(em, `update comment_replies set status = 'published' where id = ? and status = 'deleting'`, [replyId]);
      if (isTemporalOutage(err))
        throw temporalUnavailable('Publishing is unavailable right now; the reply was not deleted. Retry shortly.', err);
      throw err;
    }
  }
  await resultWithin<CommentModerationResult>(temporal, commentModerationWorkflowId(input), MODERATION_WAIT_MS);
  const after = await getReply(em.fork(), organizationId, replyId, keyChannels);
  return { reply: after, done: after.status !== 'deleting' };
}
