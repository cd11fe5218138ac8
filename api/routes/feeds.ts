// RSS and Atom feeds that post by themselves (docs/api.md "Feeds"; domain/feeds/feeds.ts states
// the rules): /v1/feeds. The `publish` scope, and a member's role that may manage feeds.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { answerStored } from '../../http/stored-response.ts';
import { CursorParam, LimitParam, parseLimit } from '../../http/page-query.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { idempotent, storeAnswer } from '../../services/idempotency.ts';
import {
  createFeed,
  deleteFeed,
  getFeed,
  listFeedItems,
  listFeeds,
  MAX_BACKFILL,
  pollFeedNow,
  POLL_MINUTES,
  TEMPLATE_MAX_CHARS,
  FEED_LIMITS,
  updateFeed,
  type FeedMaker,
} from '../../domain/feeds/feeds.ts';
import type { Auth } from '../auth.ts';
import { authPlugin } from '../auth.ts';
import { Chars, FeedItemListSchema, FeedListSchema, FeedSchema, HttpUrl, PathId } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';
import { ChannelIds } from './posts.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';

const Url = HttpUrl(FEED_LIMITS.urlChars);
const Template = Chars(TEMPLATE_MAX_CHARS, { min: 1 });
const TemplateByPlatform = t.Record(t.String({ pattern: `^(${PLATFORMS.join('|')})$` }), Template, {
  maxProperties: PLATFORMS.length,
  additionalProperties: false,
});
const Words = t.Array(Chars(FEED_LIMITS.wordChars, { min: 1 }), { maxItems: FEED_LIMITS.filterWords });
const Filter = t.Object({ include: t.Optional(Words), exclude: t.Optional(Words) }, { additionalProperties: false });
const PollMinutes = t.Integer({ minimum: POLL_MINUTES.min, maximum: POLL_MINUTES.max });
const Mode = t.Union([t.Literal('now'), t.Literal('queue')], { error: 'must be now or queue' });

const CreateBody = t.Object(
  {
    url: Url,
    channelIds: ChannelIds,
    name: t.Optional(Chars(FEED_LIMITS.nameChars, { min: 1 })),
    template: t.Optional(Template),
    templateByPlatform: t.Optional(TemplateByPlatform),
    mode: t.Optional(Mode),
    filter: t.Optional(t.Union([Filter, t.Null()])),
    pollMinutes: t.Optional(PollMinutes),
    backfill: t.Optional(t.Integer({ minimum: 0, maximum: MAX_BACKFILL })),
  },
  { additionalProperties: false },
);

const PatchBody = t.Object(
  {
    url: t.Optional(Url),
    channelIds: t.Optional(ChannelIds),
    name: t.Optional(Chars(FEED_LIMITS.nameChars, { min: 1 })),
    template: t.Optional(Template),
    templateByPlatform: t.Optional(TemplateByPlatform),
    mode: t.Optional(Mode),
    filter: t.Optional(t.Union([Filter, t.Null()])),
    pollMinutes: t.Optional(PollMinutes),
    status: t.Optional(t.Union([t.Literal('active'), t.Literal('paused')], { error: 'must be active or paused' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const IdParams = t.Object({ id: PathId() });
const ItemsQuery = t.Object({ limit: LimitParam(), cursor: CursorParam() });

export function feedRoutes(deps: AppDeps) {
  const maker = (auth: Auth): FeedMaker => ({
    organizationId: auth.organization.id,
    source: 'api',
    key: { apiKeyId: auth.key.id, channels: auth.channels },
    outbound: deps.outbound ?? { allowPrivate: false },
    now: auth.now,
  });
  return router()
    .use(authPlugin(deps))
    .post(
      '/feeds',
      async ({ auth, body, set, headers }) => {
        const em = deps.orm.em.fork();
        const scope = {
          organizationId: auth.organization.id,
          apiKeyId: auth.key.id,
          endpoint: 'POST /v1/feeds',
          key: headers['idempotency-key'],
          body,
          now: auth.now,
        };
        const result = await idempotent(em, scope, async () => {
          const view = await createFeed(em, maker(auth), body, (tx, v) =>
            storeAnswer(tx, scope, { status: 201, body: v, location: `/v1/feeds/${v.id}` }),
          );
          return { status: 201, body: view, location: `/v1/feeds/${view.id}` };
        });
        return answerStored(set, result);
      },
      {
        body: CreateBody,
        transform: refuseUnstorableBody,
        response: { 201: FeedSchema },
        operation: OPERATIONS.createFeed,
      },
    )
    .get('/feeds', async ({ auth }) => ({ data: await listFeeds(deps.orm.em.fork(), auth.organization.id, auth.channels) }), {
      response: { 200: FeedListSchema },
      operation: OPERATIONS.listFeeds,
    })
    .get('/feeds/:id', ({ auth, params }) => getFeed(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: FeedSchema },
      operation: OPERATIONS.getFeed,
    })
    .get(
      '/feeds/:id/items',
      ({ auth, params, query }) => {
        const fields: FieldError[] = [];
        const limit = parseLimit(query.limit, fields);
        if (fields.length) throw errors.validation(fields);
        return listFeedItems(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, { limit, cursor: query.cursor });
      },
      { params: IdParams, query: ItemsQuery, response: { 200: FeedItemListSchema }, operation: OPERATIONS.listFeedItems },
    )
    .patch('/feeds/:id', ({ auth, params, body }) => updateFeed(deps.orm.em.fork(), maker(auth), params.id, body), {
      params: IdParams,
      body: PatchBody,
      transform: refuseUnstorableBody,
      response: { 200: FeedSchema },
      operation: OPERATIONS.updateFeed,
    })
    .delete(
      '/feeds/:id',
      async ({ auth, params, set }) => {
        await deleteFeed(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, auth.now);
        set.status = 204;
      },
      { params: IdParams, operation: OPERATIONS.deleteFeed },
    )
    .post(
      '/feeds/:id/poll',
      async ({ auth, params, set }) => {
        const view = await pollFeedNow(deps.orm.em.fork(), deps.temporal, auth.organization.id, params.id, auth.channels);
        set.status = 202;
        return view;
      },
      {
        params: IdParams,
        response: { 202: FeedSchema },
        operation: OPERATIONS.pollFeed,
      },
    );
}
