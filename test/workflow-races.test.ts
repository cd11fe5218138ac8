// The post workflow's races, with its activities mocked (plain functions over an in-memory post
// row) on a time-skipping server: fast, and each moment held open exactly where the race is.
// (a) an edit not yet applied as the publish timer fires: publishing waits for it, and a moved
//     time re-arms the timer; (b) an edit while publishing: the Update validator refuses it,
//     nothing is applied, and the post is published once with its original text; (c) a cancel
//     accepted after the timer fired, while that edit still holds publishing back: nothing is
//     published, the workflow ends; a cancel while publishing is refused by its validator.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { randomUUID } from 'node:crypto';
import { Client, WorkflowUpdateFailedError, WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../activities/index.ts';
import { findTemporalTestServer } from '../lib/temporal-binaries.ts';
import {
  cancelPostUpdate,
  editPostUpdate,
  FAILURE,
  postStateQuery,
  platformTaskQueue,
  POST_WORKFLOW_TYPE,
  postWorkflowId,
  type PostEdit,
  type PostWorkflow,
} from '../workflows/post-types.ts';
import { harness } from './harness/index.ts';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Holds the publish activity open: `reached` once it runs, until the test calls `open`. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let entered!: () => void;
  const reached = new Promise<void>((r) => (entered = r));
  return { open, opened, entered, reached };
}

/** What the mocked activities saw, in order, and the post row they share. */
interface Row {
  content: string;
  log: string[];
  published: string[];
  /**
   * applyPostEdit fails (retryably: the database is away) until this is false. Between its
   * retries no activity runs, so the server may skip time: the edit stays accepted but not applied
   * across the publish timer. (An activity held open would lock time skipping: real seconds.)
   */
  editBlocked?: boolean;
  editAttempts: number;
  publishGate?: ReturnType<typeof gate>;
}
const rows = new Map<string, Row>();
const row = (postId: string) => rows.get(postId)!;

type Mocked = Pick<
  Activities,
  'confirmPost' | 'applyPostEdit' | 'startPublishing' | 'publishToChannel' | 'recordChannelFailure' | 'finishPost' | 'deletePost'
>;
const activities: Mocked = {
  async confirmPost(postId) {
    row(postId).log.push('confirmPost');
  },
  async applyPostEdit({ postId, edit }) {
    const r = row(postId);
    r.editAttempts++;
    if (r.editBlocked) throw ApplicationFailure.retryable('the database is unavailable', 'TestOutage');
    if (edit.content !== undefined) r.content = edit.content;
    r.log.push('applyPostEdit');
  },
  async startPublishing(postId) {
    row(postId).log.push('startPublishing');
    return [{ channelId: 'ch_1', platform: 'MASTODON' }];
  },
  async publishToChannel({ postId }) {
    const r = row(postId);
    r.log.push('publishToChannel');
    r.publishGate?.entered();
    await r.publishGate?.opened;
    r.published.push(r.content); // what the real activity reads from the row as it sends
    return { platformPostId: String(r.published.length), url: `https://mastodon.example/@user/${r.published.length}` };
  },
  async recordChannelFailure({ postId, error }) {
    row(postId).log.push(`recordChannelFailure:${error}`);
  },
  async finishPost(postId) {
    row(postId).log.push('finishPost');
    return 'published';
  },
  async deletePost(postId) {
    row(postId).log.push('deletePost');
  },
};

let env: TestWorkflowEnvironment;
let client: Client;
let taskQueue: string;
let workers: Worker[];
let running: Promise<unknown>;

beforeAll(async () => {
  // The harness installs the SDK runtime (before any connection) and holds the shared bundle.
  const workflowBundle = await (await harness()).workflowBundle();
  // Its own server: no other test's timers hold this clock back.
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTemporalTestServer() } },
  });
  // A client that never unlocks time skipping by itself: the clock moves only by env.sleep.
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  taskQueue = `races-${randomUUID()}`;
  const connection = env.nativeConnection;
  workers = [
    await Worker.create({ connection, taskQueue, workflowBundle, activities, maxCachedWorkflows: 0 }),
    await Worker.create({
      connection,
      taskQueue: platformTaskQueue(taskQueue, 'MASTODON'),
      activities: { publishToChannel: activities.publishToChannel },
    }),
  ];
  running = Promise.all(workers.map((w) => w.run()));
});
afterAll(async () => {
  for (const w of workers ?? []) if (w.getState() === 'RUNNING') w.shutdown();
  await running?.catch(() => {});
  await env?.teardown();
});

