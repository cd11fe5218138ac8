// Posting queues (docs/api.md "Queues"): GET and PUT /v1/channels/{id}/queue.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { errors } from '../../lib/errors.ts';
import { DEFAULT_FREE_SLOTS, getQueue, MAX_FREE_SLOTS, MAX_QUEUE_SLOTS, setQueue } from '../../domain/queues/queues.ts';
import { SLOT_TIME_PATTERN } from '../../domain/queues/slots.ts';
import { WEEKDAYS } from '../../lib/zoned-time.ts';
import { authPlugin } from '../auth.ts';
import { Chars, PathId, QueueSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

const Slot = t.Object(
  {
    weekday: t.Union(
      WEEKDAYS.map((w) => t.Literal(w)),
      { error: `must be one of ${WEEKDAYS.join(', ')}` },
    ),
    time: t.String({ pattern: SLOT_TIME_PATTERN, error: 'must be a local time HH:MM, 00:00 to 23:59' }),
  },
  { additionalProperties: false },
);

const PutBody = t.Object(
  {
    slots: t.Array(Slot, { maxItems: MAX_QUEUE_SLOTS }),
    timeZone: t.Optional(t.Union([Chars(64, { min: 1 }), t.Null()])),
  },
  { additionalProperties: false },
);

const IdParams = t.Object({ id: PathId() });
const Query = t.Object({ count: t.Optional(t.String({ maxLength: 16 })) });

function parseCount(value: string | undefined): number {
  if (value === undefined) return DEFAULT_FREE_SLOTS;
  const n = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_FREE_SLOTS))
    throw errors.validation([{ path: 'count', message: `must be an integer from 1 to ${MAX_FREE_SLOTS}` }]);
  return n;
}

export function queueRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/channels/:id/queue',
      ({ auth, params, query }) =>
        getQueue(deps.orm.em.fork(), auth.organization.id, params.id, {
          keyChannels: auth.channels,
          now: auth.now,
          count: parseCount(query.count),
        }),
      { params: IdParams, query: Query, response: { 200: QueueSchema }, operation: OPERATIONS.getQueue },
    )
    .put(
      '/channels/:id/queue',
      ({ auth, params, body }) =>
        setQueue(deps.orm.em.fork(), auth.organization.id, params.id, body, { keyChannels: auth.channels, now: auth.now }),
      {
        params: IdParams,
        body: PutBody,
        transform: refuseUnstorableBody,
        response: { 200: QueueSchema },
        operation: OPERATIONS.setQueue,
      },
    );
}
