// Recurring posts (docs/api.md "Recurring posts (series)").
import { t } from 'elysia';
import { strict, DateTime, NullableDateTime, NullableInteger, oneOf } from './primitives.ts';

export const SeriesRepeatSchema = t.Object(
  {
    every: oneOf(['day', 'week', 'month']),
    interval: t.Integer({ description: 'Every `interval` days, weeks or months.' }),
    until: NullableDateTime('No occurrence after this instant; null: no end date.'),
    count: NullableInteger('At most this many occurrences, the first included; null: no limit.'),
  },
  strict,
);

export const SeriesSchema = t.Object(
  {
    id: t.String(),
    status: oneOf(
      ['active', 'paused', 'ended'],
      '`active` while occurrences are to come; `paused` when its maker may no longer make its posts (`pausedReason`; PATCH `status: active` resumes it, the resuming key its maker from then on); `ended` once the rule has none left.',
    ),
    content: t.String(),
    contentByPlatform: t.Record(t.String(), t.String()),
    channelIds: t.Array(t.String()),
    mediaIds: t.Array(t.String()),
    tagIds: t.Array(t.String(), { description: 'The organization’s tags each occurrence gets (GET /tags), in id order.' }),
    reddit: t.Union([t.Object({ subreddit: t.String(), title: t.String() }, strict), t.Null()]),
    options: t.Record(t.String(), t.Record(t.String(), t.Unknown()), {
      description: 'Per-platform post options each occurrence gets (as `options` of Schedule a post); `{}`: none.',
    }),
    publishAt: DateTime('The first occurrence; the rule repeats its local time of day in `timeZone`.'),
    timeZone: t.String({ description: 'IANA time zone of the rule (daylight-saving changes keep the local time of day).' }),
    repeat: SeriesRepeatSchema,
    occurrencesCreated: t.Integer({ description: 'Occurrences created (or skipped, see `lastError`) so far.' }),
    nextOccurrenceAt: NullableDateTime(
      'When the next occurrence is due (it is created as a post 5 minutes before); null when none is left.',
    ),
    lastError: t.Union([t.Object({ at: t.String({ format: 'date-time' }), code: t.String(), message: t.String() }, strict), t.Null()], {
      description:
        'Why the last occurrence that could not be created was skipped (the create checks refused it: `code` and `message` as POST /v1/posts would answer); null when none was.',
    }),
    pausedReason: t.Union([t.String(), t.Null()], {
      description:
        'Why it is paused: the key that made it was revoked or expired, or its member left or lost the role to post; null when it is not paused.',
    }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const SeriesListSchema = t.Object({ data: t.Array(SeriesSchema, { description: 'Oldest first.' }) }, strict);
