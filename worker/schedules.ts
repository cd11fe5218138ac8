// Temporal Schedules the service relies on (sweeps and reconcilers that run every few seconds or
// minutes). Each worker process makes sure they exist when it starts: creating one that is
// already there is not an error, and an existing one is updated to the spec below, so a new
// release changes the interval or arguments without an operator. Temporal runs them, not a loop
// of ours (no cron loop, no setTimeout scheduler).
import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Logger } from '../lib/log.ts';
import {
  POST_RECONCILER_EVERY,
  POST_RECONCILER_INPUT,
  POST_RECONCILER_SCHEDULE_ID,
  POST_RECONCILER_WORKFLOW_TYPE,
} from '../workflows/post-reconciler-types.ts';
import {
  METRICS_SWEEP_EVERY,
  METRICS_SWEEP_INPUT,
  METRICS_SWEEP_SCHEDULE_ID,
  METRICS_SWEEP_WORKFLOW_TYPE,
} from '../workflows/metrics-sweep-types.ts';
import {
  WEBHOOK_OUTBOX_SWEEP_EVERY,
  WEBHOOK_OUTBOX_SWEEP_INPUT,
  WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID,
  WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
} from '../workflows/webhook-outbox-sweep-types.ts';
import { FEED_POLL_EVERY, FEED_POLL_INPUT, FEED_POLL_SCHEDULE_ID, FEED_POLL_WORKFLOW_TYPE } from '../workflows/feed-poll-types.ts';
import {
  COMMENTS_SWEEP_EVERY,
  COMMENTS_SWEEP_INPUT,
  COMMENTS_SWEEP_SCHEDULE_ID,
  COMMENTS_SWEEP_WORKFLOW_TYPE,
} from '../workflows/comments-sweep-types.ts';

export interface ServiceSchedule {
  /** The schedule's id in the namespace, e.g. `postpilot-webhook-outbox-sweep`. */
  id: string;
  /** The workflow type it starts (registered in workflows/index.ts). */
  workflowType: string;
  /** How often, e.g. '30 seconds'. */
  every: string;
  args?: unknown[];
  /** Workflow run timeout for each run (a sweep that hangs does not block the next one forever). */
  runTimeout?: string;
}

/**
 * Every schedule the service needs. Add an entry here (one line per schedule); the worker creates
 * or updates it at start. Overlap policy SKIP: a sweep still running when the next is due is not doubled.
 */
export const SERVICE_SCHEDULES: ServiceSchedule[] = [
  // Starts committed posts, series and uploads whose workflow start was lost (domain/workflow-starts.ts, workflows/post-reconciler.ts).
  {
    id: POST_RECONCILER_SCHEDULE_ID,
    workflowType: POST_RECONCILER_WORKFLOW_TYPE,
    every: POST_RECONCILER_EVERY,
    args: [POST_RECONCILER_INPUT],
  },
  // Starts webhook deliveries committed but never started (domain/workflow-starts.ts, workflows/webhook-outbox-sweep.ts).
  {
    id: WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID,
    workflowType: WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
    every: WEBHOOK_OUTBOX_SWEEP_EVERY,
    args: [WEBHOOK_OUTBOX_SWEEP_INPUT],
  },
  // Reads the published posts' metrics that fell due (activities/metrics.ts, workflows/metrics-sweep.ts).
  {
    id: METRICS_SWEEP_SCHEDULE_ID,
    workflowType: METRICS_SWEEP_WORKFLOW_TYPE,
    every: METRICS_SWEEP_EVERY,
    args: [METRICS_SWEEP_INPUT],
    runTimeout: '30 minutes',
  },
  // Reads the RSS and Atom feeds that fell due and posts their new items (activities/feeds.ts, workflows/feed-poll.ts).
  {
    id: FEED_POLL_SCHEDULE_ID,
    workflowType: FEED_POLL_WORKFLOW_TYPE,
    every: FEED_POLL_EVERY,
    args: [FEED_POLL_INPUT],
    runTimeout: '30 minutes',
  },
  // Follows published posts and reads the comments under them that fell due (activities/comments.ts, workflows/comments-sweep.ts).
  {
    id: COMMENTS_SWEEP_SCHEDULE_ID,
    workflowType: COMMENTS_SWEEP_WORKFLOW_TYPE,
    every: COMMENTS_SWEEP_EVERY,
    args: [COMMENTS_SWEEP_INPUT],
    runTimeout: '30 minutes',
  },
];

export async function ensureSchedules(
  client: Client,
  opts: { taskQueue: string; logger: Logger; schedules?: ServiceSchedule[] },
): Promise<void> {
  for (const s of opts.schedules ?? SERVICE_SCHEDULES) {
    const action = {
      type: 'startWorkflow' as const,
      workflowType: s.workflowType,
      args: s.args ?? [],
      taskQueue: opts.taskQueue,
      workflowId: s.id,
      workflowRunTimeout: s.runTimeout ?? '5 minutes',
    };
    const spec = { intervals: [{ every: s.every }] };
    const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
    try {
      await client.schedule.create({ scheduleId: s.id, spec, action, policies });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) {
        opts.logger.warn('could not create a Temporal schedule', { scheduleId: s.id, error: err });
        continue;
      }
      await client.schedule
        .getHandle(s.id)
        .update((prev) => ({ ...prev, spec, action, policies }))
        .catch((e: unknown) => opts.logger.warn('could not update a Temporal schedule', { scheduleId: s.id, error: e }));
    }
  }
}
