// Posting queues (docs/api.md "Queues"): GET and PUT /v1/channels/{id}/queue.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { errors } from '../../lib/errors.ts';
import { DEFAULT_FREE_SLOTS, getQueue, MAX_FREE_SLOTS, MAX_QUEUE_SLOTS, setQueue } from '../../domain/queues/queues.ts';
import { SLOT_TIME_PATTERN } from '../../domain/queues/slots.ts';
import { TIME_ZONE_CHARS, WEEKDAYS } from '../../lib/zoned-time.ts';
import { authPlugin } from '../auth.ts';
import { Chars, PathId, QueueSchema } from '../schemas.ts';
import { doc } from '../openapi/operation.ts';

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
    timeZone: t.Optional(t.Union([Chars(TIME_ZONE_CHARS, { min: 1 }), t.Null()])),
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

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const QUEUE_OPERATIONS = {
  getQueue: doc({
    operationId: 'getQueue',
    tag: 'Channels',
    action: 'read',
    summary: 'A channel’s posting queue',
    description:
      'The channel’s weekly posting slots (weekday and local time), the IANA time zone they are in (the channel’s own, else the organization’s, UTC unless set) and the next free slot times. A slot time is free when no other post that is not deleted and still scheduled (or publishing) sits on the channel at that instant. Daylight-saving changes: a 09:00 slot stays 09:00 local; a slot in the skipped hour moves forward by the gap (02:30 → 03:30); a slot in the repeated hour is used once, at its first instant. Only free times within 90 days are listed.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed: '`count` is not an integer from 1 to 100',
    },
    success: { description: 'The queue.' },
    params: { id: 'Channel id (`ch_…`).' },
    query: {
      count: {
        description: 'How many free slot times to list.',
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: 10,
        maxLength: undefined,
      },
    },
  }),

  setQueue: doc({
    operationId: 'setQueue',
    audit: { action: 'queue.update', resource: 'queue' },
    tag: 'Channels',
    action: 'queues.write',
    summary: 'Replace a channel’s posting queue',
    description:
      'Replaces every weekly slot of the channel (an empty list removes the queue). `timeZone` sets the channel’s own zone (null: use the organization’s; omitted: unchanged). Posts already queued keep their times.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      forbidden_scope: 'the key lacks the `publish` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed:
        'a weekday that is not monday … sunday, a time that is not HH:MM (00:00–23:59), more than 100 slots, or a time zone that is not an IANA zone (`details.fields`)',
    },
    success: { description: 'The queue as stored, with its next free slot times.' },
    params: { id: 'Channel id (`ch_…`).' },
    body: {
      name: 'SetQueueRequest',
      fields: {
        slots:
          'Weekly slots: `{weekday, time}` with weekday `monday` … `sunday` and time `HH:MM` (24-hour, local to the zone). Repeats are dropped. At most 100.',
        timeZone: 'IANA time zone of the channel’s queue, e.g. `America/New_York`; null: the organization’s. Omit to keep it.',
      },
    },
  }),
};

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
      { params: IdParams, query: Query, response: { 200: QueueSchema }, operation: QUEUE_OPERATIONS.getQueue },
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
        operation: QUEUE_OPERATIONS.setQueue,
      },
    );
}
