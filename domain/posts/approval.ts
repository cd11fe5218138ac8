// Approval before publishing: who must wait for it, and the decision.
//
// Rules:
// - A post waits for approval when the one who makes it (a member in the web app, an API key, an
//   MCP tool through a key) is one whose posts need it:
//   - a contributor, always: the role never publishes directly (a key made by a contributor too);
//   - everyone, when the organization's setting is `everyone`;
//   - an API key with `requiresApproval`, whatever the setting.
//   `contributors` (the default) and `none` differ in nothing but name for now: a contributor's
//   posts wait under both, as the role says; give someone the editor role to publish directly.
// - Such a post is created as usual (status scheduled) with `approval.status` pending. Its
//   workflow never publishes it unapproved: once due it waits for an approve decision, up to
//   APPROVAL_GRACE_MS (24 hours) past its publishAt, then fails every channel with
//   `errorCode: not_approved` (final: a retry would publish it unapproved, so it is refused).
// - An edit by someone whose posts need approval puts the post back to pending (approved or
//   rejected before); an edit by anyone else leaves the approval as it is.
// - Approve and reject: by a principal allowed `posts.approve` (domain/access.ts: a member whose
//   role may, a key with the `approve` scope whose maker may, a reviewer holding a preview link
//   that decides, made by a member who may), and never by the person who asked for the approval
//   (four eyes, domain/access.ts authorizeDecision). Only while the post is scheduled; a member's
//   or a key's decision may be changed (reject what was approved) until it publishes; the same
//   decision twice is a conflict. A link decides once (domain/posts/preview-links.ts).
// - Each change is a webhook event: post.approval.requested (at the workflow's start, or at the
//   edit), post.approval.approved, post.approval.rejected.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Organization, type Actor, type ApprovalSetting, type PostApproval } from '../../db/entities/index.ts';
import { sql } from '../../db/sql.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { decideApprovalUpdate, FAILURE, postWorkflowId } from '../../workflows/post-types.ts';
import { authorizeDecision, type Person, type Principal, type Role } from '../access.ts';
import { executeUpdateInRequest, type TemporalDeps, updateFailureType } from '../temporal-calls.ts';
import { getPostForKey, type PostView } from './view.ts';
import type { ObjectStorage } from '../../storage/types.ts';

export type { Actor, PostApproval };

/** The longest comment a decision carries. */
export const APPROVAL_COMMENT_CHARS = 2000;

/** Who makes or edits a post, as approval needs to know them. */
export interface Requester {
  actor: Actor;
  /** The member's role (of the key's maker for a key); null: an operator's key. */
  role: Role | null;
  /** The API key asks for approval of its posts. */
  requiresApproval: boolean;
  /** The organization's setting, when already read with the rest. */
  setting?: ApprovalSetting;
}

/** A member signed in to the web app. */
export const memberRequester = (member: { userId: string; email: string; role: Role }): Requester => ({
  actor: { type: 'member', id: member.userId, name: member.email },
  role: member.role,
  requiresApproval: false,
});

/** An API key (the API, the MCP tools): its own setting, its maker's role and the organization's setting, in one read. */
export async function keyRequester(em: EntityManager, keyId: string): Promise<Requester> {
  const [row] = await sql<{ name: string; requires_approval: boolean; role: Role | null; approval: ApprovalSetting }>(
    em,
    `select k.name, k.requires_approval, m.role, o.approval from api_keys k
       join organizations o on o.id = k.organization_id
       left join memberships m on m.organization_id = k.organization_id and m.user_id = k.created_by_user_id
     where k.id = ?`,
    [keyId],
  );
  if (!row) throw errors.notFound('API key');
  return {
    actor: { type: 'api_key', id: keyId, name: row.name },
    role: row.role,
    requiresApproval: row.requires_approval,
    setting: row.approval,
  };
}

/** The actor a principal's decision is recorded with. */
export function actorOf(p: Principal): Actor {
  switch (p.type) {
    case 'member':
      return { type: 'member', id: p.userId, name: p.name };
    case 'api_key':
      return { type: 'api_key', id: p.keyId, name: p.name };
    case 'reviewer':
      return { type: 'reviewer', id: p.linkId, name: p.name };
    case 'operator':
      return { type: 'operator', id: null, name: p.name };
  }
}

/** The person who asked for an approval (four eyes): a member, the member behind a key, or a key of no member. */
export async function requesterPerson(em: EntityManager, requestedBy: Actor): Promise<Person | null> {
  if (requestedBy.type === 'member' && requestedBy.id) return `user:${requestedBy.id}`;
  if (requestedBy.type !== 'api_key' || !requestedBy.id) return null;
  const [row] = await sql<{ created_by_user_id: string | null }>(em, 'select created_by_user_id from api_keys where id = ?', [
    requestedBy.id,
  ]);
  return row?.created_by_user_id ? `user:${row.created_by_user_id}` : `key:${requestedBy.id}`;
}

