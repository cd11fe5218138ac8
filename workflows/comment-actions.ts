// What the team does about a comment on its platform (workflows/comment-actions-types.ts): a reply
// published once, after a decision when it needs one; a hide, a show-again, a delete of our reply.
// The sends run on the platform's publish task queue with the post's publish options
// (workflows/publishing.ts); their bookkeeping as local activities.
import { ApplicationFailure, allHandlersFinished, condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  type CommentModerationInput,
  type CommentModerationResult,
  type CommentReplyInput,
  type CommentReplyResult,
  decideReplyUpdate,
} from './comment-actions-types.ts';
import { APPROVAL_GRACE_MS, FAILURE } from './post-types.ts';
import { failureInfo, publisherFor } from './publishing.ts';

type Activities = ReturnType<typeof createActivities>;

/** Short Postgres writes, idempotent: retried until they land. */
const local = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

interface ReplyState {
  approval: 'none' | 'pending' | 'approved' | 'rejected' | 'expired';
  /** Decisions accepted whose write has not returned: the reply is not published before they land. */
  recording: number;
}

const pending = (state: ReplyState) => state.approval === 'pending';

/**
 * A reply: waits for a decision when it needs one (up to APPROVAL_GRACE_MS, then fails with
 * not_approved), then publishes it once and records how it went.
 */
export async function commentReplyWorkflow(input: CommentReplyInput): Promise<CommentReplyResult> {
  const { replyId } = input;
  // Shared with the Update's handler: an object, so the reads below see its changes.
  const state: ReplyState = { approval: input.approval ?? 'none', recording: 0 };
  setHandler(
    decideReplyUpdate,
    async (decision) => {
      state.approval = decision.decision === 'approve' ? 'approved' : 'rejected';
      state.recording++;
      try {
        await local.recordReplyDecision({ replyId, decision });
      } finally {
        state.recording--;
      }
      return null;
    },
    {
      // Runs before the Update is accepted: the check and the change are atomic with `approval`.
      validator: (_decision) => {
        if (state.approval === 'none') throw ApplicationFailure.nonRetryable('the reply needs no approval', FAILURE.noApproval);
        if (state.approval !== 'pending') throw ApplicationFailure.nonRetryable(`the reply is ${state.approval}`, FAILURE.alreadyDecided);
      },
    },
  );
  if (pending(state)) {
    const decided = await condition(() => state.approval !== 'pending' && state.recording === 0, APPROVAL_GRACE_MS);
    if (!decided) {
      state.approval = 'expired';
      const error = 'The reply was not approved within 24 hours.';
      await local.recordReplyFailure({ replyId, error, errorCode: 'not_approved', retryable: false });
      return { status: 'failed' };
    }
    if (state.approval === 'rejected') return { status: 'rejected' };
  }
  try {
    const sent = await publisherFor(input.platform).publishCommentReply({ replyId });
    await condition(allHandlersFinished);
    return { status: sent ? 'published' : 'deleted' };
  } catch (err) {
    await local.recordReplyFailure({ replyId, ...failureInfo(err) });
    return { status: 'failed' };
  }
}

/** A hide, a show-again or a delete of our reply: asked of the platform, then recorded. */
export async function commentModerationWorkflow(input: CommentModerationInput): Promise<CommentModerationResult> {
  const { action, id } = input;
  try {
    await publisherFor(input.platform).moderateComment({ action, id });
    return { status: 'done' };
  } catch (err) {
    await local.recordModerationFailure({ action, id, ...failureInfo(err) });
    return { status: 'failed' };
  }
}
