// One durable workflow per post: wait for the post row, sleep until publishAt (re-armed by edits,
// ended by a cancel), wait for its approval when it needs one, then publish to every channel in parallel and record each outcome; when a
// channel failed, wait for a retry (an Update from the API, a Signal from the Temporal UI) and
// publish the failed channels again.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import {
  APPROVAL_GRACE_MS,
  cancelPostUpdate,
  decideApprovalUpdate,
  editPostUpdate,
  FAILURE,
  postStateQuery,
  RETRY_WINDOW_MS,
  retryPostUpdate,
  retrySignal,
  type PostEdit,
  type PostWorkflowInput,
  type PostWorkflowState,
  type PublishTarget,
} from './post-types.ts';
import { failureInfo, publisherFor } from './publishing.ts';
import type { ChannelFailure } from './publish-failure-types.ts';

/**
 * Without this marker (an execution that passed finishPost before the patch) the workflow ends
 * right after finishPost; with it, a failed post's workflow waits up to RETRY_WINDOW_MS for a
 * retry (docs/changing-workflows.md).
 */
export const AWAIT_RETRY_PATCH = 'await-retry';
/**
 * Executions that started before this patch run the short Postgres steps (confirmPost,
 * startPublishing, recordChannelFailure, finishPost) as (remote) activities, each scheduled
 * through the Temporal server; from it on they run as local activities, inside the workflow task
 * that needs them: a post due now reaches its publish activity in one workflow task
 * (docs/decisions.md).
 * Same activities, same guarantees: each reads the committed row and is idempotent.
 */
export const LOCAL_STEPS_PATCH = 'local-postgres-steps';
/**
 * A channel with follow-up items (a thread, a first comment) publishes them after the post, one
 * activity each, in order (publishFollowUp). Executions of older code never have follow-ups;
 * the marker keeps the new commands out of their replay all the same.
 */
export const FOLLOW_UPS_PATCH = 'follow-up-items';

/**
 * A post that needs approval waits after its sleep for an approve decision (the decideApproval
 * Update), up to APPROVAL_GRACE_MS past its publishAt; without one its channels fail with
 * not_approved. Only posts created or edited by code that knows approval ever wait; the marker
 * records that this execution took the new path.
 */
export const APPROVAL_PATCH = 'await-approval';

/**
 * Executions from this patch on run no activity before their sleep: the row, which the API commits
 * before it starts the workflow, is checked by startPublishing when the post is due (a row not
 * committed yet, as an API of older code starts inside its transaction, is then waited for as
 * before). A workflow that can take an Update before its first local activity has resolved meets
 * a replay hazard (docs/decisions.md "The post workflow"); a post also costs one event less. Its
 * marker stands for every patch above (local steps, await-retry, follow-ups, approval): an
 * execution that has it records none of theirs.
 */
export const ROW_AT_PUBLISH_PATCH = 'row-check-at-publish';

type Activities = ReturnType<typeof createActivities>;
type Steps = typeof db;
type Target = PublishTarget;

/**
 * What the workflow and its Update, Signal and Query handlers share. The Query and the Updates
 * answer with its phase and publishAt (view).
 */
interface PostState extends Omit<PostWorkflowState, 'approval'> {
  /** Edits and decisions accepted whose activity has not returned yet: the post is not published before they land. */
  editsInFlight: number;
  /** 'none': the post needs no approval. */
  approval: 'none' | 'pending' | 'approved' | 'rejected';
  /** An edit landed since the sleep started: sleep again, until the publishAt it may have moved. */
  edited: boolean;
  /**
   * Set as a cancelPost Update is accepted (its validator ran in this same step): from then on
   * nothing is published. `deleted` once its activity has marked the row.
   */
  cancelled: boolean;
  deleted: boolean;
  /** A retry asked for (the retryPost Update, the retry Signal) and not begun yet (rows not back in publishing). */
  retryRequested: boolean;
}

const db = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Safe to retry: these only write derived state to Postgres and are idempotent.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