const handles: WorkflowHandle[] = [];
afterEach(async () => {
  // Never leave an activity held or a workflow waiting: the next test shares the clock.
  for (const r of rows.values()) {
    r.editBlocked = false;
    r.publishGate?.open();
  }
  await Promise.all(handles.splice(0).map((h) => h.terminate('test finished').catch(() => {})));
});

async function startPost(publishIn: number | null) {
  const postId = `post_${randomUUID()}`;
  rows.set(postId, { content: 'original text', log: [], published: [], editAttempts: 0 });
  const now = await env.currentTimeMs();
  const publishAt = publishIn === null ? null : new Date(now + publishIn).toISOString();
  const handle = await client.workflow.start<PostWorkflow>(POST_WORKFLOW_TYPE, {
    taskQueue,
    workflowId: postWorkflowId(postId),
    args: [{ postId, organizationId: 'org_1', publishAt }],
  });
  handles.push(handle);
  return { postId, handle, publishAt };
}

const edit = (e: Partial<PostEdit>): PostEdit => ({ channelContent: { ch_1: e.content ?? 'original text' }, ...e });

async function events(handle: WorkflowHandle) {
  return (await handle.fetchHistory()).events ?? [];
}
/** A protobuf Timestamp or Duration in milliseconds. */
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

/** Polls the history until `done` holds for it. */
async function historyUntil(handle: WorkflowHandle, what: string, done: (evs: HistoryEvent[]) => boolean) {
  for (let i = 0; i < 500; i++) {
    const evs = await events(handle);
    if (done(evs)) return evs;
    await Bun.sleep(10);
  }
  throw new Error(`no ${what} in the history: ${(await events(handle)).map((e) => EventType[e.eventType!]).join(' ')}`);
}
const has = (event: (e: HistoryEvent) => boolean) => (evs: HistoryEvent[]) => evs.some(event);
/** The worker has finished the workflow task that followed `event`: that task's commands are in the history. */
const settledAfter = (event: (e: HistoryEvent) => boolean) => (evs: HistoryEvent[]) => {
  const at = evs.findIndex(event);
  return at >= 0 && evs.slice(at).some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
};

const isType = (t: number) => (e: HistoryEvent) => e.eventType === t;
const scheduled = (evs: HistoryEvent[], activity: string) =>
  evs.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
const timersStarted = (evs: HistoryEvent[]) => evs.filter(isType(EventType.EVENT_TYPE_TIMER_STARTED));
/** The activity's name in its local-activity marker (workflows/post.ts runs startPublishing locally: LOCAL_STEPS_PATCH). */
const localActivity = (e: HistoryEvent) => {
  const m = e.markerRecordedEventAttributes;
  const data = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0] : undefined;
  return data ? defaultPayloadConverter.fromPayload<{ activity_type: string }>(data).activity_type : undefined;
};
/** The activity, scheduled (a round trip through Temporal) or run locally in the workflow task. */
const ran = (evs: HistoryEvent[], activity: string) => [...scheduled(evs, activity), ...evs.filter((e) => localActivity(e) === activity)];

const MINUTE = 60_000;

/** A post due in a minute; an edit is accepted but its activity keeps failing; the timer fires meanwhile. */
async function editPendingAtTimer(change: Partial<PostEdit>) {
  const post = await startPost(MINUTE);
  const r = row(post.postId);
  r.editBlocked = true;
  await historyUntil(post.handle, 'timer', has(isType(EventType.EVENT_TYPE_TIMER_STARTED)));
  // Accepted by the validator (the post is still scheduled), then applyPostEdit fails and retries.
  const update = await post.handle.startUpdate(editPostUpdate, { args: [edit(change)], waitForStage: WorkflowUpdateStage.ACCEPTED });
  await env.sleep(1.5 * MINUTE);
  // The timer fired (at 1 min) and the workflow task after it is done: it did not start publishing.
  const evs = await historyUntil(post.handle, 'task after the timer fired', settledAfter(isType(EventType.EVENT_TYPE_TIMER_FIRED)));
  expect(ran(evs, 'startPublishing')).toHaveLength(0);
  expect(r.editAttempts).toBeGreaterThan(1);
  // Nothing ran before the timer: the row is checked when the post is due (ROW_AT_PUBLISH_PATCH).
  expect(r.log).toEqual([]);
  expect((await post.handle.query(postStateQuery)).phase).toBe('scheduled');
  return { ...post, r, update };
}

