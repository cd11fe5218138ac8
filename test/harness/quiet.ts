// The events that show a part of the system is done, for the tests' "nothing more happens" checks:
// a fixed short sleep before such a check proves nothing on a slow machine; a workflow that has
// closed, or that waits with nothing in flight, does.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { WebhookDelivery, WebhookEvent } from '../../db/entities/index.ts';
import { webhookEventWorkflowId } from '../../workflows/webhook-delivery-types.ts';
import type { Orm } from '../../db/orm.ts';

const E = temporal.api.enums.v1.EventType;

const CLOSING = new Set([
  E.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  E.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
]);
const WORKFLOW_TASK = new Set([
  E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
  E.EVENT_TYPE_WORKFLOW_TASK_STARTED,
  E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
  E.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
]);

/** Polls (real time) until fn() answers something, for at most `ms`. */
async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** A workflow not started yet reads as undefined (its starter may not have got there). */
async function orNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** Until the workflow (its latest run) has closed, whichever way; its status. Nothing runs in it after that. */
export function closed(client: Client, workflowId: string, ms = 30_000): Promise<string> {
  return until(
    `${workflowId} to close`,
    async () => {
      const d = await orNotFound(client.workflow.getHandle(workflowId).describe());
      return d && d.status.name !== 'RUNNING' ? d.status.name : undefined;
    },
    ms,
  );
}

/**
 * Until the workflow can do nothing more by itself: 'closed', or 'waiting' — running with no
 * workflow task scheduled or running and no activity pending, so only a timer, a Signal or an
 * Update moves it on. Read from one snapshot of its history (the time-skipping test server leaves
 * describe()'s pendingWorkflowTask empty): each event that wakes a workflow is written together
 * with the workflow task it schedules.
 */
export function quiet(client: Client, workflowId: string, ms = 30_000): Promise<'closed' | 'waiting'> {
  return until(
    `${workflowId} to wait or close`,
    async () => {
      const history = await orNotFound(client.workflow.getHandle(workflowId).fetchHistory());
      const events = history?.events ?? [];
      if (!events.length) return undefined;
      if (CLOSING.has(events.at(-1)!.eventType!)) return 'closed';
      const lastTask = events.findLast((e) => WORKFLOW_TASK.has(e.eventType!));
      if (lastTask?.eventType !== E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return undefined;
      const ended = new Set(
        events.flatMap((e) => {
          const a =
            e.activityTaskCompletedEventAttributes ??
            e.activityTaskFailedEventAttributes ??
            e.activityTaskTimedOutEventAttributes ??
            e.activityTaskCanceledEventAttributes;
          return a ? [String(a.scheduledEventId)] : [];
        }),
      );
      const pending = events.some((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && !ended.has(String(e.eventId)));
      return pending ? undefined : 'waiting';
    },
    ms,
  );
}

/**
 * The organization's webhook events of this type, once every delivery of them is over (its
 * workflow closed: no attempt is left to send). What a receiver has got of them then is all it
 * will get. The events are written with the change they announce, so a caller that has seen the
 * change commit has them all.
 */
export async function deliveredEvents(client: Client, orm: Orm, organizationId: string, type: string): Promise<number> {
  const em = orm.em.fork();
  const events = await em.find(WebhookEvent, { organization: organizationId, type });
  const withDeliveries = events.length ? await em.find(WebhookDelivery, { event: { $in: events.map((e) => e.id) } }) : [];
  for (const eventId of new Set(withDeliveries.map((d) => d.event))) await closed(client, webhookEventWorkflowId(eventId));
  return events.length;
}
