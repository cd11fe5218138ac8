// Recurring posts (docs/api.md "Recurring posts (series)"): /v1/series. A resource of its own rather
// than `repeat` on POST /v1/posts: creating one makes no post yet (each occurrence is created as a
// post shortly before its time), so its answer is a series, not a post (docs/decisions.md).
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { answerStored } from '../../http/stored-response.ts';
import { createOnce } from '../../services/idempotency.ts';
import { createSeries, deleteSeries, getSeries, listSeries, MAX_COUNT, MAX_INTERVAL, updateSeries } from '../../domain/series/series.ts';
import { authPlugin } from '../auth.ts';
import { Chars, DateTimeInput, PathId, SeriesListSchema, SeriesSchema } from '../schemas.ts';
import { TIME_ZONE_CHARS } from '../../lib/zoned-time.ts';
import { doc } from '../openapi/operation.ts';
import { SERIES_FIELDS, TAG_FILTER } from '../openapi/fields.ts';
import { TagIdParam } from '../../http/page-query.ts';
import { ChannelIds, TagIds } from '../../domain/posts/content.ts';
import { PostContent } from '../../domain/posts/content.ts';

const Repeat = t.Object(
  {
    every: t.Union([t.Literal('day'), t.Literal('week'), t.Literal('month')], { error: 'must be day, week or month' }),
    interval: t.Optional(t.Integer({ minimum: 1, maximum: MAX_INTERVAL })),
    until: t.Optional(t.Union([DateTimeInput(), t.Null()])),
    count: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: MAX_COUNT }), t.Null()])),
  },
  { additionalProperties: false },
);
const TimeZone = Chars(TIME_ZONE_CHARS, { min: 1 });
const ListQuery = t.Object({ tagId: TagIdParam() });

/** The fields of a post's content a series' template carries (domain/posts/content.ts). */
const Template = t.Pick(PostContent, ['content', 'mediaIds', 'contentByPlatform', 'reddit', 'options']);

const CreateBody = t.Object(
  {
    ...Template.properties,
    channelIds: ChannelIds,
    tagIds: t.Optional(TagIds),
    publishAt: DateTimeInput(),
    repeat: Repeat,
    timeZone: t.Optional(TimeZone),
  },
  { additionalProperties: false },
);