/** Whether this requester's posts wait for approval in this organization (the rules above). */
export async function needsApproval(em: EntityManager, organizationId: string, requester: Requester): Promise<boolean> {
  if (requester.requiresApproval || requester.role === 'contributor') return true;
  const setting = requester.setting ?? (await em.findOneOrFail(Organization, { id: organizationId })).approval;
  return setting === 'everyone';
}

/** A pending approval asked for by this requester, or null when their posts need none. */
export async function approvalFor(
  em: EntityManager,
  organizationId: string,
  requester: Requester | undefined,
  now: Date,
): Promise<PostApproval | null> {
  if (!requester || !(await needsApproval(em, organizationId, requester))) return null;
  return {
    status: 'pending',
    requestedBy: requester.actor,
    requestedAt: now.toISOString(),
    decidedBy: null,
    decidedAt: null,
    comment: null,
  };
}

export interface Decision {
  decision: 'approve' | 'reject';
  /** Who decides: allowed `posts.approve`, and not the requester (checked here). */
  by: Principal;
  comment: string | null;
  now: Date;
}

/**
 * Approves or rejects a post through its workflow (the decideApproval Update, whose validator
 * decides atomically with the workflow's phase). A post that needs no approval, is no longer
 * scheduled, or already has that decision → conflict. Returns the post as decided.
 */
export async function decideApproval(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  postId: string,
  channels: 'all' | string[],
  d: Decision,
  /** Signs the returned view's media URLs; absent: unsigned. */
  storage?: ObjectStorage,
): Promise<PostView> {
  const post = await getPostForKey(em, organizationId, postId, channels);
  if (!post.approval) throw new ApiError('conflict', 'The post needs no approval.', { details: { status: post.status } });
  authorizeDecision(d.by, await requesterPerson(em, post.approval.requestedBy));
  if (post.status !== 'scheduled') throw notScheduled(post.status);
  if (!temporal) throw new Error('Temporal is not configured');
  try {
    await executeUpdateInRequest(
      temporal,
      postWorkflowId(postId),
      decideApprovalUpdate,
      [{ decision: d.decision, by: actorOf(d.by), at: d.now.toISOString(), comment: d.comment }],
      'Scheduling is unavailable right now; the decision was not confirmed and may still be applied later. Check the post and retry shortly.',
    );
  } catch (err) {
    const refused = updateFailureType(err);
    if (refused === FAILURE.alreadyDecided) {
      // The workflow holds this decision already: it is the post's, even while the row that
      // records it waits for its write (a worker lost in that write retries it).
      const decided = d.decision === 'approve' ? 'approved' : 'rejected';
      throw new ApiError('conflict', `The post is already ${decided}.`, { details: { approval: decided } });
    }
    if (refused === FAILURE.noApproval) throw new ApiError('conflict', 'The post needs no approval.');
    if (refused === FAILURE.notScheduled || err instanceof WorkflowNotFoundError) throw notScheduled('no longer scheduled');
    throw err;
  }
  // The post as the decision left it (the workflow's Update wrote it): read once, here, for every caller.
  return getPostForKey(em.fork(), organizationId, postId, channels, storage);
}

const notScheduled = (status: string) =>
  new ApiError('conflict', `The post is ${status}; only a scheduled post can be approved or rejected.`, { details: { status } });

/** A retry would publish a post that was never approved: refused. */
export function assertApprovedForRetry(post: Pick<PostView, 'approval'>): void {
  if (post.approval && post.approval.status !== 'approved') {
    throw errors.conflict('The post was not approved before its time; it cannot be retried. Create it again to have it approved.', {
      approval: post.approval.status,
    });
  }
}

/**
 * The organization's scheduled posts waiting for a decision (or rejected), soonest first, at most
 * 200 (the Approvals page); with `tagId`, those with that tag (GET /v1/posts's filter).
 */
export async function postsAwaitingApproval(
  em: EntityManager,
  organizationId: string,
  storage?: ObjectStorage,
  filters: { tagId?: string } = {},
): Promise<PostView[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from posts p where organization_id = ? and status = 'scheduled' and approval is not null
       and approval->>'status' in ('pending', 'rejected') and deleted_at is null
       and (?::text is null or exists (select 1 from post_tags t where t.post_id = p.id and t.tag_id = ?))
     order by scheduled_at, id limit 200`,
    [organizationId, filters.tagId ?? null, filters.tagId ?? null],
  );
  return Promise.all(rows.map((r) => getPostForKey(em.fork(), organizationId, r.id, 'all', storage)));
}