const rowCheck = proxyActivities<Activities>({
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
const localRowCheck = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  // As rowCheck: until the row is committed, for two minutes at most. The create path commits
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

/**
 * The post workflow of executions started before posts started postWorkflowV2: each decides by
 * its patch markers which path it takes (an execution without ROW_AT_PUBLISH_PATCH's marker
 * keeps the older ones), so its replay always matches.
 */
export async function postWorkflow(input: PostWorkflowInput): Promise<PostWorkflowState> {
  return runPost(input, (patch) => patched(patch));
}

/**
 * The post workflow: postWorkflow's code with every patch taken, so its history carries no patch
 * marker and no TemporalChangeVersion search-attribute upsert (two events a post less).
 */
export async function postWorkflowV2(input: PostWorkflowInput): Promise<PostWorkflowState> {
  return runPost(input, () => true);
}

/**
 * `patchTaken`: whether this execution takes the path of one of the patches above, all of which
 * came before postWorkflowV2 (postWorkflow asks patched(); postWorkflowV2 takes them all). A
 * later change calls patched() itself, in both types.
 */
async function runPost(input: PostWorkflowInput, patchTaken: (patch: string) => boolean): Promise<PostWorkflowState> {
  const { postId } = input;
  let retry = input.retry === true;
  const state: PostState = {
    // A retry run (input.retry: the earlier run had closed) starts publishing at once.
    phase: input.retry ? 'publishing' : 'scheduled',
    publishAt: input.publishAt,
    editsInFlight: 0,
    edited: false,
    cancelled: false,
    deleted: false,
    retryRequested: false,
    approval: input.approval ?? 'none',
  };
  handleRequests(postId, state);

  // Decided once, here: an execution that older code started (its history has no marker) keeps
  // the remote activities after it wakes, and its row check at the start, so its replay always
  // matches.
  const rowAtPublish = patchTaken(ROW_AT_PUBLISH_PATCH);
  // Every patch before it holds for an execution that has its marker: no marker of theirs.
  const has = (patch: string) => rowAtPublish || patchTaken(patch);
  const local = has(LOCAL_STEPS_PATCH);
  const steps = local ? localDb : db;

  let targets: Target[];
  if (retry) {
    targets = await db.startRetry(postId);
  } else {
    if (!rowAtPublish) {
      try {
        await waitForRow(postId, local);
      } catch {
        return done(state); // The row never appeared: there is nothing to publish.
      }
    }
    for (;;) {
      await sleepUntilDue(state);
      if (state.cancelled) return endCancelled(state);
      if (state.approval === 'none' || state.approval === 'approved' || !has(APPROVAL_PATCH)) break;
      const decided = await awaitApproval(state);
      if (state.cancelled) return endCancelled(state);
      if (decided === 'edited') continue; // publishAt may have moved: sleep again
      if (decided === 'late') {
        state.phase = 'publishing';
        await failUnapproved(postId, steps, rowAtPublish);
        return done(state);
      }
      // A rejection accepted since the approval was seen: wait again.
      if (!isApproved(state)) continue;
      break;
    }
    // No await between the checks above and this line: a cancel (or a change of decision)
    // accepted before it stops the publish; one arriving after it is refused by its validator.
    state.phase = 'publishing';
    const found = rowAtPublish ? await publishTargets(postId, steps) : await steps.startPublishing(postId);
    if (!found) return done(state); // The row never appeared (or is gone): there is nothing to publish.
    targets = found;
  }

  for (;;) {
    await publishAll(postId, targets, retry, steps, () => has(FOLLOW_UPS_PATCH));
    const outcome = await steps.finishPost(postId);
    if (outcome !== 'failed' || !has(AWAIT_RETRY_PATCH)) break;
    const retried = await awaitRetry(state, postId);
    if (state.cancelled) return endCancelled(state);
    if (retried === null) break; // The window closed: a later retry starts a new run.
    targets = retried;
    retry = true;
  }
  return done(state);
}

/** The Query, Updates and Signal. Each validator checks `state.phase` in the step that accepts its Update. */
function handleRequests(postId: string, state: PostState): void {
  setHandler(postStateQuery, () => view(state));
  setHandler(
    editPostUpdate,
    async (edit) => {
      state.editsInFlight++;
      try {
        // An edit that asks for approval again takes effect at once: nothing publishes meanwhile.
        if (edit.approval) state.approval = 'pending';
        await db.applyPostEdit({ postId, edit });
        if (edit.publishAt !== undefined) state.publishAt = edit.publishAt;
        state.edited = true;
      } finally {
        state.editsInFlight--;
      }
      return view(state);
    },
    {
      // Runs before the update is accepted: the check and the change are atomic with `phase`.
      validator: (_edit: PostEdit) => {
        if (state.phase !== 'scheduled') throw ApplicationFailure.nonRetryable(`the post is ${state.phase}`, FAILURE.notScheduled);
      },
    },
  );
  setHandler(
    decideApprovalUpdate,
    async (decision) => {
      // Set before the activity: the publish waits for it (editsInFlight), and a second decision
      // is validated against this one.
      state.approval = decision.decision === 'approve' ? 'approved' : 'rejected';
      state.editsInFlight++;
      try {
        await db.recordApprovalDecision({ postId, decision });
      } finally {
        state.editsInFlight--;
      }
      return view(state);
    },
    {
      validator: (decision) => {
        if (state.phase !== 'scheduled') throw ApplicationFailure.nonRetryable(`the post is ${state.phase}`, FAILURE.notScheduled);
        if (state.approval === 'none') throw ApplicationFailure.nonRetryable('the post needs no approval', FAILURE.noApproval);
        if (state.approval === (decision.decision === 'approve' ? 'approved' : 'rejected'))
          throw ApplicationFailure.nonRetryable(`the post is already ${state.approval}`, FAILURE.alreadyDecided);
      },
    },
  );
  setHandler(
    cancelPostUpdate,
    async () => {
      state.cancelled = true;
      state.phase = 'cancelled';
      // An edit accepted before the cancel lands first; the post is then deleted, never published.
      await condition(() => state.editsInFlight === 0);
      await db.deletePost(postId);
      state.deleted = true;
      return view(state);
    },
    {
      // Atomic with `phase`, like editPost's: once publishing has begun, the post is not cancelled.
      validator: () => {
        if (state.phase === 'cancelled') throw ApplicationFailure.nonRetryable('the post is already cancelled', FAILURE.cancelled);
        if (state.phase !== 'scheduled' && state.phase !== 'failed')
          throw ApplicationFailure.nonRetryable(`the post is ${state.phase}`, FAILURE.notScheduled);
      },
    },
  );
  setHandler(
    retryPostUpdate,
    async () => {
      requestRetry(state);
      // Answers once the failed channels are back in publishing (the API then shows them so).
      await condition(() => !state.retryRequested);
      return view(state);
    },
    {
      validator: () => {
        if (state.phase === 'cancelled') throw ApplicationFailure.nonRetryable('the post is cancelled', FAILURE.cancelled);
        if (state.phase !== 'failed') throw ApplicationFailure.nonRetryable(`the post is ${state.phase}`, FAILURE.notFailed);
      },
    },
  );
  // The Temporal UI's "Send a Signal" (name `retry`, no input): the same retry, ignored unless waiting for one.
  setHandler(retrySignal, () => {
    if (state.phase === 'failed') requestRetry(state);
  });
}

/** What the Query and the Updates answer. */
const view = (state: PostState): PostWorkflowState =>
  state.approval === 'none'
    ? { phase: state.phase, publishAt: state.publishAt }
    : { phase: state.phase, publishAt: state.publishAt, approval: state.approval };

/**
 * Accepted only while the workflow waits for a retry (phase 'failed'); moving to 'publishing' here
 * makes every later retry or cancel refuse until publishing ends again, so at most one is pending.
 */
function requestRetry(state: PostState): void {
  state.phase = 'publishing';
  state.retryRequested = true;
}

/**
 * Resolves once the post row is committed (confirmPost), rejects if it never is. Returns the
 * activity's own promise, with no async wrapper: what follows the confirmation then runs in the
 * same microtask turn relative to an Update handler resumed by the same activation, and an added
 * turn could reorder their commands against a recorded history.
 */
const waitForRow = (postId: string, local: boolean) => (local ? localRowCheck : rowCheck).confirmPost(postId);

/** Sleeps until publishAt; an applied edit starts the sleep over, a cancel ends it. */
async function sleepUntilDue(state: PostState): Promise<void> {
  for (;;) {
    state.edited = false;
    const wait = state.publishAt === null ? 0 : Date.parse(state.publishAt) - Date.now();
    if (wait > 0 && (await condition(() => state.edited || state.cancelled, wait))) {
      if (state.cancelled) return;
      continue;
    }
    // An edit accepted just as the timer fired finishes first; if it moved the time, sleep again.
    await condition(() => state.editsInFlight === 0);
    if (state.cancelled || !state.edited) return;
  }
}

/**
 * Once due, a post that is not approved waits for a decision or an edit, until APPROVAL_GRACE_MS
 * past its publishAt (a post to publish at once: past its start). 'decided': approved (or
 * cancelled); 'edited': sleep again, as the edit may have moved publishAt; 'late': the time ran out.
 */
async function awaitApproval(state: PostState): Promise<'decided' | 'edited' | 'late'> {
  state.edited = false;
  const due = state.publishAt === null ? workflowInfo().runStartTime.getTime() : Date.parse(state.publishAt);
  const left = due + APPROVAL_GRACE_MS - Date.now();
  const woken = left > 0 && (await condition(() => state.approval === 'approved' || state.cancelled || state.edited, left));
  // A decision or an edit accepted just then lands first.
  await condition(() => state.editsInFlight === 0);
  if (state.cancelled || state.approval === 'approved') return 'decided';
  if (state.edited) return 'edited';
  return woken ? 'decided' : 'late';
}

const isApproved = (state: PostState) => state.approval === 'approved';

/**
 * startPublishing for an execution that did not check its row at its start (ROW_AT_PUBLISH_PATCH):
 * a row not committed yet is waited for (confirmPost, as at the start of older executions: two
 * minutes at most); null when none appears.
 */
async function publishTargets(postId: string, steps: Steps): Promise<Target[] | null> {
  const targets = await steps.startPublishing(postId);
  if (targets) return targets;
  try {
    await waitForRow(postId, true);
  } catch {
    return null;
  }
  return steps.startPublishing(postId);
}

/** The approval did not come in time: every channel fails with not_approved, nothing is sent. */
async function failUnapproved(postId: string, steps: Steps, rowAtPublish: boolean): Promise<void> {
  const targets = rowAtPublish ? await publishTargets(postId, steps) : await steps.startPublishing(postId);
  if (!targets) return;
  const failure: ChannelFailure = {
    error: 'The post was not approved in time; it was not published.',
    errorCode: 'not_approved',
    retryable: false,
  };
  for (const { channelId } of targets) await steps.recordChannelFailure({ postId, channelId, ...failure });
  await steps.finishPost(postId);
}

/**
 * Publishes to each target channel in parallel; within a channel, the post then its follow-up
 * items one after another, each sent only once the one before is recorded. A channel whose
 * publish fails is recorded failed, at the item that failed (a retry resumes there).
 * `followUpsPatched` (FOLLOW_UPS_PATCH) is asked only of a channel that has follow-ups.
 */
async function publishAll(postId: string, targets: Target[], retry: boolean, steps: Steps, followUpsPatched: () => boolean): Promise<void> {
  await Promise.all(
    targets.map(async ({ channelId, platform, followUps }) => {
      let position = 0;
      try {
        const publisher = publisherFor(platform);
        await publisher.publishToChannel(retry ? { postId, channelId, retry } : { postId, channelId });
        if (followUps && followUpsPatched()) {
          for (position = 1; position <= followUps; position++) {
            await publisher.publishFollowUp(retry ? { postId, channelId, position, retry } : { postId, channelId, position });
          }
        }
      } catch (err) {
        await steps.recordChannelFailure(
          position ? { postId, channelId, position, ...failureInfo(err) } : { postId, channelId, ...failureInfo(err) },
        );
      }
    }),
  );
}

/**
 * A failed post waits up to RETRY_WINDOW_MS for a retry or a cancel. Returns the channels to
 * publish again (their rows back in publishing, which answers the retryPost Update), or null
 * when the post was cancelled or the window closed.
 */
async function awaitRetry(state: PostState, postId: string): Promise<Target[] | null> {
  state.phase = 'failed';
  const woken = await condition(() => state.retryRequested || state.cancelled, RETRY_WINDOW_MS);
  if (state.cancelled || !woken) return null;
  const targets = await db.startRetry(postId);
  state.retryRequested = false;
  return targets;
}

/** A cancelled post's workflow ends once the row is deleted and every Update has been answered. */
async function endCancelled(state: PostState): Promise<PostWorkflowState> {
  await condition(() => state.deleted && allHandlersFinished());
  return view(state);
}

function done(state: PostState): PostWorkflowState {
  state.phase = 'done';
  return view(state);
}
