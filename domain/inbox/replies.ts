// Replies to comments, sent through the service (POST /v1/comments/{id}/reply).
//
// Rules:
// - A reply answers a collected comment written by someone else, on a platform whose comments
//   the service reads (platforms/catalog.ts COMMENTS); it is published as the channel's follow-up
//   items are (a reply in the conversation on a thread platform, a comment answering the comment
//   on a comment platform), its text checked as such an item: not empty, within the platform's
//   limit as it counts it.
// - Never twice: the row commits first (domain/workflow-starts.ts), its workflow publishes it
//   with an idempotency key of its own (`reply:<id>`), the look-up before a re-send where the
//   platform has no key, and the platform's answer kept across attempts (activities/sending.ts).
//   The same Idempotency-Key (per API key and comment) answers with the same reply.
// - Approval: a reply waits for a decision when its maker's posts would (domain/posts/approval.ts:
//   a contributor, a key that requires approval, the organization's `everyone`); decided by one
//   who may approve, never by its maker (four eyes); not approved within APPROVAL_GRACE_MS, it
//   fails with `not_approved`.
// - Outcome: `published` with its platform id and URL, or `failed` with the reason and its class
//   (errorCode, retryable), each announced (comment.reply.published, comment.reply.failed). A
//   published reply makes its comment `replied` and shows in the conversation as ours.
// - Delete: a published reply is deleted on the platform (DELETE /v1/replies/{id}); one never sent
//   (waiting, failed, rejected) is deleted here only; one being published cannot be yet.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel, type IChannel, type ReplyStatus } from '../../db/entities/index.ts';
import type { Actor, PostApproval } from '../../db/entities/post.ts';
import { sql } from '../../db/sql.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { idPattern, newId } from '../../lib/ids.ts';
import { COMMENTS, FOLLOW_UPS, type Platform } from '../../platforms/catalog.ts';
import type { ChannelErrorCode } from '../../workflows/publish-failure-types.ts';
import {
  COMMENT_REPLY_WORKFLOW_TYPE,
  type CommentReplyInput,
  commentReplyWorkflowId,
  decideReplyUpdate,
} from '../../workflows/comment-actions-types.ts';
import { FAILURE } from '../../workflows/post-types.ts';
import { authorizeDecision, type Principal } from '../access.ts';
import { type IdempotencyClaim, recordClaim } from '../idempotency-claim.ts';
import { type KeyChannels, keySees } from '../key-channels.ts';
import { actorOf, approvalFor, type Requester, requesterPerson } from '../posts/approval.ts';
import { measureFollowUp } from '../posts/thread.ts';
import { executeUpdateInRequest, type TemporalDeps, updateFailureType } from '../temporal-calls.ts';
import { type PendingKind, startAfterCommit } from '../workflow-starts.ts';
import { getComment } from './comments.ts';

export interface ReplyView {
  id: string;
  commentId: string;
  postId: string;
  channelId: string;
  platform: Platform;
  content: string;
  status: ReplyStatus;
  platformReplyId: string | null;
  url: string | null;
  publishedAt: string | null;
  error: string | null;
  errorCode: ChannelErrorCode | null;
  retryable: boolean | null;
  approval: PostApproval | null;
  createdBy: Actor;
  createdAt: string;
}

interface Row {
  id: string;
  comment_id: string;
  post_id: string;
  channel_id: string;
  platform: Platform;
  content: string;
  status: ReplyStatus;
  platform_reply_id: string | null;
  url: string | null;
  published_at: Date | string | null;
  error: string | null;
  error_code: ChannelErrorCode | null;
  retryable: boolean | null;
  approval: PostApproval | null;
  created_by: Actor;
  created_at: Date | string;
}

const SELECT = `select r.id, r.comment_id, c.post_id, r.channel_id, ch.platform, r.content, r.status, r.platform_reply_id, r.url,
  r.published_at, r.error, r.error_code, r.retryable, r.approval, r.created_by, r.created_at
  from comment_replies r join comments c on c.id = r.comment_id join channels ch on ch.id = r.channel_id`;

const iso = (at: Date | string | null) => (at === null ? null : new Date(at).toISOString());

function view(r: Row): ReplyView {
  return {
    id: r.id,
    commentId: r.comment_id,
    postId: r.post_id,
    channelId: r.channel_id,
    platform: r.platform,
    content: r.content,
    status: r.status,
    platformReplyId: r.platform_reply_id,
    url: r.url,
    publishedAt: iso(r.published_at),
    error: r.error,
    errorCode: r.error_code,
    retryable: r.retryable,
    approval: r.approval,
    createdBy: r.created_by,
    createdAt: iso(r.created_at)!,
  };
}

const REPLY_ID = new RegExp(idPattern('rpl'));

/** A reply of the organization on a channel the key sees, or not_found. */
export async function getReply(em: EntityManager, organizationId: string, id: string, keyChannels: KeyChannels): Promise<ReplyView> {
  if (!REPLY_ID.test(id)) throw errors.notFound('Reply');
  const [row] = await sql<Row>(em, `${SELECT} where r.id = ? and r.organization_id = ?`, [id, organizationId]);
  if (!row || !keySees(keyChannels, [row.channel_id])) throw errors.notFound('Reply');
  return view(row);
}

/** GET /v1/comments/{id}/replies: the replies sent to a comment through the service, oldest first. */
export async function listReplies(em: EntityManager, organizationId: string, commentId: string, keyChannels: KeyChannels) {
  await getComment(em, organizationId, commentId, keyChannels);
  const rows = await sql<Row>(em, `${SELECT} where r.comment_id = ? and r.organization_id = ? order by r.created_at, r.id`, [
    commentId,
    organizationId,
  ]);
  return { data: rows.map(view) };
}

