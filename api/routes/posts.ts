import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../router.ts';
import { POST_STATUSES, type PostStatus } from '../../db/entities/index.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { schedulePost, validateAndEditPost } from '../../services/post-scheduler.ts';
import {
  assertChannelsUsable, channelTexts, loadPostMedia, loadTargetChannels, parsePublishAt,
} from '../../services/post-validation.ts';
import { assertEditable, getPostForKey, listPostsForKey } from '../../services/posts.ts';
import { authPlugin } from '../auth.ts';
import { idempotent } from '../../services/idempotency.ts';
import { PLAN_LIMITS } from '../../lib/plans.ts';
import type { AppDeps } from '../context.ts';
import { PostListSchema, PostSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

// No NUL: Postgres text cannot hold it (the insert would fail with a 500).
const Text = t.String({ maxLength: 100_000, pattern: '^[^\\u0000]*$' });
const MediaIds = t.Array(t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }), { maxItems: 20, uniqueItems: true });
const ContentByPlatform = t.Record(t.String({ pattern: '^[A-Z]+$' }), Text, { maxProperties: 20 });

const CreateBody = t.Object(
  {
    content: Text,
    channelIds: t.Array(t.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 50, uniqueItems: true }),
    publishAt: t.Optional(t.String({ maxLength: 64 })),
    mediaIds: t.Optional(MediaIds),
    contentByPlatform: t.Optional(ContentByPlatform),
    reddit: t.Optional(t.Object({ subreddit: t.String({ minLength: 1, maxLength: 100 }), title: t.String({ minLength: 1, maxLength: 300 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const PatchBody = t.Object(
  {
    content: t.Optional(Text),
    publishAt: t.Optional(t.String({ maxLength: 64 })),
    contentByPlatform: t.Optional(ContentByPlatform),
    mediaIds: t.Optional(MediaIds),
  },
  { additionalProperties: false, minProperties: 1 },
);

const ListQuery = t.Object({
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  // No NUL: Postgres cannot hold it in text and the query would fail (500).
  channelId: t.Optional(t.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000]+$' })),
  from: t.Optional(t.String({ maxLength: 64 })),
  to: t.Optional(t.String({ maxLength: 64 })),
  // Parsed by parseLimit: t.Numeric reported range errors with an empty field path.
  limit: t.Optional(t.String({ maxLength: 16 })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
});

function parseInstant(value: string | undefined, path: string, fields: FieldError[]): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  // Years 1–9999 only: Postgres has no year 0 and the query would fail (500).
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) {
    fields.push({ path, message: 'must be an ISO 8601 date-time' });
    return undefined;
  }
  return d;
}

function parseLimit(value: string | undefined, fields: FieldError[]): number {
  if (value === undefined) return 20;
  const n = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 100)) {
    fields.push({ path: 'limit', message: 'must be an integer from 1 to 100' });
    return 20;
  }
  return n;
}

export function postRoutes(deps: AppDeps) {
  const temporal = () => {
    if (!deps.temporal) throw new Error('Temporal is not configured for this API');
    return deps.temporal;
  };
  return router()
    .use(authPlugin(deps))
    .post(
      '/posts',
      async ({ auth, body, set, headers }) => {
        const em = deps.orm.em.fork();
        const result = await idempotent(
          em,
          { organizationId: auth.organization.id, endpoint: 'POST /v1/posts', key: headers['idempotency-key'], body, now: auth.now },
          async () => {
        const fields: FieldError[] = [];
        const publishAt = body.publishAt !== undefined ? parsePublishAt(body.publishAt, auth.now, fields) : null;
        if (fields.length) throw errors.validation(fields);
        const channels = await loadTargetChannels(em, auth.organization.id, body.channelIds, auth.channels);
        assertChannelsUsable(channels);
        const contentByPlatform = body.contentByPlatform ?? {};
        const media = await loadPostMedia(em, auth.organization.id, body.mediaIds ?? []);
        const texts = channelTexts(channels, { content: body.content, contentByPlatform, media, reddit: body.reddit ?? null });
        const id = await schedulePost(em, temporal(), {
          organizationId: auth.organization.id,
          apiKeyId: auth.key.id,
          source: 'api',
          content: body.content,
          contentByPlatform,
          reddit: body.reddit ?? null,
          mediaIds: media.map((m) => m.id),
          publishAt: publishAt ?? null,
          channels,
          texts,
          now: auth.now,
          pendingLimit: PLAN_LIMITS[auth.organization.plan].pendingScheduledPosts,
        });
        const view = await getPostForKey(deps.orm.em.fork(), auth.organization.id, id, 'all', deps.storage);
        return { status: 201, body: view, location: `/v1/posts/${id}` };
          },
        );
        set.status = result.status;
        if (result.location) set.headers.location = result.location;
        if (result.replayed) set.headers['idempotent-replayed'] = 'true';
        return result.body;
      },
      { scope: 'publish', body: CreateBody, transform: refuseUnstorableBody, response: { 201: PostSchema }, detail: OPERATIONS.createPost },
    )
    .get(
      '/posts',
      async ({ auth, query }) => {
        const fields: FieldError[] = [];
        const from = parseInstant(query.from, 'from', fields);
        const to = parseInstant(query.to, 'to', fields);
        const limit = parseLimit(query.limit, fields);
        if (fields.length) throw errors.validation(fields);
        return listPostsForKey(deps.orm.em.fork(), auth.organization.id, auth.channels, {
          status: query.status as PostStatus | undefined,
          channelId: query.channelId,
          from,
          to,
          limit,
          cursor: query.cursor,
        }, deps.storage);
      },
      { scope: 'read', query: ListQuery, response: { 200: PostListSchema }, detail: OPERATIONS.listPosts },
    )
    .get('/posts/:id', ({ auth, params }) => getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage), {
      scope: 'read',
      params: t.Object({ id: t.String({ maxLength: 64 }) }),
      response: { 200: PostSchema },
      detail: OPERATIONS.getPost,
    })
    .patch(
      '/posts/:id',
      async ({ auth, params, body }) => {
        const em = deps.orm.em.fork();
        const current = await getPostForKey(em, auth.organization.id, params.id, auth.channels);
        assertEditable(current);
        const fields: FieldError[] = [];
        const publishAt = body.publishAt !== undefined ? parsePublishAt(body.publishAt, auth.now, fields) : undefined;
        if (fields.length) throw errors.validation(fields);
        await validateAndEditPost(em, temporal(), auth.organization.id, current, {
          content: body.content,
          contentByPlatform: body.contentByPlatform,
          publishAt,
          mediaIds: body.mediaIds,
        });
        return getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, deps.storage);
      },
      { scope: 'publish', body: PatchBody, params: t.Object({ id: t.String({ maxLength: 64 }) }), transform: refuseUnstorableBody, response: { 200: PostSchema }, detail: OPERATIONS.updatePost },
    );
}
