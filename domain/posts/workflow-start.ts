// A post's workflow as a row of the start protocol (domain/workflow-starts.ts). A post is marked
// workflow_pending by the create that commits it (status scheduled: its first run) and by a retry
// of a post whose workflow has closed (status publishing: a new run under the same workflow id).
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { sql } from '../../db/sql.ts';
import { POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflowInput } from '../../workflows/post-types.ts';
import { postSearchAttributes } from '../../workflows/search-attributes.ts';
import { writeWebhookEvent } from '../webhooks/outbox.ts';
import type { PendingKind, PendingStart } from '../workflow-starts.ts';
import { loadPostView } from './view.ts';

/** The columns of a post the protocol reads. */
export interface PostStartRow {
  id: string;
  organization_id: string;
  status: string;
  scheduled_at: Date;
  deleted_at: Date | null;
  /** The post's approval status; null: it needs none. */
  approval_status: string | null;
}

/**
 * A first run: REJECT_DUPLICATE, so a run that has already closed (a publish-now post, done) is
 * never started again by a late reconciler. A retry run: the earlier run has closed, so its id
 * may be used again; a run still open answers "already started".
 */
export function postWorkflowStart(input: PostWorkflowInput): PendingStart {
  return {
    workflowType: POST_WORKFLOW_TYPE,
    options: {
      workflowId: postWorkflowId(input.postId),
      args: [input],
      workflowIdReusePolicy: input.retry ? WorkflowIdReusePolicy.ALLOW_DUPLICATE : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: postSearchAttributes(input.organizationId, input.postId),
    },
  };
}

export const POST_STARTS: PendingKind<PostStartRow> = {
  table: 'posts',
  markedAt: 'updated_at',
  columns: "id, organization_id, status, scheduled_at, deleted_at, approval->>'status' as approval_status",
  startFor(row) {
    if (row.deleted_at !== null) return null;
    const input = { postId: row.id, organizationId: row.organization_id, publishAt: new Date(row.scheduled_at).toISOString() };
    // A post waiting for approval starts its workflow waiting for it.
    if (row.status === 'scheduled') return postWorkflowStart(row.approval_status === 'pending' ? { ...input, approval: 'pending' } : input);
    // Marked by a retry; a first run that already moved its post on is running, and answers "already started".
    if (row.status === 'publishing') return postWorkflowStart({ ...input, retry: true });
    return null;
  },
  // post.scheduled, once, for a post whose workflow exists (a retry announces nothing here), and
  // post.approval.requested when it waits for approval.
  async onStarted(tx, row) {
    if (row.status !== 'scheduled') return [];
    const types =
      row.approval_status === 'pending' ? (['post.scheduled', 'post.approval.requested'] as const) : (['post.scheduled'] as const);
    const deliveryIds: string[] = [];
    for (const type of types) {
      const written = await writeWebhookEvent(tx, {
        organizationId: row.organization_id,
        type,
        now: new Date(),
        data: async () => ({ ...(await loadPostView(tx, row.id)) }),
      });
      deliveryIds.push(...written.deliveryIds);
    }
    await tx.flush();
    return deliveryIds;
  },
  // Most organizations have no webhook endpoint: no event to write.
  quietWhen:
    "status <> 'scheduled' or not exists (select 1 from webhook_endpoints e where e.organization_id = posts.organization_id and e.enabled)",
  async withdraw(tx, row) {
    if (row.status === 'scheduled') {
      // A new post that was never scheduled goes, with its channel rows and its Idempotency-Key claim.
      await sql(tx, 'delete from posts where id = ?', [row.id]);
      return;
    }
    // A retry that was never started: the post and the channels it moved are failed again, their
    // errors untouched (the retry leaves them until its run records new outcomes).
    await sql(tx, "update post_channels set status = 'failed' where post_id = ? and status = 'publishing'", [row.id]);
    await sql(tx, "update posts set status = 'failed', workflow_pending = false where id = ?", [row.id]);
  },
};
