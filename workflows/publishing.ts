// What every workflow that sends to a platform shares (workflows/post.ts, workflows/comment-actions.ts):
// the publish activities' options, run on the platform's own task queue, and a failure read back
// as its reason and class.
import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { FAILURE, platformTaskQueue } from './post-types.ts';
import { classOfFailure, type ChannelFailure } from './publish-failure-types.ts';

type Activities = ReturnType<typeof createActivities>;

const publishOptions: ActivityOptions = {
  // Long enough for a large video upload (YouTube, TikTok); the heartbeat catches a lost worker
  // within 10 s, so this bound only matters for an upload that is truly stuck.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  // Safe to retry: publishToChannel skips a channel already published and sends the platform an
  // idempotency key fixed per (post, channel). Reauth and permanent errors are not retried;
  // a Retry-After from the platform overrides the backoff (nextRetryDelay).
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [FAILURE.reauth, FAILURE.permanent],
  },
};

/** Each platform's publishes run on its own task queue (worker/index.ts): no platform starves another. */
export const publisherFor = (platform: string) =>
  proxyActivities<Activities>({ ...publishOptions, taskQueue: platformTaskQueue(workflowInfo().taskQueue, platform) });

/**
 * Why a channel failed: the human reason and its class (workflows/publish-failure-types.ts), which
 * the publish activity put in its failure's details. Only feeds recordChannelFailure's input, so
 * histories of older code replay unchanged (an activity's input is not compared on replay).
 */
export function failureInfo(err: unknown): ChannelFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const error = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : 'publishing failed';
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  return { error, ...classOfFailure(app?.type, app?.details) };
}
