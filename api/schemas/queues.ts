// A channel's posting queue (docs/api.md "Queues").
import { t } from 'elysia';
import { WEEKDAYS } from '../../lib/zoned-time.ts';
import { SLOT_TIME_PATTERN } from '../../domain/queues/slots.ts';
import { strict, DateTime, oneOf } from './primitives.ts';

export const QueueSlotSchema = t.Object(
  {
    weekday: oneOf(WEEKDAYS),
    time: t.String({
      pattern: SLOT_TIME_PATTERN,
      description: 'Local time of day in the queue’s `timeZone`, `HH:MM` (24-hour).',
    }),
  },
  strict,
);

export const QueueSchema = t.Object(
  {
    channelId: t.String(),
    timeZone: t.String({ description: 'IANA time zone the slots are in: the channel’s own, else the organization’s (UTC unless set).' }),
    timeZoneSource: oneOf(['channel', 'organization'], 'Whether `timeZone` is the channel’s own setting or the organization’s.'),
    slots: t.Array(QueueSlotSchema, { description: 'Weekly slots, Monday first, then by time.' }),
    nextFreeSlots: t.Array(DateTime(), {
      description:
        'The next free slot times (UTC), ascending, within 90 days: slot times at which no other post (not deleted, scheduled or publishing) sits on this channel.',
    }),
  },
  strict,
);
