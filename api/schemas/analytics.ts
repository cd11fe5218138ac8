// How posts performed: a post's figures, totals and series across posts, best times.
import { t } from 'elysia';
import { QueueSlotSchema } from './queues.ts';
import { WEEKDAYS } from '../../lib/zoned-time.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { METRICS, type Metric } from '../../platforms/types.ts';
import { CLICKS_SOURCES } from '../../domain/analytics/metrics.ts';
import { POST_CHANNEL_STATUSES } from '../../db/entities/post-channel.ts';
import { strict, DateTime, NullableDateTime, NullableString, NullableInteger, oneOf } from './primitives.ts';

const METRIC_NOTES: Record<Metric, string> = {
  impressions: 'Times the post was shown.',
  views: 'Plays of its video.',
  likes: 'Likes, favourites, reactions.',
  replies: 'Replies or comments.',
  reposts: 'Reposts, boosts, retweets, shares.',
  quotes: 'Quote posts.',
  saves: 'Saves and bookmarks.',
  clicks: 'Link clicks: the platform’s figure, else the clicks on the post’s short links counted by the service (tracked links).',
};

/** Every metric of the vocabulary; null where the platform reports none (never 0 in its place). */
const metricsSchema = (description?: string) =>
  t.Object(
    Object.fromEntries(METRICS.map((m) => [m, NullableInteger(METRIC_NOTES[m])])) as Record<Metric, ReturnType<typeof NullableInteger>>,
    { ...strict, ...(description ? { description } : {}) },
  );

const ClicksSourceSchema = t.Union([oneOf(CLICKS_SOURCES), t.Null()], {
  description:
    'Where `metrics.clicks` comes from: `platform` (its reading), `service` (the clicks on this channel post’s short links, counted as they happen; in a post’s analytics `measuredAt.clicks` is then the answer’s time); null: no figure.',
});

export const PostAnalyticsSchema = t.Object(
  {
    postId: t.String(),
    channels: t.Array(
      t.Object(
        {
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          status: oneOf(POST_CHANNEL_STATUSES),
          platformPostId: NullableString('The platform’s id of the post, once published.'),
          url: NullableString('Live URL of the published post.'),
          metrics: metricsSchema(
            'The latest figure of each metric: from the newest reading that had one (a reading that got nothing keeps the last).',
          ),
          measuredAt: t.Object(
            Object.fromEntries(METRICS.map((m) => [m, NullableDateTime(`When \`metrics.${m}\` was read.`)])) as Record<
              Metric,
              ReturnType<typeof NullableDateTime>
            >,
            { ...strict, description: 'When each figure of `metrics` was read; null where there is none.' },
          ),
          clicksSource: ClicksSourceSchema,
          lastReadingAt: NullableDateTime('The newest reading.'),
          nextReadingAt: NullableDateTime('The next scheduled reading; null once the post is no longer followed.'),
          error: NullableString('Why the last reading got nothing (the platform’s reason, a channel to reconnect, a deleted post).'),
          history: t.Array(t.Object({ measuredAt: DateTime(), metrics: metricsSchema() }, strict), {
            description: 'Every reading, oldest first.',
          }),
        },
        strict,
      ),
      { description: 'One per channel of the post.' },
    ),
    links: t.Array(
      t.Object(
        {
          url: t.String({ description: 'The link as the post’s text has it.' }),
          shortUrl: t.String({ description: 'The short link published in its place.' }),
          channelId: t.String({ description: 'The channel it was published on (one short link per post, channel and link).' }),
          clicks: t.Integer({
            minimum: 0,
            description: 'Clicks counted: at most one per client address and minute; link-preview crawlers and HEAD requests count none.',
          }),
        },
        strict,
      ),
      { description: 'The post’s short links (`links.shorten`), by channel; empty when it has none.' },
    ),
  },
  strict,
);

export const AnalyticsSummarySchema = t.Object(
  {
    from: DateTime('Start of the range (inclusive).'),
    to: DateTime('End of the range (exclusive).'),
    groupBy: oneOf(['day', 'week']),
    timeZone: t.String({ description: 'The organization’s time zone, in which the periods are days or weeks.' }),
    posts: t.Integer({ description: 'Channel posts published in the range.' }),
    totals: metricsSchema('Each figure summed over the posts that report it; null when none does.'),
    series: t.Array(
      t.Object(
        {
          period: t.String({ description: 'The period’s first day (YYYY-MM-DD, a Monday for weeks).' }),
          start: DateTime('When the period starts.'),
          posts: t.Integer(),
          totals: metricsSchema(),
        },
        strict,
      ),
      { description: 'Every period of the range in order, empty ones too, by each channel post’s publishing time.' },
    ),
    topPosts: t.Array(
      t.Object(
        {
          postId: t.String(),
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          url: NullableString('Live URL.'),
          publishedAt: DateTime(),
          engagement: t.Integer({ description: 'likes + replies + reposts + quotes + saves (those reported).' }),
          metrics: metricsSchema(),
          clicksSource: ClicksSourceSchema,
        },
        strict,
      ),
      { description: 'The 10 channel posts of most engagement, ties by newest.' },
    ),
  },
  strict,
);

const BestTimeCellSchema = t.Object(
  {
    weekday: oneOf(WEEKDAYS),
    hour: t.Integer({ minimum: 0, maximum: 23, description: 'Hour of publishing in `timeZone`.' }),
    posts: t.Integer(),
    averageEngagement: t.Number({ description: 'Mean of likes + replies + reposts + quotes + saves of those posts.' }),
  },
  strict,
);

export const BestTimesSchema = t.Object(
  {
    channelId: t.String(),
    timeZone: t.String({ description: 'The channel’s queue time zone, in which weekdays and hours are counted.' }),
    since: DateTime('Posts published from this instant (90 days back) count.'),
    posts: t.Integer({ description: 'Posts with at least one reading behind the cells.' }),
    cells: t.Array(BestTimeCellSchema, { description: 'Every weekday and hour with posts, Monday 00 first.' }),
    best: t.Array(BestTimeCellSchema, { description: 'Cells with at least 2 posts, best mean engagement first.' }),
    suggestedSlots: t.Array(QueueSlotSchema, {
      description: 'The 5 best cells as queue slots: PUT them to /v1/channels/{id}/queue (with this timeZone) to post at those times.',
    }),
  },
  strict,
);
