import { t } from 'elysia';
import { router } from '../../http/router.ts';
import { parseRangeBound } from '../../lib/date-time.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { analyticsSummary, GROUP_BYS } from '../../domain/analytics/summary.ts';
import { bestTimes } from '../../domain/analytics/best-times.ts';
import type { AppDeps } from '../../http/deps.ts';
import { authPlugin } from '../auth.ts';
import { doc } from '../openapi/operation.ts';
import { DATE_TIME, TAG_FILTER } from '../openapi/fields.ts';
import { TagIdParam } from '../../http/page-query.ts';
import { AnalyticsSummarySchema, BestTimesSchema, Chars, DateTimeInput, PathId } from '../schemas.ts';

const SummaryQuery = t.Object({
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  channelId: t.Optional(Chars(64, { min: 1 })),
  tagId: TagIdParam(),
  groupBy: t.Optional(t.Union(GROUP_BYS.map((g) => t.Literal(g)))),
});

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const ANALYTICS_OPERATIONS = {
  getAnalytics: doc({
    operationId: 'getAnalytics',
    tag: 'Analytics',
    action: 'read',
    summary: 'How the organization’s posts performed over a range',
    description:
      'Totals over the channel posts published in [from, to) (each with its latest figures), a series per day or week in the organization’s time zone, and the top 10 posts by engagement (likes + replies + reposts + quotes + saves). A key limited to channels counts only those. With `tagId`, only the posts with that tag count: a campaign’s figures.',
    errors: ['validation_failed'],
    errorNotes: { validation_failed: '`from` not before `to`, a range over 366 days, a malformed date-time or groupBy' },
    success: { description: 'Totals, series and top posts.' },
    query: {
      from: DATE_TIME('Start (inclusive), with an offset; default 30 days before `to`.'),
      to: DATE_TIME('End (exclusive), with an offset; default now.'),
      channelId: 'Only this channel’s posts.',
      tagId: TAG_FILTER('the posts'),
      groupBy: '`day` (default) or `week` (Monday first).',
    },
  }),

  getBestTimes: doc({
    operationId: 'getBestTimes',
    tag: 'Analytics',
    action: 'read',
    summary: 'When this channel’s posts did best',
    description:
      'From the channel’s own posts of the last 90 days that have been read: engagement by weekday and hour of publishing in the channel’s queue time zone, with the number of posts behind each cell; the cells with at least 2 posts ranked; and the best 5 as queue slots ready for PUT /channels/{id}/queue.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      not_found: 'no such channel in the organization',
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
    },
    success: { description: 'Cells, ranking and suggested slots.' },
    params: { id: 'Channel id (`ch_…`).' },
  }),
};

export function analyticsRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/analytics',
      ({ auth, query }) => {
        const fields: FieldError[] = [];
        const from = parseRangeBound(query.from, 'from', fields);
        const to = parseRangeBound(query.to, 'to', fields);
        if (fields.length) throw errors.validation(fields);
        return analyticsSummary(
          deps.orm.em.fork(),
          auth.organization.id,
          auth.channels,
          { from, to, channelId: query.channelId, tagId: query.tagId, groupBy: query.groupBy ?? 'day' },
          auth.now,
        );
      },
      { query: SummaryQuery, response: { 200: AnalyticsSummarySchema }, operation: ANALYTICS_OPERATIONS.getAnalytics },
    )
    .get(
      '/channels/:id/best-times',
      ({ auth, params }) => bestTimes(deps.orm.em.fork(), auth.organization.id, params.id, { keyChannels: auth.channels, now: auth.now }),
      {
        params: t.Object({ id: PathId() }),
        response: { 200: BestTimesSchema },
        operation: ANALYTICS_OPERATIONS.getBestTimes,
      },
    );
}
