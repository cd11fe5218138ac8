// RSS and Atom feeds that post by themselves (docs/api.md "Feeds"; domain/feeds/feeds.ts states
// the rules): /v1/feeds. The `publish` scope, and a member's role that may manage feeds.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { answerStored } from '../../http/stored-response.ts';
import { CursorParam, LimitParam, parseLimit, TagIdParam } from '../../http/page-query.ts';
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
  feedPlatformProblem,
} from '../../domain/feeds/feeds.ts';
import type { Auth } from '../auth.ts';
import { authPlugin } from '../auth.ts';
import { Chars, FeedItemListSchema, FeedListSchema, FeedSchema, HttpUrl, PathId } from '../schemas.ts';
import { doc } from '../openapi/operation.ts';
import { MADE_POSTS_TAG_IDS, PLACEMENT_FIELDS, TAG_FILTER } from '../openapi/fields.ts';
import { ChannelIds, TagIds } from '../../domain/posts/content.ts';
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
    tagIds: t.Optional(TagIds),
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
    tagIds: t.Optional(TagIds),
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
const ListQuery = t.Object({ tagId: TagIdParam() });
const ItemsQuery = t.Object({ limit: LimitParam(), cursor: CursorParam() });

const FEED_URL =
  'The feed’s http(s) URL, at most 2048 characters, without user name or password (the pattern). A host label beginning `xn--` must be valid Punycode. Its host must resolve, and not to a private, loopback or link-local address (unless the operator allows private addresses); redirects are not followed. It must answer, within 20 s and 5 MB, an RSS or Atom feed.';
const FEED_TEMPLATE =
  'The text of each item’s post; default `{title} {link}`. Placeholders: `{title}`, `{link}`, `{summary}` (plain text, at most 300 characters), `{author}`, `{categories}` (comma-separated), `{feed}` (its name). Any other `{word}` is `422`, and so is a template of only spaces.';
const FEED_TEMPLATE_BY_PLATFORM =
  'A template per platform (upper-case platform name → template, the same placeholders), instead of `template` on that platform’s channels. Each key must be the platform of a target channel.';

