// Comments collected under published posts (docs/api.md "Comments"; domain/inbox/comments.ts):
// a post's conversation, the inbox, and marking or assigning one. Reading needs `read`; changing
// a comment is `comments.manage` (domain/access.ts).
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { CursorParam, LimitParam, parseLimit } from '../../http/page-query.ts';
import { parseRangeBound } from '../../lib/date-time.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { COMMENT_STATUSES } from '../../db/entities/comment.ts';
import { COMMENT_FIELDS, getComment, listInbox, postConversation, updateComment } from '../../domain/inbox/comments.ts';
import { refreshComments } from '../../domain/inbox/refresh.ts';
import { decideReply, getReply, listReplies } from '../../domain/inbox/replies.ts';
import { deleteReply, moderateComment } from '../../domain/inbox/moderation.ts';
import { APPROVAL_COMMENT_CHARS } from '../../domain/posts/approval.ts';
import { POST_LIMITS } from '../../domain/posts/limits.ts';
import { answerStored } from '../../http/stored-response.ts';
import { replyToCommentOnce } from '../../services/reply-requests.ts';
import { authPlugin, type Auth } from '../auth.ts';
import {
  Chars,
  CommentListSchema,
  CommentSchema,
  ConversationSchema,
  DateTimeInput,
  PathId,
  ReplyListSchema,
  ReplySchema,
} from '../schemas.ts';
import { DATE_TIME } from '../openapi/fields.ts';
import { doc } from '../openapi/operation.ts';

const IdParams = t.Object({ id: PathId() });
const InboxQuery = t.Object({
  channelId: t.Optional(PathId()),
  postId: t.Optional(PathId()),
  status: t.Optional(
    t.Union(
      COMMENT_STATUSES.map((s) => t.Literal(s)),
      { error: `must be one of ${COMMENT_STATUSES.join(', ')}` },
    ),
  ),
  assignee: t.Optional(COMMENT_FIELDS.assignee),
  since: t.Optional(DateTimeInput()),
  limit: LimitParam(),
  cursor: CursorParam(),
});
const PatchBody = t.Object(
  {
    status: t.Optional(COMMENT_FIELDS.status),
    assigneeUserId: t.Optional(COMMENT_FIELDS.assigneeUserId),
  },
  { additionalProperties: false, minProperties: 1 },
);

const ReplyBody = t.Object(
  { content: Chars(POST_LIMITS.textChars, { description: 'The reply’s text, within the platform’s limit for it.' }) },
  { additionalProperties: false },
);
const DecisionBody = t.Optional(
  t.Object(
    { comment: t.Optional(Chars(APPROVAL_COMMENT_CHARS, { description: 'Why, for the author (shown with the approval).' })) },
    { additionalProperties: false },
  ),
);

const COMMENT_ID = 'Comment id (`cmt_…`).';
const REPLY_ID = 'Reply id (`rpl_…`).';
const REPLY_OUTCOME = 'Follow it with GET /v1/replies/{id} or the `comment.reply.published` / `comment.reply.failed` webhooks.';

const hideDoc = (action: 'hide' | 'unhide') =>
  doc({
    operationId: action === 'hide' ? 'hideComment' : 'unhideComment',
    audit: { action: action === 'hide' ? 'comment.hide' : 'comment.unhide', resource: 'comment' },
    tag: 'Comments',
    action: 'comments.manage',
    summary: action === 'hide' ? 'Hide a comment on its platform' : 'Show a hidden comment again',
    description:
      action === 'hide'
        ? 'Asks the platform to hide the comment from everyone but its author (Facebook, Instagram, Threads, X hidden replies, YouTube: `fixed.comments.hide` of the channel’s capabilities). Once the platform has, the comment is `hidden`. Answers 200 when the platform answered within a few seconds (`moderation.status` `done` or `failed`), else 202 with `moderation.status` `pending`.'
        : 'Asks the platform to show the comment again; once it has, the comment is `read`. Answers as the hide does.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such comment, or one on a channel the key cannot see',
      conflict:
        'the platform does not let the service hide comments (`details.platform`), the comment is one of your replies, or a hide or show-again of it is under way',
    },
    success: { description: 'The comment, with its `moderation` as the platform left it (202 while under way).' },
    temporal: true,
    params: { id: COMMENT_ID },
  });

