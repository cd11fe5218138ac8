// One durable workflow per post: wait for the post row, sleep until publishAt (re-armed by edits),
// then publish to every channel in parallel and record each outcome.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  editPostUpdate,
  FAILURE,
  platformTaskQueue,
  postStateQuery,
  type PostEdit,
  type PostWorkflowInput,
  type PostWorkflowState,
} from './post-types.ts';

type Activities = ReturnType<typeof createActivities>;

const db = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Safe to retry: these only write derived state to Postgres and are idempotent.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const waitForRow = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '2 minutes',
  // Safe: a read. The API starts the workflow just before it commits the post row; if the row
  // never appears (the commit failed), the workflow gives up after two minutes.
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

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
const publisherFor = (platform: string) =>
  proxyActivities<Activities>({ ...publishOptions, taskQueue: platformTaskQueue(workflowInfo().taskQueue, platform) });

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return 'publishing failed';
}

export async function postWorkflow(input: PostWorkflowInput): Promise<PostWorkflowState> {
  let publishAt = input.publishAt;
  let phase: PostWorkflowState['phase'] = 'scheduled';
  let editsInFlight = 0;
  let rearm = false;
  const state = (): PostWorkflowState => ({ phase, publishAt });

  setHandler(postStateQuery, state);
  setHandler(
    editPostUpdate,
    async (edit) => {
      editsInFlight++;
      try {
        await db.applyPostEdit({ postId: input.postId, edit });
        if (edit.publishAt !== undefined) publishAt = edit.publishAt;
        rearm = true;
      } finally {
        editsInFlight--;
      }
      return state();
    },
    {
      // Runs before the update is accepted: the check and the change are atomic with `phase`.
      validator: (_edit: PostEdit) => {
        if (phase !== 'scheduled')
          throw ApplicationFailure.nonRetryable(`the post is ${phase === 'done' ? 'done' : 'publishing'}`, FAILURE.notScheduled);
      },
    },
  );

  try {
    await waitForRow.confirmPost(input.postId);
  } catch {
    phase = 'done';
    return state();
  }

  for (;;) {
    rearm = false;
    const wait = publishAt === null ? 0 : Date.parse(publishAt) - Date.now();
    if (wait > 0 && (await condition(() => rearm, wait))) continue;
    // An edit accepted just as the timer fired finishes first; if it moved the time, sleep again.
    await condition(() => editsInFlight === 0);
    if (!rearm) break;
  }

  phase = 'publishing';
  const targets = await db.startPublishing(input.postId);
  await Promise.all(
    targets.map(async ({ channelId, platform }) => {
      try {
        await publisherFor(platform).publishToChannel({ postId: input.postId, channelId });
      } catch (err) {
        await db.recordChannelFailure({ postId: input.postId, channelId, error: failureMessage(err) });
      }
    }),
  );
  await db.finishPost(input.postId);
  phase = 'done';
  return state();
}
