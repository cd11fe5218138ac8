// A row and its workflow: one protocol for every row that owns a workflow — a post, a post's
// retry, a series, an upload's media item, a webhook delivery (docs/decisions.md "A row and its workflow").
//
// 1. The row, or the change that needs a workflow, is committed with workflow_pending = true.
//    No lock is held across a Temporal call, and no workflow ever acts on an uncommitted row.
// 2. After the commit, startAfterCommit starts the workflow. Its workflow id is the start's
//    idempotency key: a workflow already started counts as started.
// 3. markStarted clears workflow_pending. The call that clears it also writes, in the same
//    transaction, what follows from the start (a post's post.scheduled event), so that is written
//    exactly once, and only for a row whose workflow exists.
// A start that fails takes the change back (the kind's withdraw, under the row lock) and the
// request answers 503; a row the withdrawal finds no longer marked was started by the reconciler
// meanwhile, and counts as started. The reconciler (reconcilePendingStarts, run by Temporal
// Schedules: worker/schedules.ts) starts every row still marked some seconds after it was
// marked, under its row lock (skip locked), so it never races the request's own start or
// withdrawal. A process killed between the commit and the start loses nothing and doubles nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowStartOptions } from '@temporalio/client';
import {
  WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
  type WebhookDeliveriesInput,
  webhookDeliveryWorkflowId,
  webhookEventWorkflowId,
} from '../workflows/webhook-delivery-types.ts';
import { sql } from '../db/sql.ts';
import { isTemporalOutage, type TemporalDeps, temporalUnavailable, terminateInBackground, withTemporalDeadline } from './temporal-calls.ts';

/** A workflow start: the contract's type name and the options (workflow id, input, search attributes, reuse policy). */
export interface PendingStart {
  workflowType: string;
  options: Omit<WorkflowStartOptions, 'taskQueue'> & { workflowId: string };
}

/** What the protocol needs to know of one kind of row. */
export interface PendingKind<Row extends { id: string }> {
  /** Its table; it has the columns id and workflow_pending. */
  table: 'posts' | 'series' | 'webhook_deliveries' | 'media_items' | 'comment_replies';
  /** The column that holds when the row was last marked: updated_at where a row is marked again (a retry), else created_at. */
  markedAt: 'created_at' | 'updated_at';
  /** The columns `Row` reads (a fixed list, never a value). */
  columns: string;
  /** The workflow the row wants now; null when it no longer wants one (deleted, moved on): only the mark is cleared. */
  startFor(row: Row): PendingStart | null;
  /** Written by the call that clears the mark, in its transaction; returns the webhook deliveries to dispatch after the commit. */
  onStarted?(tx: EntityManager, row: Row): Promise<string[]>;
  /**
   * A SQL condition on the row under which onStarted writes nothing (no webhook endpoint wants
   * the event): the mark is then cleared by one statement, without a transaction.
   */
  quietWhen?: string;
  /** Takes back a change whose start failed, in the transaction that holds the row lock. Without it, the row is left to the reconciler. */
  withdraw?(tx: EntityManager, row: Row): Promise<void>;
}

/** Bound on one start made by the reconciler while it holds the row lock. */
const RECONCILER_START_DEADLINE_MS = 10_000;

async function lockMarked<Row extends { id: string }>(
  tx: EntityManager,
  kind: PendingKind<Row>,
  id: string,
  how: 'wait' | 'skip locked',
): Promise<Row | undefined> {
  const rows = await sql<Row>(
    tx,
    `select ${kind.columns} from ${kind.table} where id = ? and workflow_pending for update${how === 'skip locked' ? ' skip locked' : ''}`,
    [id],
  );
  return rows[0];
}

/** One start; a workflow already running under its id is left as it is. */
export async function startOnce(client: Client, taskQueue: string, start: PendingStart): Promise<'started' | 'already started'> {
  try {
    await client.workflow.start(start.workflowType, { ...start.options, taskQueue } as WorkflowStartOptions);
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already started';
    throw err;
  }
}

/** What a request answers when its start fails: the change was taken back, or kept for the reconciler (Postgres failed too). */
export interface StartFailureMessages {
  withdrawn: string;
  kept: string;
}

