import { t } from 'elysia';
import { router } from '../../http/router.ts';
import { parseRangeBound } from '../../lib/date-time.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { analyticsSummary } from '../../domain/analytics/summary.ts';
import { bestTimes } from '../../domain/analytics/best-times.ts';
import type { AppDeps } from '../../http/deps.ts';
import { authPlugin } from '../auth.ts';
import { OPERATIONS } from '../openapi/operations.ts';
import { AnalyticsSummarySchema, BestTimesSchema, Chars, DateTimeInput, PathId } from '../schemas.ts';

const SummaryQuery = t.Object({
  from: t.Optional(DateTimeInput()),
  to: t.Optional(DateTimeInput()),
  channelId: t.Optional(Chars(64, { min: 1 })),
  groupBy: t.Optional(t.Union([t.Literal('day'), t.Literal('week')])),
});

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
          { from, to, channelId: query.channelId, groupBy: query.groupBy ?? 'day' },
          auth.now,
        );
      },
      { query: SummaryQuery, response: { 200: AnalyticsSummarySchema }, operation: OPERATIONS.getAnalytics },
    )
    .get(
      '/channels/:id/best-times',
      ({ auth, params }) => bestTimes(deps.orm.em.fork(), auth.organization.id, params.id, { keyChannels: auth.channels, now: auth.now }),
      {
        params: t.Object({ id: PathId() }),
        response: { 200: BestTimesSchema },
        operation: OPERATIONS.getBestTimes,
      },
    );
}
