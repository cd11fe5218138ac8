// Starting a post's workflow after its row is committed (docs/decisions.md "Creates not serialised
// behind Temporal"): the start options and the record of the start, shared by the API
// (services/post-scheduler.ts) and the create reconciler's activity below, which starts every
// committed post still marked workflow_pending (a process died between commit and start).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type WorkflowStartOptions } from '@temporalio/client';
import { Post } from '../db/entities/index.ts';
import type { Orm } from '../db/orm.ts';
import { POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflow, type PostWorkflowInput } from '../workflows/post-types.ts';
import type { PostReconcilerInput, PostReconcilerResult } from '../workflows/post-reconciler-types.ts';
import { ORGANIZATION_ID, POST_ID } from '../workflows/search-attributes.ts';
import { createWebhookEmitter, type WebhookEmitter } from '../domain/webhooks/outbox.ts';

/** Bound on one start made by the reconciler while it holds the post's row lock. */
const START_DEADLINE_MS = 10_000;

/**
 * The start of a post's first run, the same from the API and from the reconciler: the workflow id
 * is the idempotency key, and REJECT_DUPLICATE keeps a run that has already closed (a publish-now
 * post, done) from being started again by a late reconciler.
 */
export function postWorkflowStart(
  input: PostWorkflowInput,
  taskQueue: string,
): WorkflowStartOptions<PostWorkflow> & { workflowId: string } {
  return {
    taskQueue,
    workflowId: postWorkflowId(input.postId),
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: [
      { key: ORGANIZATION_ID, value: input.organizationId },
      { key: POST_ID, value: input.postId },
    ],
  };
}

/**
 * Records that the post's workflow exists: clears workflow_pending and, when this call is the one
 * that cleared it, writes the post.scheduled event (`writeEvent`) in the same transaction — so the
 * event is written once, and only for a post that has its workflow. Returns the deliveries to
 * dispatch after the commit ([] when already recorded).
 */
export async function recordPostStarted(
  em: EntityManager,
  postId: string,
  writeEvent: (tx: EntityManager) => Promise<string[]>,
): Promise<string[]> {
  // Most organizations have no webhook endpoint, so no event to write: then one statement, no
  // transaction. Otherwise (or when already recorded) the transaction below decides.
  const cleared = await em
    .fork()
    .getConnection()
    .execute<{ id: string }[]>(
      `update posts set workflow_pending = false where id = ? and workflow_pending
       and not exists (select 1 from webhook_endpoints e where e.organization_id = posts.organization_id and e.enabled)
       returning id`,
      [postId],
    );
  if (cleared.length) return [];
  return em.fork().transactional(async (tx) => {
    const changed = await tx.nativeUpdate(Post, { id: postId, workflowPending: true }, { workflowPending: false });
    if (!changed) return [];
    const deliveryIds = await writeEvent(tx);
    await tx.flush();
    return deliveryIds;
  });
}

/**
 * Takes back a committed post whose start failed: deletes it (its channel rows go with it) unless
 * its workflow was recorded meanwhile (the reconciler holds the row lock while it starts one, so
 * this waits for it and then finds nothing to delete). True when the post is gone.
 */
export async function withdrawPost(em: EntityManager, postId: string): Promise<boolean> {
  return (await em.fork().nativeDelete(Post, { id: postId, workflowPending: true })) > 0;
}

interface PendingRow {
  id: string;
  organization_id: string;
  status: string;
  scheduled_at: Date;
  deleted_at: Date | null;
}

export function createReconcileActivities(deps: { orm: Orm; webhooks?: WebhookEmitter }) {
  const webhooks = deps.webhooks ?? createWebhookEmitter(undefined);
  return {
    /** The create reconciler: starts the workflow of each post committed ≥ olderThanMs ago and still pending. */
    async startPendingPosts(input: PostReconcilerInput): Promise<PostReconcilerResult> {
      const ctx = Context.current();
      const result: PostReconcilerResult = { started: 0, alreadyStarted: 0, cleared: 0 };
      const candidates = await deps.orm.em
        .fork()
        .getConnection()
        .execute<{ id: string }[]>('select id from posts where workflow_pending and created_at < ? order by created_at limit ?', [
          new Date(Date.now() - input.olderThanMs),
          input.limit,
        ]);
      for (const { id } of candidates) {
        ctx.heartbeat();
        const events = await deps.orm.em.fork().transactional(async (tx) => {
          // The row lock orders this with the API's own start and withdrawal of the same post; a
          // row another run (or the API) holds is left for later.
          const [row] = await tx
            .getConnection()
            .execute<PendingRow[]>(
              'select id, organization_id, status, scheduled_at, deleted_at from posts where id = ? and workflow_pending for update skip locked',
              [id],
              'all',
              tx.getTransactionContext(),
            );
          if (!row) return [];
          const waiting = row.status === 'scheduled' && row.deleted_at === null;
          if (waiting) {
            const options = postWorkflowStart(
              { postId: row.id, organizationId: row.organization_id, publishAt: new Date(row.scheduled_at).toISOString() },
              ctx.info.taskQueue,
            );
            try {
              await ctx.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
                ctx.client.workflow.start<PostWorkflow>(POST_WORKFLOW_TYPE, options),
              );
              result.started++;
            } catch (err) {
              // The API's start did reach Temporal; only its record was lost.
              if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
              result.alreadyStarted++;
            }
          } else result.cleared++;
          await tx.nativeUpdate(Post, { id: row.id }, { workflowPending: false });
          return waiting ? webhooks.write(tx, row.organization_id, 'post.scheduled', (views) => views.post(tx, row.id)) : [];
        });
        await webhooks.dispatch(deps.orm.em, events);
      }
      return result;
    },
  };
}
