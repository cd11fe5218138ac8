// Deleting (cancelling) a post and retrying its failed channels, from the API and the web app.
// Every change to a post whose workflow still runs goes through that workflow (an Update whose
// validator decides atomically with the workflow's own state), so a timer that already fired
// can never publish a post the client was told is cancelled. docs/decisions.md "The post
// workflow".
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Channel, Post, PostChannel } from '../../db/entities/index.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { cancelPostUpdate, FAILURE, postWorkflowId, retryPostUpdate } from '../../workflows/post-types.ts';
import { startAfterCommit } from '../workflow-starts.ts';
import { POST_STARTS } from './workflow-start.ts';
import { assertChannelsUsable } from './checks.ts';
import { getPostForKey, type PostView } from './view.ts';
import { assertApprovedForRetry } from './approval.ts';
import { releaseQueueClaims } from '../queues/queues.ts';
import { executeUpdateInRequest, updateFailureType, type TemporalDeps } from '../temporal-calls.ts';

const publishingConflict = () =>
  new ApiError('conflict', 'The post is being published; it can no longer be cancelled.', { details: { status: 'publishing' } });

function needTemporal(temporal: TemporalDeps | undefined): TemporalDeps {
  if (!temporal) throw new Error('Temporal is not configured');
  return temporal;
}

/**
 * DELETE: a scheduled post is cancelled through its workflow (the cancelPost Update; refused once
 * publishing has begun → conflict); a published or failed post is only removed from the service
 * (its live posts on the platforms stay), ending a failed post's wait for a retry. The row is
 * kept with deleted_at set. A post the key cannot see, or already deleted → not_found.
 */