/** What the row-and-workflow protocol reads of a reply. */
interface StartRow {
  id: string;
  status: ReplyStatus;
  platform: Platform;
}

/** A reply and its workflow (domain/workflow-starts.ts): started while it waits or publishes; withdrawn whole when its start fails. */
export const REPLY_STARTS: PendingKind<StartRow> = {
  table: 'comment_replies',
  markedAt: 'created_at',
  columns: `id, status, (select platform from channels where channels.id = comment_replies.channel_id) as platform`,
  startFor(row) {
    if (row.status !== 'pending_approval' && row.status !== 'publishing') return null;
    const input: CommentReplyInput = {
      replyId: row.id,
      platform: row.platform,
      ...(row.status === 'pending_approval' ? { approval: 'pending' as const } : {}),
    };
    return { workflowType: COMMENT_REPLY_WORKFLOW_TYPE, options: { workflowId: commentReplyWorkflowId(row.id), args: [input] } };
  },
  async withdraw(tx, row) {
    await sql(tx, 'delete from comment_replies where id = ?', [row.id]);
  },
};

/** The reply's text as its platform takes it: not empty, within the limit of the item it is published as. */
function checkReply(channel: IChannel, content: string) {
  const kind = FOLLOW_UPS[channel.platform].kind === 'comment' ? 'comment' : 'reply';
  if (content.trim() === '') throw errors.validation([{ path: 'content', message: 'is empty' }]);
  const { characters, maxChars } = measureFollowUp(channel, { position: 1, kind, content, mediaIds: [] });
  if (characters > maxChars) {
    const what = kind === 'comment' ? `a comment on ${channel.platform}` : `a ${channel.platform} post`;
    throw errors.validation([{ path: 'content', message: `is ${characters} characters; ${what} allows ${maxChars}` }]);
  }
}

/**
 * POST /v1/comments/{id}/reply: the reply's row (and its Idempotency-Key claim) committed, then its
 * workflow started. Returns the reply's id.
 */
export async function createReply(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  who: { organizationId: string; keyChannels: KeyChannels; requester: Requester; now: Date },
  commentId: string,
  content: string,
  claim: IdempotencyClaim | undefined,
): Promise<string> {
  const comment = await getComment(em, who.organizationId, commentId, who.keyChannels);
  if (comment.ours) throw errors.conflict('This is one of your own replies; answer the comment it answers instead.', { commentId });
  if (!COMMENTS[comment.platform].read)
    throw errors.conflict(`${comment.platform} comments cannot be answered through the service.`, { platform: comment.platform });
  const channel = await em.findOne(Channel, { id: comment.channelId });
  if (!channel) throw errors.notFound('Comment');
  checkReply(channel, content);
  if (!temporal) throw new Error('Temporal is not configured for this API');
  const approval = await approvalFor(em, who.organizationId, who.requester, who.now);
  const id = newId('rpl');
  const row: StartRow = { id, status: approval ? 'pending_approval' : 'publishing', platform: channel.platform };
  await em.fork().transactional(async (tx) => {
    await sql(
      tx,
      `insert into comment_replies (id, organization_id, comment_id, channel_id, content, status, approval, created_by, attempts,
         workflow_pending, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, 0, true, ?, ?)`,
      [
        id,
        who.organizationId,
        commentId,
        channel.id,
        content,
        row.status,
        approval ? JSON.stringify(approval) : null,
        JSON.stringify(who.requester.actor),
        who.now,
        who.now,
      ],
    );
    if (claim) await recordClaim(tx, claim, { table: 'comment_replies', id });
  });
  await startAfterCommit(em, temporal, REPLY_STARTS, row, {
    withdrawn: 'Publishing is unavailable right now; the reply was not sent. Retry shortly.',
    kept: 'Publishing is unavailable right now; the reply is kept and will be sent once it is back.',
  });
  return id;
}

/** POST /v1/replies/{id}/approve, /reject: a decision on a reply waiting for one (rules above). */
export async function decideReply(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  organizationId: string,
  replyId: string,
  keyChannels: KeyChannels,
  d: { decision: 'approve' | 'reject'; by: Principal; comment: string | null; now: Date },
): Promise<ReplyView> {
  const reply = await getReply(em, organizationId, replyId, keyChannels);
  if (!reply.approval) throw new ApiError('conflict', 'The reply needs no approval.', { details: { status: reply.status } });
  authorizeDecision(d.by, await requesterPerson(em, reply.approval.requestedBy));
  if (reply.status !== 'pending_approval') {
    throw new ApiError('conflict', `The reply is ${reply.status}; only a reply waiting for approval can be decided.`, {
      details: { status: reply.status },
    });
  }
  if (!temporal) throw new Error('Temporal is not configured');
  try {
    await executeUpdateInRequest(
      temporal,
      commentReplyWorkflowId(replyId),
      decideReplyUpdate,
      [{ decision: d.decision, by: actorOf(d.by), at: d.now.toISOString(), comment: d.comment }],
      'Publishing is unavailable right now; the decision was not confirmed and may still be applied later. Check the reply and retry shortly.',
    );
  } catch (err) {
    const refused = updateFailureType(err);
    if (refused === FAILURE.alreadyDecided || refused === FAILURE.noApproval) {
      const now = await getReply(em.fork(), organizationId, replyId, keyChannels);
      throw new ApiError('conflict', `The reply is already decided (${now.status}).`, { details: { status: now.status } });
    }
    throw err;
  }
  return getReply(em.fork(), organizationId, replyId, keyChannels);
}