export const COMMENT_OPERATIONS = {
  listPostComments: doc({
    operationId: 'listPostComments',
    tag: 'Comments',
    action: 'read',
    summary: 'A post’s conversation',
    description:
      'What people answered under the post on each of its channels, and your replies, as collected so far (docs/api.md "Comments"): a tree, depth first, each level in the order written.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The conversation.' },
    params: { id: 'Post id (`post_…`).' },
  }),
  refreshPostComments: doc({
    operationId: 'refreshPostComments',
    // Not an event: reads the platforms anew; the post is not changed.
    audit: null,
    tag: 'Comments',
    action: 'posts.write',
    summary: 'Read a post’s comments now',
    description:
      'Reads every published channel of the post now, besides the scheduled reads (which it does not move), also once the 30 days the schedule follows a post are over; new comments land within moments in the conversation and the inbox. At most once a minute per post, so that nobody hammers a platform through it.',
    errors: ['not_found', 'conflict', 'rate_limited', 'validation_failed'],
    errorNotes: {
      not_found: 'no such post, one the key cannot see, or a deleted one',
      conflict: 'no channel of the post has been published yet',
      rate_limited: 'the post’s comments were read less than a minute ago (`Retry-After`, `details.resetsAt`)',
    },
    success: { status: 202, description: 'The conversation as it is now; the new read follows.' },
    temporal: true,
    params: { id: 'Post id (`post_…`).' },
  }),
  listInbox: doc({
    operationId: 'listInbox',
    tag: 'Comments',
    action: 'read',
    summary: 'The inbox',
    description:
      'Comments under the organization’s posts, written by others (not your replies), newest first; a key limited to channels sees those channels’ only. Keyset pagination: pass `nextCursor` as `cursor`.',
    errors: ['validation_failed'],
    errorNotes: {
      validation_failed:
        'invalid query (`details.fields`): a limit outside 1–100, a `since` that is not a date-time, or a cursor this API did not return',
    },
    success: { description: 'A page of comments.' },
    query: {
      channelId: 'Only this channel’s.',
      postId: 'Only this post’s.',
      status: '`unread`, `read`, `replied` or `hidden`.',
      assignee: 'A member’s user id (`usr_…`): the comments given to them; `none`: those given to no one.',
      since: DATE_TIME('Only those written at or after this instant.'),
      limit: { description: 'Page size (default 20).', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),
  getComment: doc({
    operationId: 'getComment',
    tag: 'Comments',
    action: 'read',
    summary: 'A comment',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The comment.' },
    params: { id: COMMENT_ID },
  }),
  updateComment: doc({
    operationId: 'updateComment',
    audit: { action: 'comment.update', resource: 'comment' },
    tag: 'Comments',
    action: 'comments.manage',
    summary: 'Mark a comment read or unread, or give it to a member',
    description:
      '`status`: `read` or `unread` (a reply makes it `replied`, a hide `hidden`). `assigneeUserId`: a member of the organization who answers it, or null for no one.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      validation_failed: 'the body does not match (`details.fields`), or `assigneeUserId` is not a member of the organization',
    },
    success: { description: 'The comment as it is now.' },
    params: { id: COMMENT_ID },
  }),
  replyToComment: doc({
    operationId: 'replyToComment',
    audit: { action: 'comment.reply', resource: 'reply' },
    tag: 'Comments',
    action: 'comments.reply',
    summary: 'Answer a comment',
    description: `Publishes \`content\` on the comment’s platform as a reply to it, from the channel’s account, once: the reply has its own idempotency key on the platform, a retry looks for a reply an earlier attempt made before sending again, and the same Idempotency-Key (per API key and comment) answers with the same reply. Checked first as the platform takes it (not empty, within its limit). A contributor’s reply (or one by a key that requires approval) waits for approval as their posts do (\`pending_approval\`). The comment becomes \`replied\` once the reply is out, and the reply shows in the conversation as yours. ${REPLY_OUTCOME}`,
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such comment, or one on a channel the key cannot see',
      conflict:
        'the comment is one of your replies, its platform’s comments cannot be answered, or an Idempotency-Key reused with another body (or its first request still running)',
      validation_failed: '`content` empty or over the platform’s limit (`details.fields`)',
    },
    success: { status: 202, description: 'The reply, `publishing` (or `pending_approval`).', location: true },
    idempotent: true,
    temporal: true,
    params: { id: COMMENT_ID },
  }),
  listCommentReplies: doc({
    operationId: 'listCommentReplies',
    tag: 'Comments',
    action: 'read',
    summary: 'The replies sent to a comment',
    description: 'Every reply sent to the comment through the service, oldest first, with its outcome.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The replies.' },
    params: { id: COMMENT_ID },
  }),
  getReply: doc({
    operationId: 'getReply',
    tag: 'Comments',
    action: 'read',
    summary: 'A reply to a comment',
    description:
      'Its status and outcome: `published` with `url` and `platformReplyId`, or `failed` with `error`, `errorCode` and `retryable`.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The reply.' },
    params: { id: REPLY_ID },
  }),
  deleteReply: doc({
    operationId: 'deleteReply',
    audit: { action: 'reply.delete', resource: 'reply' },
    tag: 'Comments',
    action: 'comments.manage',
    summary: 'Delete a reply',
    description:
      'A published reply is deleted on its platform (`fixed.comments.delete`) and leaves the conversation; one never sent (waiting for approval, failed, rejected) is deleted here only. Answers 200 once `deleted` (also when it already was), 202 while `deleting`; a refusal of the platform leaves it `published` with `error`.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such reply, or one on a channel the key cannot see',
      conflict: 'the reply is still being published, or its platform does not let the service delete replies',
    },
    success: { description: 'The reply, `deleted` (202: `deleting`).' },
    temporal: true,
    params: { id: REPLY_ID },
  }),
  approveReply: doc({
    operationId: 'approveReply',
    audit: { action: 'reply.approve', resource: 'reply' },
    tag: 'Comments',
    action: 'posts.approve',
    summary: 'Approve a reply waiting for approval',
    description:
      'For a reply `pending_approval`: approves it, so it is published at once. Never by the one who wrote it (as for posts). Emits `comment.reply.published` or `.failed` once it is out.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such reply, or one on a channel the key cannot see',
      conflict: 'the reply needs no approval, or is no longer waiting for one (`details.status`)',
      validation_failed: '`comment` longer than 2000 characters',
    },
    success: { description: 'The reply, `publishing`.' },
    temporal: true,
    params: { id: REPLY_ID },
  }),
  rejectReply: doc({
    operationId: 'rejectReply',
    audit: { action: 'reply.reject', resource: 'reply' },
    tag: 'Comments',
    action: 'posts.approve',
    summary: 'Reject a reply waiting for approval',
    description: 'For a reply `pending_approval`: rejects it; it is never published. Never by the one who wrote it.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no such reply, or one on a channel the key cannot see',
      conflict: 'the reply needs no approval, or is no longer waiting for one (`details.status`)',
      validation_failed: '`comment` longer than 2000 characters',
    },
    success: { description: 'The reply, `rejected`.' },
    temporal: true,
    params: { id: REPLY_ID },
  }),
  hideComment: hideDoc('hide'),
  unhideComment: hideDoc('unhide'),
};