/**
 * Steps 2 and 3 for a row the caller has just committed, inside its request (the Temporal
 * deadline applies). Throws when the start failed and the change was taken back (503 on an
 * outage), or could not be (503 saying it was kept). Then dispatches the deliveries of what
 * markStarted wrote; a failure there is left to the outbox sweep.
 */
export async function startAfterCommit<Row extends { id: string }>(
  em: EntityManager,
  temporal: TemporalDeps,
  kind: PendingKind<Row>,
  row: Row,
  messages: StartFailureMessages,
): Promise<void> {
  const start = kind.startFor(row);
  if (start) {
    try {
      await withTemporalDeadline(temporal, () => startOnce(temporal.client, temporal.taskQueue, start));
    } catch (err) {
      // Without a withdrawal the row stays marked, for the reconciler.
      if (!kind.withdraw) return;
      await withdrawAfterFailedStart(em, temporal, kind, row.id, start, err, messages);
    }
  }
  // The workflow exists whatever happens from here: a failure to record it leaves the mark for the
  // reconciler, which then finds the workflow started and records it (its event included).
  const deliveries = await markStarted(em, kind, row).catch(() => []);
  await withTemporalDeadline(temporal, () => dispatchWebhookDeliveries(em, temporal, deliveries)).catch(() => {});
}

async function withdrawAfterFailedStart<Row extends { id: string }>(
  em: EntityManager,
  temporal: TemporalDeps,
  kind: PendingKind<Row>,
  id: string,
  start: PendingStart,
  err: unknown,
  messages: StartFailureMessages,
): Promise<void> {
  let withdrawn: boolean;
  try {
    // Waits for the reconciler's lock, if it holds the row: it then finds the row no longer marked.
    withdrawn = await em.fork().transactional(async (tx) => {
      const locked = await lockMarked(tx, kind, id, 'wait');
      if (!locked) return false;
      await kind.withdraw!(tx, locked);
      return true;
    });
  } catch {
    throw temporalUnavailable(messages.kept, err);
  }
  // Started by the reconciler meanwhile: it exists, and the request succeeds.
  if (!withdrawn) return;
  // A start that timed out may still have reached Temporal: that workflow goes too (should this
  // fail, it finds no row, or rows no longer waiting for it, and ends by itself).
  terminateInBackground(temporal, start.options.workflowId, 'its row was withdrawn: the start did not answer');
  if (isTemporalOutage(err)) throw temporalUnavailable(messages.withdrawn, err);
  throw err;
}

/**
 * Step 3: clears the mark; when this call is the one that cleared it, runs the kind's onStarted in
 * the same transaction. Returns the deliveries to dispatch after the commit ([] when already cleared).
 */
export async function markStarted<Row extends { id: string }>(em: EntityManager, kind: PendingKind<Row>, row: Row): Promise<string[]> {
  const clear = `update ${kind.table} set workflow_pending = false where id = ? and workflow_pending`;
  if (!kind.onStarted) {
    await sql(em.fork(), clear, [row.id]);
    return [];
  }
  if (kind.quietWhen) {
    const cleared = await sql(em.fork(), `${clear} and (${kind.quietWhen}) returning id`, [row.id]);
    if (cleared.length) return [];
  }
  return em.fork().transactional(async (tx) => {
    const cleared = await sql(tx, `${clear} returning id`, [row.id]);
    return cleared.length ? kind.onStarted!(tx, row) : [];
  });
}

export interface ReconcileResult {
  /** Workflows this run started. */
  started: number;
  /** Rows whose workflow already existed (the request started it; recording that was lost). */
  alreadyStarted: number;
  /** Rows that no longer wanted a workflow: only the mark was cleared. */
  cleared: number;
}

/**
 * The reconciler: starts the workflow of each row marked for at least `olderThanMs` since its last
 * change, each under its row lock (a row the request, or another run, holds is left for later).
 */
