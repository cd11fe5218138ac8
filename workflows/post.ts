// One durable workflow per post: wait for the post row, sleep until publishAt (re-armed by edits,
// ended by a cancel), then publish to every channel in parallel and record each outcome; when a
// channel failed, wait for a retry (an Update from the API, a Signal from the Temporal UI) and
// publish the failed channels again.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  cancelPostUpdate,
  editPostUpdate,
  FAILURE,
  platformTaskQueue,
  postStateQuery,
  RETRY_WINDOW_MS,
  retryPostUpdate,
  retrySignal,
  type PostEdit,
  type PostWorkflowInput,
  type PostWorkflowState,
} from './post-types.ts';

/**
 * Executions that reached their end before this patch finished right after finishPost; from it
 * on, a failed post's workflow waits up to RETRY_WINDOW_MS for a retry (docs/changing-workflows.md).
 */
export const AWAIT_RETRY_PATCH = 'await-retry';
/**
 * Executions that started before this patch run the short Postgres steps (confirmPost,
 * startPublishing, recordChannelFailure, finishPost) as (remote) activities, each a round trip
 * through Temporal; from it on they run as local activities, inside the workflow task that needs
 * them: a post due now reaches its publish activity in one workflow task (docs/decisions.md, issue
 * 15). Same activities, same guarantees: each reads the committed row and is idempotent.
 */
export const LOCAL_STEPS_PATCH = 'local-postgres-steps';
import { classOfFailure, type ChannelFailure } from './publish-failure-types.ts';

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

/**
 * The same steps as local activities (LOCAL_STEPS_PATCH): run by the worker holding the workflow,
 * inside its workflow task; their results land in the history as markers. Short Postgres
 * statements only (the publish itself stays a remote activity): a local activity holds its
 * workflow task while it runs.
 */
const localDb = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});
const localWaitForRow = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  // As waitForRow: until the row is committed, for two minutes at most. The create path commits
  // before it starts the workflow, so the first attempt finds the row; a row that never appears
  // (the post was withdrawn after a failed start) is retried in the worker for the first second,
  // then through workflow timers (localRetryThreshold), so the worker's task is not held for
  // two minutes and a time-skipping test server skips the waits.
  // The bound is also a number of attempts (0.1 s doubling to 10 s: ~2 minutes in all): the
  // SDK measures a local activity's scheduleToClose on the worker's clock, which a time-skipping
  // server does not move.
  scheduleToCloseTimeout: '2 minutes',
  localRetryThreshold: '1 second',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 18 },
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

/**
 * Why a channel failed: the human reason and its class (workflows/publish-failure-types.ts), which
 * the publish activity put in its failure's details. Only feeds recordChannelFailure's input, so
 * histories of older code replay unchanged (an activity's input is not compared on replay).
 */
function failureInfo(err: unknown): ChannelFailure {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const error = cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : 'publishing failed';
  const app = cause instanceof ApplicationFailure ? cause : undefined;
  return { error, ...classOfFailure(app?.type, app?.details) };
}

