import { t } from 'elysia';
import { router } from '../router.ts';
import { POST_STATUSES, type PostStatus } from '../../db/entities/index.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { editPost, schedulePost } from '../../services/post-scheduler.ts';
import {
  assertChannelsUsable, channelTexts, loadTargetChannels, parsePublishAt,
} from '../../services/post-validation.ts';
import { assertEditable, getPostForKey, listPostsForKey } from '../../services/posts.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../context.ts';

const Text = t.String({ maxLength: 100_000 });
const ContentByPlatform = t.Record(t.String({ pattern: '^[A-Z]+$' }), Text, { maxProperties: 20 });

const CreateBody = t.Object(
  {
    content: Text,
    channelIds: t.Array(t.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 50, uniqueItems: true }),
    publishAt: t.Optional(t.String({ maxLength: 64 })),
    mediaIds: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 20, uniqueItems: true })),
    contentByPlatform: t.Optional(ContentByPlatform),
    reddit: t.Optional(t.Object({ subreddit: t.String({ minLength: 1, maxLength: 100 }), title: t.String({ minLength: 1, maxLength: 300 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

const PatchBody = t.Object(
  { content: t.Optional(Text), publishAt: t.Optional(t.String({ maxLength: 64 })), contentByPlatform: t.Optional(ContentByPlatform) },
  { additionalProperties: false, minProperties: 1 },
);

const ListQuery = t.Object({
  status: t.Optional(t.Union(POST_STATUSES.map((s) => t.Literal(s)))),
  channelId: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
  from: t.Optional(t.String({ maxLength: 64 })),
  to: t.Optional(t.String({ maxLength: 64 })),
  limit: t.Optional(t.Numeric({ minimum: 1, maximum: 100, multipleOf: 1 })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
});

function parseInstant(value: string | undefined, path: string, fields: FieldError[]): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime())) {
    fields.push({ path, message: 'must be an ISO 8601 date-time' });
    return undefined;
  }
  return d;
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
      async ({ auth, body, set }) => {
        const em = deps.orm.em.fork();
        const fields: FieldError[] = [];
        const publishAt = body.publishAt !== undefined ? parsePublishAt(body.publishAt, auth.now, fields) : null;
        if (body.mediaIds?.length) fields.push({ path: 'mediaIds', message: 'media attachments are not available yet' });
        if (fields.length) throw errors.validation(fields);
        const channels = await loadTargetChannels(em, auth.organization.id, body.channelIds, auth.channels);
        assertChannelsUsable(channels);
        const contentByPlatform = body.contentByPlatform ?? {};
        const texts = channelTexts(channels, { content: body.content, contentByPlatform, mediaCount: 0, reddit: body.reddit ?? null });
        const id = await schedulePost(em, temporal(), {
          organizationId: auth.organization.id,
          apiKeyId: auth.key.id,
          source: 'api',
          content: body.content,
          contentByPlatform,
          reddit: body.reddit ?? null,
          mediaIds: [],
          publishAt: publishAt ?? null,
          channels,
          texts,
          now: auth.now,
        });
        set.status = 201;
        set.headers.location = `/v1/posts/${id}`;
        return getPostForKey(deps.orm.em.fork(), auth.organization.id, id, 'all');
      },
      { scope: 'publish', body: CreateBody },
    )
    .get(
      '/posts',
      async ({ auth, query }) => {
        const fields: FieldError[] = [];
        const from = parseInstant(query.from, 'from', fields);
        const to = parseInstant(query.to, 'to', fields);
        if (fields.length) throw errors.validation(fields);
        return listPostsForKey(deps.orm.em.fork(), auth.organization.id, auth.channels, {
          status: query.status as PostStatus | undefined,
          channelId: query.channelId,
          from,
          to,
          limit: query.limit ?? 20,
          cursor: query.cursor,
        });
      },
      { scope: 'read', query: ListQuery },
    )
    .get('/posts/:id', ({ auth, params }) => getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      scope: 'read',
      params: t.Object({ id: t.String({ maxLength: 64 }) }),
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
        const channels = await loadTargetChannels(em, auth.organization.id, current.channels.map((c) => c.channelId), 'all');
        const stored = await em.getConnection().execute<{ content_by_platform: Record<string, string> }[]>(
          'select content_by_platform from posts where id = ?',
          [params.id],
        );
        const contentByPlatform = body.contentByPlatform ?? stored[0]?.content_by_platform ?? {};
        const content = body.content ?? current.content;
        const texts = channelTexts(channels, { content, contentByPlatform, mediaCount: current.media.length, reddit: current.reddit });
        await editPost(temporal(), params.id, {
          content: body.content,
          contentByPlatform: body.contentByPlatform,
          publishAt: publishAt?.toISOString(),
          channelContent: texts,
        });
        return getPostForKey(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels);
      },
      { scope: 'publish', body: PatchBody, params: t.Object({ id: t.String({ maxLength: 64 }) }) },
    );
}
