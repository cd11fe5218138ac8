import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import { POST_STATUSES, type PostStatus } from '../../db/entities/index.ts';
import { validatePost } from '../../domain/posts/create.ts';
import { createPostOnce, createPostRequest, createPostsInBulkOnce, editPostForKey } from '../../services/post-requests.ts';
import { BULK_MAX_BODY_BYTES, BULK_MAX_ROWS } from '../../domain/posts/bulk.ts';
import { exportPostsCsv, importPostsCsv } from '../../services/post-csv.ts';
import { cancelPost, retryPost } from '../../domain/posts/lifecycle.ts';
import { POST_LIMITS } from '../../domain/posts/limits.ts';
import { getPostForKey, listPostsForKey } from '../../domain/posts/view.ts';
import { authPlugin, type Auth } from '../auth.ts';
import { APPROVAL_COMMENT_CHARS, decideApproval } from '../../domain/posts/approval.ts';
import { answerStored } from '../../http/stored-response.ts';
import type { AppDeps } from '../../http/deps.ts';
import {
  BodyId,
  Chars,
  DateTimeInput,
  PathId,
  PostAnalyticsSchema,
  PostListSchema,
  PostSchema,
  PostValidationSchema,
  BulkResultSchema,
} from '../schemas.ts';
import { postAnalyticsForKey } from '../../domain/analytics/post-analytics.ts';
import { refreshPostAnalytics } from '../../domain/analytics/refresh.ts';
import { OPERATIONS } from '../openapi/operations.ts';
import { CREATE_FIELDS, EDIT_FIELDS } from '../../domain/posts/content.ts';
import { parseTimePage } from '../../http/page-query.ts';

export const ChannelIds = t.Array(BodyId(), { minItems: 1, maxItems: POST_LIMITS.channels, uniqueItems: true });
const Queue = t.Boolean({ description: 'true: at the earliest free queue slot common to every target channel (instead of publishAt).' });

/** The body of POST /v1/posts, and of POST /v1/posts/validate (the same checks: one schema): a post's content (domain/posts/content.ts), where and when. */
const { content, ...OTHER_CONTENT } = CREATE_FIELDS;
const CreateBody = t.Object(
  { content, channelIds: ChannelIds, publishAt: t.Optional(DateTimeInput()), ...OTHER_CONTENT, queue: t.Optional(Queue) },
  { additionalProperties: false },
);

/** The body of PATCH /v1/posts/{id}: any field of a post's content, where and when. */
const PatchBody = t.Object(
  { ...EDIT_FIELDS, publishAt: t.Optional(DateTimeInput()), channelIds: t.Optional(ChannelIds) },
  { additionalProperties: false, minProperties: 1 },
);

const IdParams = t.Object({ id: PathId() });

const ImportQuery = t.Object({
  mode: t.Optional(
    t.Union([t.Literal('all_or_nothing'), t.Literal('each')], { description: 'As for /posts/bulk; all_or_nothing by default.' }),
  ),
  timeZone: t.Optional(
    Chars(64, {
      min: 1,
      description: 'An IANA time zone: the zone of `publishAt` wall times in rows without a `timeZone` (the organization’s by default).',
    }),
  ),
});

const ExportQuery = t.Object({
  format: t.Optional(t.Literal('csv', { description: 'The only format: CSV.' })),
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
});

/** The body of POST /v1/posts/bulk: rows exactly as POST /v1/posts takes them. */
const BulkBody = t.Object(
  {
    mode: t.Optional(
      t.Union([t.Literal('all_or_nothing'), t.Literal('each')], {
        description:
          '`all_or_nothing` (the default): nothing is created unless every row can be. `each`: the rows that can be are created, the others answered with their errors.',
      }),
    ),
    posts: t.Array(CreateBody, { minItems: 1, maxItems: BULK_MAX_ROWS, description: 'Each row exactly what POST /v1/posts takes.' }),
  },
  { additionalProperties: false },
);

/** The body of approve and reject: optional, as is its comment. */
const DecisionBody = t.Optional(
  t.Object(
    { comment: t.Optional(Chars(APPROVAL_COMMENT_CHARS, { description: 'Why, for the author (shown with the approval).' })) },
    { additionalProperties: false },
  ),
);

const ListQuery = t.Object({
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  channelId: t.Optional(Chars(64, { min: 1 })),
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  // Parsed by parseLimit: t.Numeric reports range errors with an empty field path.
  limit: t.Optional(t.String({ maxLength: 16 })),
  // Opaque (domain/posts/view.ts encodes it): base64url.
  cursor: t.Optional(t.String({ pattern: '^[A-Za-z0-9_-]{0,512}$', error: 'is not a cursor returned by this API' })),
});

