// POST /v1/posts/{id}/analytics/refresh: read a post's figures now. At most once per
// REFRESH_EVERY_MS per post (the claim is a conditional update of posts.metrics_refreshed_at, so
// concurrent asks start one reading), so the endpoint cannot be used to hammer a platform; the
// reading itself is the metrics sweep's activity for that one post, run as a workflow.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { METRICS_SWEEP_WORKFLOW_TYPE, metricsRefreshWorkflowId, type MetricsSweepInput } from '../../workflows/metrics-sweep-types.ts';
import { isTemporalOutage, temporalUnavailable, withTemporalDeadline, type TemporalDeps } from '../temporal-calls.ts';
import { postAnalyticsForKey, type PostAnalytics } from './post-analytics.ts';

export const REFRESH_EVERY_MS = 5 * 60_000;

export async function refreshPostAnalytics(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  postId: string,
  keyChannels: 'all' | string[],
  now: Date,
  storage?: ObjectStorage,
): Promise<PostAnalytics> {
  const view = await postAnalyticsForKey(em, organizationId, postId, keyChannels, storage);
  if (!view.channels.some((c) => c.status === 'published' && c.platformPostId)) {
    throw errors.conflict('No channel of this post has been published yet: there is nothing to read.', { postId });
  }
  if (!temporal) throw new Error('Temporal is not configured for this API');
  const claimed = await sql<{ previous: string | null }>(
    em,
    `update posts p set metrics_refreshed_at = ?
     from (select id, metrics_refreshed_at as previous from posts where id = ? for update) old
     where p.id = old.id and (old.previous is null or old.previous <= ?)
     returning old.previous`,
    [now, view.postId, new Date(now.getTime() - REFRESH_EVERY_MS)],
  );
  if (!claimed.length) {
    const [row] = await sql<{ at: string }>(em, 'select metrics_refreshed_at as at from posts where id = ?', [view.postId]);
    const next = new Date(new Date(row!.at).getTime() + REFRESH_EVERY_MS);
    const seconds = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
    throw new ApiError(
      'rate_limited',
      `This post's figures were asked for less than ${REFRESH_EVERY_MS / 60_000} minutes ago; retry after ${seconds} s.`,
      {
        details: { resetsAt: next.toISOString(), postId: view.postId },
        headers: { 'retry-after': String(seconds) },
      },
    );
  }
  const input: MetricsSweepInput = { limit: 100, rounds: 1, postId: view.postId };
  try {
    await withTemporalDeadline(temporal, () =>
      temporal.client.workflow.start(METRICS_SWEEP_WORKFLOW_TYPE, {
        args: [input],
        taskQueue: temporal.taskQueue,
        workflowId: metricsRefreshWorkflowId(view.postId),
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowRunTimeout: '10 minutes',
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return view; // a reading of this post is under way
    // Not started: the claim is given back, so asking again works at once.
    await sql(em, 'update posts set metrics_refreshed_at = ? where id = ?', [claimed[0]!.previous, view.postId]);
    if (isTemporalOutage(err)) throw temporalUnavailable('The reading could not be started; retry shortly.', err);
    throw err;
  }
  return view;
}
