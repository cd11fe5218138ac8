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
import { authPlugin } from '../auth.ts';
import { CommentListSchema, CommentSchema, ConversationSchema, DateTimeInput, PathId } from '../schemas.ts';
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

const COMMENT_ID = 'Comment id (`cmt_…`).';

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
};

export function commentRoutes(deps: AppDeps) {
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
    );
}