const PatchBody = t.Object(
  {
    ...t.Partial(Template).properties,
    channelIds: t.Optional(ChannelIds),
    tagIds: t.Optional(TagIds),
    publishAt: t.Optional(DateTimeInput()),
    repeat: t.Optional(Repeat),
    timeZone: t.Optional(TimeZone),
    status: t.Optional(
      t.Literal('active', { description: '`active` resumes a paused series; the key that resumes it makes its occurrences from then on.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

const IdParams = t.Object({ id: PathId() });

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const SERIES_OPERATIONS = {
  createSeries: doc({
    operationId: 'createSeries',
    audit: { action: 'series.create', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Create a recurring post (a series)',
    description:
      'A post template and a rule: the first occurrence at `publishAt`, then every `repeat.interval` days, weeks or months at the same local time of day in `timeZone` (daylight-saving changes keep it), until `repeat.until` and/or `repeat.count` occurrences. Each occurrence is created as a post of its own (with `seriesId`) 5 minutes before its time, through the same path as Schedule a post: the same checks, the `post.scheduled` webhook, and PATCH, DELETE and retry on it. Monthly on the 29th–31st falls on the month’s last day when it is shorter (Jan 31 → Feb 28 → Mar 31). Occurrences of one series are not duplicates of each other (`duplicate_post`). The template is checked now as a post would be.',
    errors: ['forbidden_scope', 'reauth_required', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields`): `publishAt` out of its bounds, `repeat.until` before it, an unknown time zone, unknown or disabled channels, text over a channel’s `maxChars`, media or required fields a channel needs',
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
    },
    success: { status: 201, description: 'The series, `active`.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreateSeriesRequest',
      fields: SERIES_FIELDS,
    },
  }),

  listSeries: doc({
    operationId: 'listSeries',
    tag: 'Posts',
    action: 'read',
    summary: 'List the series',
    description:
      'Every series of the organization that is not deleted, oldest first. A channel-limited key sees those all of whose channels are in its list.',
    errors: ['validation_failed'],
    success: { description: 'The series.' },
    query: { tagId: TAG_FILTER('the series') },
  }),

  getSeries: doc({
    operationId: 'getSeries',
    tag: 'Posts',
    action: 'read',
    summary: 'A series',
    description:
      'Its template, rule, how many occurrences were created and when the next is due. Its occurrences: GET /posts, each with this `seriesId`.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The series.' },
    params: { id: 'Series id (`ser_…`).' },
  }),

  updateSeries: doc({
    operationId: 'updateSeries',
    audit: { action: 'series.update', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Edit a series',
    description:
      'Changes apply to occurrences not yet created; those already created are posts of their own (edit them with PATCH /posts/{id}). A new rule continues after the last occurrence created (occurrences created count towards `repeat.count`). `publishAt` (the first occurrence) can change only before it is created. A rule with no occurrence left ends the series.',
    errors: ['not_found', 'conflict', 'reauth_required', 'validation_failed'],
    errorNotes: { conflict: 'the series has ended' },
    success: { description: 'The updated series.' },
    temporal: true,
    params: { id: 'Series id (`ser_…`).' },
    body: { name: 'UpdateSeriesRequest', fields: SERIES_FIELDS },
  }),

  deleteSeries: doc({
    operationId: 'deleteSeries',
    audit: { action: 'series.delete', resource: 'series' },
    tag: 'Posts',
    action: 'series.write',
    summary: 'Stop a series',
    description:
      'No further occurrence is created, and occurrences already created but still scheduled are cancelled (as DELETE /posts/{id}); published ones stay. The series is then gone (`404`).',
    errors: ['not_found', 'validation_failed'],
    success: { status: 204, description: 'Stopped; no body.' },
    temporal: true,
    params: { id: 'Series id (`ser_…`).' },
  }),
};

export function seriesRoutes(deps: AppDeps) {
  // What the template's checks read of each channel's account (domain/capabilities.ts).
  const capabilities = { orm: deps.orm, ...deps.platforms };
  return router()
    .use(authPlugin(deps))
    .post(
      '/series',
      async ({ auth, body, set, headers }) => {
        const em = deps.orm.em.fork();
        const result = await createOnce(
          em,
          auth,
          'POST /v1/series',
          { body, idempotencyKey: headers['idempotency-key'] },
          async (claim) => {
            const view = await createSeries(em, deps.temporal, {
              organization: auth.organization,
              source: 'api',
              key: { apiKeyId: auth.key.id, channels: auth.channels },
              channelIds: body.channelIds,
              content: body.content,
              contentByPlatform: body.contentByPlatform ?? {},
              reddit: body.reddit ?? null,
              options: body.options ?? {},
              capabilities,
              mediaIds: body.mediaIds ?? [],
              tagIds: body.tagIds,
              publishAt: body.publishAt,
              repeat: body.repeat,
              timeZone: body.timeZone,
              now: auth.now,
              claim,
            });
            return view.id;
          },
          (id) => getSeries(em.fork(), auth.organization.id, id),
        );
        return answerStored(set, result);
      },
      {
        body: CreateBody,
        transform: refuseUnstorableBody,
        response: { 201: SeriesSchema },
        operation: SERIES_OPERATIONS.createSeries,
      },
    )
    .get(
      '/series',
      async ({ auth, query }) => ({
        data: await listSeries(deps.orm.em.fork(), auth.organization.id, { keyChannels: auth.channels, tagId: query.tagId }),
      }),
      {
        query: ListQuery,
        response: { 200: SeriesListSchema },
        operation: SERIES_OPERATIONS.listSeries,
      },
    )
    .get('/series/:id', ({ auth, params }) => getSeries(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: SeriesSchema },
      operation: SERIES_OPERATIONS.getSeries,
    })
    .patch(
      '/series/:id',
      ({ auth, params, body }) =>
        updateSeries(
          deps.orm.em.fork(),
          deps.temporal,
          auth.organization.id,
          params.id,
          body,
          { apiKeyId: auth.key.id, channels: auth.channels },
          auth.now,
          capabilities,
        ),
      {
        params: IdParams,
        body: PatchBody,
        transform: refuseUnstorableBody,
        response: { 200: SeriesSchema },
        operation: SERIES_OPERATIONS.updateSeries,
      },
    )
    .delete(
      '/series/:id',
      async ({ auth, params, set }) => {
        await deleteSeries(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
        set.status = 204;
      },
      { params: IdParams, operation: SERIES_OPERATIONS.deleteSeries },
    );
}