export async function postWorkflow(input: PostWorkflowInput): Promise<PostWorkflowState> {
  let publishAt = input.publishAt;
  // A retry run (input.retry: the earlier run had closed) starts publishing at once.
  let phase: PostWorkflowState['phase'] = input.retry ? 'publishing' : 'scheduled';
  let editsInFlight = 0;
  let rearm = false;
  // Set as a cancelPost Update is accepted (its validator ran in this same step); `deleted` once
  // its activity has marked the row. From `cancelling` on, nothing is published.
  let cancelling = false;
  let deleted = false;
  // Retries asked for (the retryPost Update, the retry Signal) and begun (rows moved back to publishing).
  let retriesAsked = 0;
  let retriesBegun = 0;
  const state = (): PostWorkflowState => ({ phase, publishAt });
  const requestRetry = () => {
    phase = 'publishing';
    return ++retriesAsked;
  };
  const endCancelled = async (): Promise<PostWorkflowState> => {
    await condition(() => deleted && allHandlersFinished());
    return state();
  };

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
        if (phase !== 'scheduled') throw ApplicationFailure.nonRetryable(`the post is ${phase}`, FAILURE.notScheduled);
      },
    },
  );
  setHandler(
    cancelPostUpdate,
    async () => {
      cancelling = true;
      phase = 'cancelled';
      // An edit accepted before the cancel lands first; the post is then deleted, never published.
      await condition(() => editsInFlight === 0);
      await db.deletePost(input.postId);
      deleted = true;
      return state();
    },
    {
      // Atomic with `phase`, like editPost's: once publishing has begun, the post is not cancelled.
      validator: () => {
        if (phase === 'cancelled') throw ApplicationFailure.nonRetryable('the post is already cancelled', FAILURE.cancelled);
        if (phase !== 'scheduled' && phase !== 'failed')
          throw ApplicationFailure.nonRetryable(`the post is ${phase}`, FAILURE.notScheduled);
      },
    },
  );
  setHandler(
    retryPostUpdate,
    async () => {
      const asked = requestRetry();
      // Answers once the failed channels are back in publishing (the API then shows them so).
      await condition(() => retriesBegun >= asked);
      return state();
    },
    {
      validator: () => {
        if (phase === 'cancelled') throw ApplicationFailure.nonRetryable('the post is cancelled', FAILURE.cancelled);
        if (phase !== 'failed') throw ApplicationFailure.nonRetryable(`the post is ${phase}`, FAILURE.notFailed);
      },
    },
  );
  // The Temporal UI's "Send a Signal" (name `retry`, no input): the same retry, ignored unless waiting for one.
  setHandler(retrySignal, () => {
    if (phase === 'failed') requestRetry();
  });

  // Decided once, here: an execution that older code started (its history has no marker) keeps
  // the remote activities after it wakes, so its replay always matches.
  const local = patched(LOCAL_STEPS_PATCH);
  const steps = local ? localDb : db;
  let targets: { channelId: string; platform: string }[];
  let retry = input.retry === true;
  if (retry) {
    targets = await db.startRetry(input.postId);
  } else {
    try {
      await (local ? localWaitForRow : waitForRow).confirmPost(input.postId);
    } catch {
      phase = 'done';
      return state();
    }

    for (;;) {
      rearm = false;
      const wait = publishAt === null ? 0 : Date.parse(publishAt) - Date.now();
      if (wait > 0 && (await condition(() => rearm || cancelling, wait))) {
        if (cancelling) break;
        continue;
      }
      // An edit accepted just as the timer fired finishes first; if it moved the time, sleep again.
      await condition(() => editsInFlight === 0);
      if (cancelling || !rearm) break;
    }
    if (cancelling) return endCancelled();

    // No await between the check above and this line: a cancel accepted before it stops the
    // publish; one arriving after it is refused by its validator.
    phase = 'publishing';
    targets = await steps.startPublishing(input.postId);
  }

  for (;;) {
    await publishAll(input, targets, retry, steps);
    const outcome = await steps.finishPost(input.postId);
    if (outcome !== 'failed' || !patched(AWAIT_RETRY_PATCH)) break;
    // Failed: wait for a retry (or a DELETE) within the window; then end.
    phase = 'failed';
    const woken = await condition(() => retriesAsked > retriesBegun || cancelling, RETRY_WINDOW_MS);
    if (cancelling) return endCancelled();
    if (!woken) break;
    targets = await db.startRetry(input.postId);
    retriesBegun = retriesAsked;
    retry = true;
  }
  phase = 'done';
  return state();
}

/** Publishes to each target channel in parallel; a channel whose publish fails is recorded failed. */
async function publishAll(
  input: PostWorkflowInput,
  targets: { channelId: string; platform: string }[],
  retry: boolean,
  steps: typeof db,
): Promise<void> {
  const postId = input.postId;
  await Promise.all(
    targets.map(async ({ channelId, platform }) => {
      try {
        await publisherFor(platform).publishToChannel(retry ? { postId, channelId, retry } : { postId, channelId });
      } catch (err) {
        await steps.recordChannelFailure({ postId: input.postId, channelId, ...failureInfo(err) });
      }
    }),
  );
}