export function postRoutes(deps: AppDeps) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('Temporal is not configured for this API');
    return deps.temporal;
  };
  // What the post checks read of each channel's account (domain/capabilities.ts).
  const capabilities = { orm: deps.orm, ...deps.platforms };
  async function decide(auth: Auth, postId: string, decision: 'approve' | 'reject', comment: string | undefined) {
    const d = { decision, by: await auth.principal(), comment: comment ?? null, now: auth.now };
    // decideApproval's own read of the post as decided, its media URLs signed: the answer.
    return decideApproval(deps.orm.em.fork(), deps.temporal, auth.organization.id, postId, auth.channels, d, deps.storage);
  }
  return (
    router()
      .use(authPlugin(deps))
      .post(
        '/posts',
        async ({ auth, body, set, headers }) => {
          const em = deps.orm.em.fork();
          const result = await createPostOnce(
            { em, temporal: deps.temporal, storage: deps.storage, capabilities },
            auth,
            body,
            headers['idempotency-key'],
          );
          return answerStored(set, result);
        },
        {
          body: CreateBody,
          transform: refuseUnstorableBody,
          response: { 201: PostSchema },
          operation: OPERATIONS.createPost,
        },
      )
      .post(
        '/posts/bulk',
        async ({ auth, body, set, headers }) => {
          const result = await createPostsInBulkOnce(
            { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities },
            auth,
            body,
            headers['idempotency-key'],
          );
          // A replayed answer may be a stored 4xx body: answerStored sets its status.
          return answerStored(set, result) as never;
        },
        {
          body: BulkBody,
          transform: refuseUnstorableBody,
          response: { 200: BulkResultSchema },
          operation: OPERATIONS.createPostsInBulk,
        },
      )
      .post(
        '/posts/import',
        async ({ auth, body, query, set, headers }) => {
          const result = await importPostsCsv(
            { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities, outbound: deps.outbound },
            auth,
            body,
            { mode: query.mode, timeZone: query.timeZone, idempotencyKey: headers['idempotency-key'] },
          );
          // A replayed answer may be a stored 4xx body: answerStored sets its status.
          return answerStored(set, result) as never;
        },
        {
          query: ImportQuery,
          body: t.String({ maxLength: BULK_MAX_BODY_BYTES, description: 'The CSV file (text/csv, UTF-8).' }),
          response: { 200: BulkResultSchema },
          operation: OPERATIONS.importPosts,
        },
      )
      .get(
        '/posts/export',
        async ({ auth, query }) => {
          const { from, to } = parseTimePage(query);
          const csv = await exportPostsCsv(
            deps.orm.em.fork(),
            auth,
            { from, to, status: query.status as PostStatus | undefined },
            deps.storage,
          );
          return new Response(csv, {
            headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="posts.csv"' },
          });
        },
        {
          query: ExportQuery,
          response: { 200: t.String({ description: 'The posts as CSV: a header line, then one line per post, oldest first.' }) },
          operation: OPERATIONS.exportPosts,
        },
      )
      // Chosen over `?dryRun=true` on create (docs/decisions.md): its own answer (200, not 201 with
      // a post), no Location, no Idempotency-Key (nothing to repeat), and a create that cannot be
      // half a validation by a forgotten query parameter.
      .post('/posts/validate', ({ auth, body }) => validatePost(deps.orm.em.fork(), createPostRequest(auth, body, capabilities)), {
        body: CreateBody,
        transform: refuseUnstorableBody,
        response: { 200: PostValidationSchema },
        operation: OPERATIONS.validatePost,
      })
      .get(
        '/posts',
        async ({ auth, query }) => {
          const { from, to, limit } = parseTimePage(query);
          return listPostsForKey(
            deps.orm.em.fork(),
            auth.organization.id,
            auth.channels,
            {
              status: query.status as PostStatus | undefined,
              channelId: query.channelId,
              from,
              to,
              limit,
              cursor: query.cursor,
            },
            deps.storage,
          );
        },
        { query: ListQuery, response: { 200: PostListSchema }, operation: OPERATIONS.listPosts },
      )
      .get(
        '/posts/:id',
        ({ auth, params }) => getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage),
        {
          params: IdParams,
          response: { 200: PostSchema },
          operation: OPERATIONS.getPost,
        },
      )
      .get(
        '/posts/:id/analytics',
        ({ auth, params }) => postAnalyticsForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage),
        { params: IdParams, response: { 200: PostAnalyticsSchema }, operation: OPERATIONS.getPostAnalytics },
      )
      .post(
        '/posts/:id/analytics/refresh',
        async ({ auth, params, set }) => {
          const view = await refreshPostAnalytics(
            deps.orm.em.fork(),
            deps.temporal,
            auth.organization.id,
            params.id,
            auth.channels,
            auth.now,
            deps.storage,
          );
          set.status = 202;
          return view;
        },
        { params: IdParams, response: { 202: PostAnalyticsSchema }, operation: OPERATIONS.refreshPostAnalytics },
      )
      .patch(
        '/posts/:id',
        async ({ auth, params, body }) =>
          editPostForKey({ em: deps.orm.em.fork(), temporal: temporal(), storage: deps.storage, capabilities }, auth, params.id, body),
        {
          body: PatchBody,
          params: IdParams,
          transform: refuseUnstorableBody,
          response: { 200: PostSchema },
          operation: OPERATIONS.updatePost,
        },
      )
      .delete(
        '/posts/:id',
        async ({ auth, params, set }) => {
          await cancelPost(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
          set.status = 204;
        },
        { params: IdParams, operation: OPERATIONS.deletePost },
      )
      .post('/posts/:id/approve', async ({ auth, params, body }) => decide(auth, params.id, 'approve', body?.comment), {
        params: IdParams,
        body: DecisionBody,
        response: { 200: PostSchema },
        operation: OPERATIONS.approvePost,
      })
      .post('/posts/:id/reject', async ({ auth, params, body }) => decide(auth, params.id, 'reject', body?.comment), {
        params: IdParams,
        body: DecisionBody,
        response: { 200: PostSchema },
        operation: OPERATIONS.rejectPost,
      })
      .post(
        '/posts/:id/retry',
        async ({ auth, params, set }) => {
          const view = await retryPost(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
          set.status = 202;
          return view;
        },
        {
          params: IdParams,
          response: { 202: PostSchema },
          operation: OPERATIONS.retryPost,
        },
      )
  );
}