/** A feed's channels: those of a post, but none a text-only post cannot go to (domain/feeds/feeds.ts). */
const FEED_CHANNEL_IDS = `${PLACEMENT_FIELDS.channelIds} A feed’s posts are text only (no media, options or Reddit target), so a channel on a platform whose \`rules\` require media or fields (${PLATFORMS.filter((p) => feedPlatformProblem(p)).join(', ')}) is \`422\` at \`channelIds.N\`, saying why.`;

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const FEED_OPERATIONS = {
  createFeed: doc({
    operationId: 'createFeed',
    audit: { action: 'feed.create', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Add an RSS or Atom feed that posts by itself',
    description:
      'The feed is read now: a URL that is not a readable RSS or Atom feed is `422` at `url`, with the reason. The items it has now are its backlog and are never posted, but for the newest `backfill`, which are posted within a minute. From then on it is read every `pollMinutes` (with `If-None-Match` / `If-Modified-Since`), and each new item becomes a post on `channelIds` made from the template, as Schedule a post would make it (the same checks, webhooks and approval as the key’s own posts). An item is posted at most once: items are known by their RSS guid or Atom id (else their link), and an item whose link was already seen is not new either, so reordered, re-dated or edited items are not posted again. At most 10 items are posted per read; more wait for the next. After 5 failed reads in a row the feed is paused with `pausedReason` and the `feed.failed` webhook; each posted item sends `feed.item.posted`. An organization has at most 100 feeds.',
    errors: ['forbidden_scope', 'reauth_required', 'conflict', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `publish` scope (`details.requiredScope`), its member’s role may not manage feeds, or it is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields`): a URL that cannot be read as a feed (refused address, HTTP error, timeout after 20 s, more than 5 MB, not RSS or Atom), an unknown `{placeholder}` in a template, unknown or disabled channels, a channel a text-only post cannot go to (`channelIds.N`)',
      conflict: 'the organization has 100 feeds already, or an Idempotency-Key reused with another body or its first request still running',
    },
    success: { status: 201, description: 'The feed, `active`.', location: true },
    idempotent: true,
    body: {
      name: 'CreateFeedRequest',
      fields: {
        url: FEED_URL,
        channelIds: FEED_CHANNEL_IDS,
        tagIds: MADE_POSTS_TAG_IDS('each of its posts'),
        name: 'A name for it; default: the feed’s own title.',
        template: FEED_TEMPLATE,
        templateByPlatform: FEED_TEMPLATE_BY_PLATFORM,
        mode: '`now` (default): each new item is published at once. `queue`: at the next free slot of the channels’ posting queues.',
        filter:
          '`include`: an item is posted only if its title, summary or categories contain one of these words (any letter case); `exclude`: never if they contain one of these. Null or absent: every item.',
        pollMinutes: 'Minutes between two reads, 1–1440; default 15.',
        backfill: 'How many of the newest items present now to post, 0–20; default 0 (none: only items that appear later are posted).',
      },
    },
  }),

  listFeeds: doc({
    operationId: 'listFeeds',
    tag: 'Feeds',
    action: 'read',
    summary: 'List the feeds',
    description:
      'Every feed of the organization that is not deleted, oldest first. A channel-limited key sees those all of whose channels are in its list.',
    errors: ['validation_failed'],
    success: { description: 'The feeds.' },
    query: { tagId: TAG_FILTER('the feeds') },
  }),

  getFeed: doc({
    operationId: 'getFeed',
    tag: 'Feeds',
    action: 'read',
    summary: 'A feed',
    description: 'Its settings, its state (`status`, `pausedReason`, the last read and failure) and when it is read next.',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The feed.' },
    params: { id: 'Feed id (`feed_…`).' },
  }),

  listFeedItems: doc({
    operationId: 'listFeedItems',
    tag: 'Feeds',
    action: 'read',
    summary: 'The items a feed has seen',
    description:
      'Every item the feed has shown, newest first, with what became of it: posted (its post), backlog, filtered out, or refused (why, as Schedule a post would answer). Keyset pagination: pass `nextCursor` as `cursor` for the next page.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: { validation_failed: 'a limit outside 1–100, or a cursor this API did not return' },
    success: { description: 'A page of items.' },
    params: { id: 'Feed id (`feed_…`).' },
    query: {
      limit: { description: 'Page size.', type: 'integer', minimum: 1, maximum: 100, default: 20, maxLength: undefined },
      cursor: 'Page position: opaque, only a `nextCursor` from an earlier page of this list (any other value is `422`).',
    },
  }),

  updateFeed: doc({
    operationId: 'updateFeed',
    audit: { action: 'feed.update', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Edit, pause or resume a feed',
    description:
      'Changes apply to the items that appear from now on. A new `url` is read now as on creation, and its present items become backlog. `status: paused` stops the reads; `status: active` resumes them at once and clears the failures and `pausedReason`.',
    errors: ['forbidden_scope', 'not_found', 'reauth_required', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope, its member’s role may not manage feeds, or it is limited to other channels',
      validation_failed:
        'invalid body (`details.fields`): a new URL that cannot be read as a feed, an unknown placeholder, unknown or disabled channels, a channel a text-only post cannot go to (`channelIds.N`)',
    },
    success: { description: 'The updated feed.' },
    params: { id: 'Feed id (`feed_…`).' },
    body: {
      name: 'UpdateFeedRequest',
      fields: {
        url: `${FEED_URL} Read now; its present items are not posted.`,
        channelIds: FEED_CHANNEL_IDS,
        tagIds: MADE_POSTS_TAG_IDS('each of its posts'),
        name: 'Its name.',
        template: FEED_TEMPLATE,
        templateByPlatform: `${FEED_TEMPLATE_BY_PLATFORM} Replaces the whole map.`,
        mode: '`now` or `queue`.',
        filter: 'As on creation; null: every item.',
        pollMinutes: 'Minutes between two reads, 1–1440.',
        status: '`paused` or `active` (resumes it, forgetting its failures).',
      },
    },
  }),

  deleteFeed: doc({
    operationId: 'deleteFeed',
    audit: { action: 'feed.delete', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Delete a feed',
    description: 'It is read no more; the posts it made stay. The feed is then gone (`404`).',
    errors: ['forbidden_scope', 'not_found', 'validation_failed'],
    success: { status: 204, description: 'Deleted; no body.' },
    params: { id: 'Feed id (`feed_…`).' },
  }),

  pollFeed: doc({
    operationId: 'pollFeed',
    audit: { action: 'feed.poll', resource: 'feed' },
    tag: 'Feeds',
    action: 'feeds.write',
    summary: 'Read a feed now',
    description:
      'Reads the feed now, as the scheduled reads do (one read at a time per feed: asking during a read changes nothing). Answers at once; the outcome shows on the feed (`lastPolledAt`, `lastError`) and its items within moments.',
    errors: ['forbidden_scope', 'not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the feed is paused (`details.pausedReason`): resume it with `status: active` first' },
    success: { status: 202, description: 'The feed as it is now; the read follows.' },
    temporal: true,
    params: { id: 'Feed id (`feed_…`).' },
  }),
};

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
        operation: FEED_OPERATIONS.createFeed,
      },
    )
    .get(
      '/feeds',
      async ({ auth, query }) => ({
        data: await listFeeds(deps.orm.em.fork(), auth.organization.id, auth.channels, { tagId: query.tagId }),
      }),
      {
        query: ListQuery,
        response: { 200: FeedListSchema },
        operation: FEED_OPERATIONS.listFeeds,
      },
    )
    .get('/feeds/:id', ({ auth, params }) => getFeed(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels), {
      params: IdParams,
      response: { 200: FeedSchema },
      operation: FEED_OPERATIONS.getFeed,
    })
    .get(
      '/feeds/:id/items',
      ({ auth, params, query }) => {
        const fields: FieldError[] = [];
        const limit = parseLimit(query.limit, fields);
        if (fields.length) throw errors.validation(fields);
        return listFeedItems(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, { limit, cursor: query.cursor });
      },
      { params: IdParams, query: ItemsQuery, response: { 200: FeedItemListSchema }, operation: FEED_OPERATIONS.listFeedItems },
    )
    .patch('/feeds/:id', ({ auth, params, body }) => updateFeed(deps.orm.em.fork(), maker(auth), params.id, body), {
      params: IdParams,
      body: PatchBody,
      transform: refuseUnstorableBody,
      response: { 200: FeedSchema },
      operation: FEED_OPERATIONS.updateFeed,
    })
    .delete(
      '/feeds/:id',
      async ({ auth, params, set }) => {
        await deleteFeed(deps.orm.em.fork(), auth.organization.id, params.id, auth.channels, auth.now);
        set.status = 204;
      },
      { params: IdParams, operation: FEED_OPERATIONS.deleteFeed },
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
        operation: FEED_OPERATIONS.pollFeed,
      },
    );
}