export function commentRoutes(deps: AppDeps) {
  async function decide(auth: Auth, replyId: string, decision: 'approve' | 'reject', comment: string | undefined) {
    const d = { decision, by: await auth.principal(), comment: comment ?? null, now: auth.now };
    return decideReply(deps.orm.em.fork(), deps.temporal, auth.organization.id, replyId, auth.channels, d);
  }
  const hide =
    (action: 'hide' | 'unhide') =>
    async ({ auth, params, set }: { auth: Auth; params: { id: string }; set: { status?: unknown } }) => {
      const { comment, done } = await moderateComment(
        deps.orm.em.fork(),
        deps.temporal,
        auth.organization.id,
        params.id,
        auth.channels,
        action,
        auth.now,
      );
      set.status = done ? 200 : 202;
      return comment;
    };
  return router()
    .use(authPlugin(deps))
    .get(
      '/posts/:id/comments',
      async ({ auth, params }) => ({ data: await postConversation(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels) }),
      {
        params: IdParams,
        response: { 200: ConversationSchema },
        operation: COMMENT_OPERATIONS.listPostComments,
      },
    )
    .post(
      '/posts/:id/comments/refresh',
      async ({ auth, params, set }) => {
        const data = await refreshComments(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
        set.status = 202;
        return { data };
      },
      { params: IdParams, response: { 202: ConversationSchema }, operation: COMMENT_OPERATIONS.refreshPostComments },
    )
    .get(
      '/inbox',
      ({ auth, query }) => {
        const fields: FieldError[] = [];
        const limit = parseLimit(query.limit, fields);
        const since = parseRangeBound(query.since, 'since', fields);
        if (fields.length) throw errors.validation(fields);
        return listInbox(deps.orm.em.fork(), auth.organization.id, auth.channels, {
          channelId: query.channelId,
          postId: query.postId,
          status: query.status,
          assignee: query.assignee,
          since,
          limit,
          cursor: query.cursor,
        });
      },
      { query: InboxQuery, response: { 200: CommentListSchema }, operation: COMMENT_OPERATIONS.listInbox },
    )
    .get('/comments/:id', ({ auth, params }) => getComment(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: CommentSchema },
      operation: COMMENT_OPERATIONS.getComment,
    })
    .patch(
      '/comments/:id',
      ({ auth, params, body }) => updateComment(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, body, auth.now),
      {
        params: IdParams,
        body: PatchBody,
        transform: refuseUnstorableBody,
        response: { 200: CommentSchema },
        operation: COMMENT_OPERATIONS.updateComment,
      },
    )
    .post(
      '/comments/:id/reply',
      async ({ auth, params, body, set, headers }) => {
        const result = await replyToCommentOnce(
          { em: deps.orm.em.fork(), temporal: deps.temporal },
          auth,
          params.id,
          body,
          headers['idempotency-key'],
        );
        return answerStored(set, result);
      },
      {
        params: IdParams,
        body: ReplyBody,
        transform: refuseUnstorableBody,
        response: { 202: ReplySchema },
        operation: COMMENT_OPERATIONS.replyToComment,
      },
    )
    .get('/comments/:id/replies', ({ auth, params }) => listReplies(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: ReplyListSchema },
      operation: COMMENT_OPERATIONS.listCommentReplies,
    })
    .post('/comments/:id/hide', hide('hide'), {
      params: IdParams,
      response: { 200: CommentSchema, 202: CommentSchema },
      operation: COMMENT_OPERATIONS.hideComment,
    })
    .post('/comments/:id/unhide', hide('unhide'), {
      params: IdParams,
      response: { 200: CommentSchema, 202: CommentSchema },
      operation: COMMENT_OPERATIONS.unhideComment,
    })
    .get('/replies/:id', ({ auth, params }) => getReply(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: ReplySchema },
      operation: COMMENT_OPERATIONS.getReply,
    })
    .delete(
      '/replies/:id',
      async ({ auth, params, set }) => {
        const { reply, done } = await deleteReply(
          deps.orm.em.fork(),
          deps.temporal,
          auth.organization.id,
          params.id,
          auth.channels,
          auth.now,
        );
        set.status = done ? 200 : 202;
        return reply;
      },
      { params: IdParams, response: { 200: ReplySchema, 202: ReplySchema }, operation: COMMENT_OPERATIONS.deleteReply },
    )
    .post('/replies/:id/approve', ({ auth, params, body }) => decide(auth, params.id, 'approve', body?.comment), {
      params: IdParams,
      body: DecisionBody,
      response: { 200: ReplySchema },
      operation: COMMENT_OPERATIONS.approveReply,
    })
    .post('/replies/:id/reject', ({ auth, params, body }) => decide(auth, params.id, 'reject', body?.comment), {
      params: IdParams,
      body: DecisionBody,
      response: { 200: ReplySchema },
      operation: COMMENT_OPERATIONS.rejectReply,
    });
}