export async function reconcilePendingStarts<Row extends { id: string }>(
  em: EntityManager,
  temporal: { client: Client; taskQueue: string },
  kind: PendingKind<Row>,
  opts: { olderThanMs: number; limit: number; now: Date; beat?: () => void },
): Promise<ReconcileResult> {
  const result: ReconcileResult = { started: 0, alreadyStarted: 0, cleared: 0 };
  const candidates = await sql<{ id: string }>(
    em.fork(),
    `select id from ${kind.table} where workflow_pending and ${kind.markedAt} < ? order by ${kind.markedAt} limit ?`,
    [new Date(opts.now.getTime() - opts.olderThanMs), opts.limit],
  );
  for (const { id } of candidates) {
    opts.beat?.();
    const deliveries = await em.fork().transactional(async (tx) => {
      const row = await lockMarked(tx, kind, id, 'skip locked');
      if (!row) return [];
      const start = kind.startFor(row);
      if (start) {
        const outcome = await temporal.client.withDeadline(Date.now() + RECONCILER_START_DEADLINE_MS, () =>
          startOnce(temporal.client, temporal.taskQueue, start),
        );
        if (outcome === 'started') result.started++;
        else result.alreadyStarted++;
      } else result.cleared++;
      await sql(tx, `update ${kind.table} set workflow_pending = false where id = ?`, [id]);
      return start && kind.onStarted ? kind.onStarted(tx, row) : [];
    });
    await dispatchWebhookDeliveries(em, temporal, deliveries);
  }
  return result;
}

/** A delivery row: its event's deliveries share one workflow, `whe-<eventId>`, which the first of them to be started starts. */
export const WEBHOOK_DELIVERY_STARTS: PendingKind<EventDeliveries & { id: string }> = {
  table: 'webhook_deliveries',
  markedAt: 'created_at',
  columns: `id, event_id as "eventId",
    array(select x.id from webhook_deliveries x where x.event_id = webhook_deliveries.event_id order by x.id) as "deliveryIds"`,
  startFor: (row) => eventDeliveriesStart(row),
  // The workflow started is the whole event's: its other deliveries' marks go with this one's.
  async onStarted(tx, row) {
    await sql(tx, 'update webhook_deliveries set workflow_pending = false where event_id = ? and id <> ? and workflow_pending', [
      row.eventId,
      row.id,
    ]);
    return [];
  },
};

/** An event and all of its deliveries, in id order. */
interface EventDeliveries {
  eventId: string;
  deliveryIds: string[];
}

/** The one workflow of an event's deliveries: the request that commits the event and the outbox sweep start the same. */
function eventDeliveriesStart({ eventId, deliveryIds }: EventDeliveries): PendingStart {
  return {
    workflowType: WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
    options: { workflowId: webhookEventWorkflowId(eventId), args: [{ deliveryIds } satisfies WebhookDeliveriesInput] },
  };
}

/** A finished delivery sent again: the same workflow for it alone, `whd-<deliveryId>` (services/webhooks.ts redeliver). */
export function redeliveryStart(deliveryId: string): PendingStart {
  return {
    workflowType: WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
    options: { workflowId: webhookDeliveryWorkflowId(deliveryId), args: [{ deliveryIds: [deliveryId] } satisfies WebhookDeliveriesInput] },
  };
}

/**
 * Steps 2 and 3 for webhook deliveries just committed (domain/webhooks/outbox.ts writes them with
 * the change they announce), at a cost that does not grow with their number: one start per event,
 * whatever its number of endpoints, then one statement clears the marks. Nothing is withdrawn: a
 * delivery whose start fails stays marked, and the outbox sweep starts it.
 */
export async function dispatchWebhookDeliveries(
  em: EntityManager,
  temporal: { client: Client; taskQueue: string },
  deliveryIds: string[],
): Promise<void> {
  if (deliveryIds.length === 0) return;
  const events = await sql<EventDeliveries>(
    em.fork(),
    `select event_id as "eventId", array_agg(id order by id) as "deliveryIds" from webhook_deliveries
      where event_id in (select event_id from webhook_deliveries where id in (?)) group by event_id`,
    [deliveryIds],
  );
  for (const event of events) await startOnce(temporal.client, temporal.taskQueue, eventDeliveriesStart(event));
  await sql(em.fork(), 'update webhook_deliveries set workflow_pending = false where id in (?) and workflow_pending', [deliveryIds]);
}
