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
import { OPERATIONS } from '../openapi/operations.ts';
import { ChannelIds } from './posts.ts';
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
const TimeZone = Chars(64, { min: 1 });

/** The fields of a post's content a series' template carries (domain/posts/content.ts). */
const Template = t.Pick(PostContent, ['content', 'mediaIds', 'contentByPlatform', 'reddit', 'options']);

const CreateBody = t.Object(
  {
    ...Template.properties,
    channelIds: ChannelIds,
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
        operation: OPERATIONS.createSeries,
      },
    )
    .get(
      '/series',
      async ({ auth }) => ({ data: await listSeries(deps.orm.em.fork(), auth.organization.id, { keyChannels: auth.channels }) }),
      {
        response: { 200: SeriesListSchema },
        operation: OPERATIONS.listSeries,
      },
    )
    .get('/series/:id', ({ auth, params }) => getSeries(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: SeriesSchema },
      operation: OPERATIONS.getSeries,
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
        operation: OPERATIONS.updateSeries,
      },
    )
    .delete(
      '/series/:id',
      async ({ auth, params, set }) => {
        await deleteSeries(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels, auth.now);
        set.status = 204;
      },
      { params: IdParams, operation: OPERATIONS.deleteSeries },
    );
}