describe('post workflow races (mocked activities)', () => {
  test('(a) an edit moving the time is pending as the timer fires: nothing publishes until it is applied, then the timer is re-armed for the new time', async () => {
    const newTime = new Date((await env.currentTimeMs()) + 10 * MINUTE).toISOString();
    const { handle, r, update } = await editPendingAtTimer({ content: 'edited text', publishAt: newTime });

    // The database is back: the next retry (within a minute) applies the edit; its new time
    // re-arms the timer, and still nothing is published.
    r.editBlocked = false;
    await env.sleep(MINUTE);
    expect(await update.result()).toEqual({ phase: 'scheduled', publishAt: newTime });
    let evs = await historyUntil(handle, 'second timer', (e) => timersStarted(e).length === 2);
    const rearmed = timersStarted(evs)[1]!;
    const firesAt = ms(rearmed.eventTime) + ms(rearmed.timerStartedEventAttributes!.startToFireTimeout);
    expect(Math.abs(firesAt - Date.parse(newTime))).toBeLessThan(1000);
    expect(ran(evs, 'startPublishing')).toHaveLength(0);
    expect(r.log).toEqual(['applyPostEdit']);

    await env.sleep(10 * MINUTE);
    expect(await handle.result()).toEqual({ phase: 'done', publishAt: newTime });
    evs = await events(handle);
    expect(ms(ran(evs, 'startPublishing')[0]!.eventTime)).toBeGreaterThanOrEqual(Date.parse(newTime));
    expect(r.published).toEqual(['edited text']);
    expect(r.log).toEqual(['applyPostEdit', 'startPublishing', 'publishToChannel', 'finishPost']);
  });

  test('(a) an edit of the text only is pending as the timer fires: the post publishes once, right after it, with the edited text', async () => {
    const { handle, r, update, publishAt } = await editPendingAtTimer({ content: 'edited text' });

    r.editBlocked = false;
    await env.sleep(MINUTE);
    expect(await update.result()).toEqual({ phase: 'scheduled', publishAt });
    expect(await handle.result()).toEqual({ phase: 'done', publishAt });
    expect(timersStarted(await events(handle))).toHaveLength(1);
    expect(r.published).toEqual(['edited text']);
    expect(r.log).toEqual(['applyPostEdit', 'startPublishing', 'publishToChannel', 'finishPost']);
  });

  test('(b) an edit while publishing is refused by the Update validator: nothing applied, published once with the original text', async () => {
    const { postId, handle } = await startPost(null);
    const r = row(postId);
    r.publishGate = gate();
    await r.publishGate.reached;

    const err = await handle.executeUpdate(editPostUpdate, { args: [edit({ content: 'too late' })] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause).toMatchObject({ type: FAILURE.notScheduled, message: 'the post is publishing', nonRetryable: true });

    r.publishGate.open();
    expect(await handle.result()).toEqual({ phase: 'done', publishAt: null });
    expect(r.published).toEqual(['original text']);
    expect(r.log).toEqual(['startPublishing', 'publishToChannel', 'finishPost']);
    // A rejected Update leaves no trace in the history (it was never accepted).
    const evs = await events(handle);
    expect(evs.filter(isType(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED))).toHaveLength(0);
    expect(scheduled(evs, 'publishToChannel')).toHaveLength(1);
  });

  test('(c) a cancel accepted after the timer fired, while an edit still holds publishing back: nothing is published, the workflow ends cancelled', async () => {
    const { handle, r, update, publishAt } = await editPendingAtTimer({ content: 'edited text' });
    // The timer has fired, the post is still 'scheduled' (the edit is not applied yet): accepted.
    const cancel = await handle.startUpdate(cancelPostUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });

    r.editBlocked = false;
    await env.sleep(MINUTE);
    expect(await update.result()).toMatchObject({ publishAt });
    expect(await cancel.result()).toEqual({ phase: 'cancelled', publishAt });
    expect(await handle.result()).toEqual({ phase: 'cancelled', publishAt });
    expect(r.published).toEqual([]);
    // The edit lands first, then the row is deleted; publishing never starts.
    expect(r.log).toEqual(['applyPostEdit', 'deletePost']);
    expect(ran(await events(handle), 'startPublishing')).toHaveLength(0);
  });

  test('(c) a cancel while publishing is refused by its validator: published once, nothing deleted', async () => {
    const { postId, handle } = await startPost(null);
    const r = row(postId);
    r.publishGate = gate();
    await r.publishGate.reached;
    const err = await handle.executeUpdate(cancelPostUpdate).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as WorkflowUpdateFailedError).cause).toMatchObject({ type: FAILURE.notScheduled, message: 'the post is publishing' });
    r.publishGate.open();
    expect(await handle.result()).toEqual({ phase: 'done', publishAt: null });
    expect(r.published).toEqual(['original text']);
    expect(r.log).not.toContain('deletePost');
  });
});