export async function cancelPost(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  postId: string,
  channels: 'all' | string[],
  now: Date,
): Promise<void> {
  const post = await getPostForKey(em, organizationId, postId, channels);
  if (post.status === 'publishing') throw publishingConflict();
  if (post.status === 'scheduled' || post.status === 'failed') {
    try {
      await executeUpdateInRequest(
        needTemporal(temporal),
        postWorkflowId(postId),
        cancelPostUpdate,
        [],
        // No answer in time: the Update may still be applied once a worker polls again.
        'Scheduling is unavailable right now; the cancellation was not confirmed and may still be applied later. Check the post and retry shortly.',
      );
      // A queue slot it held is free again (domain/queues/queues.ts; a deleted post's claim is stale anyway).
      await releaseQueueClaims(em, postId);
      return;
    } catch (err) {
      const refused = updateFailureType(err);
      if (refused === FAILURE.notScheduled) throw publishingConflict();
      if (refused === FAILURE.cancelled) throw errors.notFound('Post');
      // Closed: published, failed and past its retry window, or ended by an operator.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  await softDeleteSettled(em, organizationId, postId, now);
  await releaseQueueClaims(em, postId);
}

/** Marks a post with no running workflow deleted, unless a retry has started it publishing meanwhile. */
async function softDeleteSettled(em: EntityManager, organizationId: string, postId: string, now: Date): Promise<void> {
  // A fresh EntityManager: the row is read again under its lock, not taken from the one loaded above.
  await em.fork().transactional(async (tx) => {
    // The row lock orders this after (or before) a retry's start of a new run (startRetryRun).
    const post = await tx.findOne(Post, { id: postId, organization: organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!post || post.deletedAt) throw errors.notFound('Post');
    if (post.status === 'publishing') throw publishingConflict();
    // Committed, its workflow not started yet (domain/posts/create.ts): the start is on its way.
    if (post.workflowPending) throw new ApiError('conflict', 'The post is still being scheduled; retry shortly.');
    post.deletedAt = now;
  });
}

/**
 * POST /retry: re-publishes the channels that failed (never those published), with the same
 * per-(post, channel) idempotency key, looking the post up first where the platform can. Only a
 * failed post with no channel in flight (else conflict); a target channel that still needs
 * reconnecting → reauth_required naming it. Through the workflow waiting for a retry (the
 * retryPost Update), or, when that workflow has closed, a new run under the same workflow id.
 */
export async function retryPost(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  postId: string,
  channels: 'all' | string[],
  /** Not needed today (the workflow stamps its own rows); kept so both lifecycle calls take the same arguments. */
  _now: Date,
): Promise<PostView> {
  const post = await getPostForKey(em, organizationId, postId, channels);
  assertRetryable(post);
  await assertTargetsUsable(em, organizationId, post);
  const t = needTemporal(temporal);
  try {
    await executeUpdateInRequest(
      t,
      postWorkflowId(postId),
      retryPostUpdate,
      [],
      'Publishing is unavailable right now; the retry was not confirmed and may still start later. Check the post and retry shortly.',
    );
  } catch (err) {
    if (updateFailureType(err) === FAILURE.notFailed) throw notFailedConflict('publishing');
    if (updateFailureType(err) === FAILURE.cancelled) throw errors.notFound('Post');
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    await startRetryRun(em, t, organizationId, postId);
  }
  return getPostForKey(em.fork(), organizationId, postId, channels);
}

function notFailedConflict(status: string) {
  return new ApiError('conflict', `The post is ${status}; only a failed post can be retried.`, { details: { status } });
}

function assertRetryable(post: PostView): void {
  if (post.status !== 'failed') throw notFailedConflict(post.status);
  assertApprovedForRetry(post);
  const inFlight = post.channels.filter((c) => c.status === 'publishing').map((c) => c.channelId);
  if (inFlight.length) {
    throw new ApiError('conflict', 'A channel of the post is still being published.', {
      details: { status: post.status, channelIds: inFlight },
    });
  }
}

/** The failed channels must be usable again (reconnected, not disabled) before they are retried. */
async function assertTargetsUsable(em: EntityManager, organizationId: string, post: PostView): Promise<void> {
  const ids = post.channels.filter((c) => c.status !== 'published').map((c) => c.channelId);
  const found = ids.length ? await em.find(Channel, { id: { $in: ids }, organization: organizationId }) : [];
  assertChannelsUsable(ids.map((id) => found.find((c) => c.id === id)).filter((c) => c !== undefined));
}

/**
 * The failed post's workflow has closed: a new run under the same workflow id, by the protocol of
 * every row that owns a workflow (domain/workflow-starts.ts). The transaction moves the post and
 * its channels not published back to publishing and marks the post workflow_pending; after its
 * commit the run is started (a start that fails puts them back to failed). The row lock
 * serialises it with a DELETE and with a second retry.
 */
async function startRetryRun(em: EntityManager, temporal: TemporalDeps, organizationId: string, postId: string): Promise<void> {
  const row = await em.fork().transactional(async (tx) => {
    const post = await tx.findOne(Post, { id: postId, organization: organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!post || post.deletedAt) throw errors.notFound('Post');
    if (post.status !== 'failed' || post.workflowPending) throw notFailedConflict(post.status === 'failed' ? 'publishing' : post.status);
    const pcs = await tx.find(PostChannel, { post: postId });
    if (pcs.some((pc) => pc.status === 'publishing')) throw notFailedConflict('publishing');
    post.status = 'publishing';
    post.publishedAt = null;
    post.workflowPending = true;
    // Their errors stay until the run records new outcomes (its startRetry clears them), so a
    // retry whose start fails puts them back as they were.
    for (const pc of pcs) if (pc.status !== 'published') pc.status = 'publishing';
    await tx.flush();
    return {
      id: postId,
      organization_id: organizationId,
      status: 'publishing',
      scheduled_at: post.scheduledAt,
      deleted_at: null,
      approval_status: null,
    };
  });
  await startAfterCommit(em, temporal, POST_STARTS, row, {
    withdrawn: 'Publishing is unavailable right now; the retry was not started. Retry shortly.',
    kept: 'Publishing is unavailable right now; the retry was saved and starts once it is back. Check the post before retrying.',
  });
}
