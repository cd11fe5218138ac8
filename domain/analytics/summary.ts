// GET /v1/analytics: how an organization's posts performed over a range. Rules:
//
// 1. The posts counted are the channel posts published within [from, to) that the key sees
//    (its channel list), of one channel with `channelId`, of the posts with one tag (a campaign,
//    domain/tags.ts) with `tagId`; deleted posts are left out.
// 2. Each counts with its latest figures (domain/analytics/metrics.ts rule 6; `clicks` by rule 7:
//    the service's count of its short links where the platform reports none). A total is the sum
//    over the posts that have the figure, and null when none has it (never 0 in its place).
// 3. Periods are calendar days or ISO weeks (Monday first) in the organization's time zone, by
//    each channel post's publishing time; every period of the range is listed, empty ones too.
// 4. Engagement is likes + replies + reposts + quotes + saves (the figures that are not null);
//    the top posts are the TOP_POSTS channel posts of most engagement, ties by newest.
// 5. from defaults to 30 days before to, to to now; a range of more than MAX_RANGE_DAYS is refused.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import { EARLIEST_STORABLE } from '../../lib/date-time.ts';
import { errors, type FieldError } from '../../lib/errors.ts';
import { zonedParts, zonedToUtc } from '../../lib/zoned-time.ts';
import { organizationTimeZone } from '../queues/queues.ts';
import { latestOf, METRICS, metricsOf, withServiceClicks, type ClicksSource, type Metric, type Metrics } from './metrics.ts';
import { CHANNEL_CLICKS_SQL } from '../links/clicks.ts';

export const TOP_POSTS = 10;
export const MAX_RANGE_DAYS = 366;
const DAY = 86_400_000;
const ENGAGEMENT: readonly Metric[] = ['likes', 'replies', 'reposts', 'quotes', 'saves'];

/** The periods a summary's series is grouped by: GET /v1/analytics `groupBy` and the Analytics page offer these. */
export const GROUP_BYS = ['day', 'week'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

export interface SummaryQuery {
  from?: Date;
  to?: Date;
  channelId?: string;
  tagId?: string;
  groupBy: GroupBy;
}

export interface TopPost {
  postId: string;
  channelId: string;
  platform: string;
  url: string | null;
  publishedAt: string;
  engagement: number;
  metrics: Metrics;
  clicksSource: ClicksSource | null;
}

export interface AnalyticsSummary {
  from: string;
  to: string;
  groupBy: GroupBy;
  timeZone: string;
  posts: number;
  totals: Metrics;
  series: { period: string; start: string; posts: number; totals: Metrics }[];
  topPosts: TopPost[];
}

interface Row {
  post_id: string;
  channel_id: string;
  platform: string;
  url: string | null;
  published_at: string | Date;
  history: { measured_at: string; metrics: Record<string, number | null> }[] | null;
  /** Clicks on its short links; null: it has none. */
  service_clicks: number | null;
}

/** Sums per metric over the posts that have it (rule 2). */
function sum(all: Metrics[]): Metrics {
  const out = metricsOf({});
  for (const m of METRICS) {
    const values = all.map((x) => x[m]).filter((v): v is number => v !== null);
    out[m] = values.length ? values.reduce((a, b) => a + b, 0) : null;
  }
  return out;
}

export const engagementOf = (m: Metrics): number => ENGAGEMENT.reduce((a, k) => a + (m[k] ?? 0), 0);

/** The start of the period holding `at`, in the zone (rule 3), and its label (YYYY-MM-DD of that start). */
function periodStart(at: Date, groupBy: GroupBy, tz: string): { start: Date; label: string } {
  const p = zonedParts(at, tz);
  let { year, month, day } = p;
  if (groupBy === 'week') {
    const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7; // Monday 0
    const monday = new Date(Date.UTC(year, month - 1, day) - weekday * DAY);
    year = monday.getUTCFullYear();
    month = monday.getUTCMonth() + 1;
    day = monday.getUTCDate();
  }
  const label = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return { start: zonedToUtc({ year, month, day, hour: 0, minute: 0 }, tz), label };
}

function nextPeriod(label: string, groupBy: GroupBy, tz: string): { start: Date; label: string } {
  const [y, m, d] = label.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y, m - 1, d) + (groupBy === 'week' ? 7 : 1) * DAY);
  const l = next.toISOString().slice(0, 10);
  return {
    start: zonedToUtc({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0 }, tz),
    label: l,
  };
}

export async function analyticsSummary(
  em: EntityManager,
  organizationId: string,
  keyChannels: 'all' | string[],
  q: SummaryQuery,
  now: Date,
): Promise<AnalyticsSummary> {
  const to = q.to ?? now;
  // Not before the first storable instant (a `to` in year 1 would put the default before it).
  const from = q.from ?? new Date(Math.max(to.getTime() - 30 * DAY, EARLIEST_STORABLE.getTime()));
  const fields: FieldError[] = [];
  if (from >= to) fields.push({ path: 'from', message: 'must be before to' });
  else if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY)
    fields.push({ path: 'to', message: `must be at most ${MAX_RANGE_DAYS} days after from` });
  if (fields.length) throw errors.validation(fields);
  const timeZone = await organizationTimeZone(em, organizationId);
  // A channel outside a limited key's list is no channel for it: nothing to count.
  const channels = keyChannels === 'all' ? null : q.channelId ? keyChannels.filter((c) => c === q.channelId) : keyChannels;
  const rows = await sql<Row>(
    em,
    `select pc.post_id, pc.channel_id, pc.platform, pc.url, pc.published_at,
       (select json_agg(json_build_object('measured_at', m.measured_at, 'metrics', m.metrics))
        from post_metrics m where m.post_channel_id = pc.id) as history,
       ${CHANNEL_CLICKS_SQL} as service_clicks
     from post_channels pc join posts p on p.id = pc.post_id
     where p.organization_id = ? and p.deleted_at is null and pc.status = 'published'
       and pc.published_at >= ? and pc.published_at < ?
       and (?::text is null or pc.channel_id = ?)
       and (?::text is null or exists (select 1 from post_tags t where t.post_id = p.id and t.tag_id = ?))
       and (?::jsonb is null or pc.channel_id in (select jsonb_array_elements_text(?::jsonb)))`,
    [
      organizationId,
      from,
      to,
      q.channelId ?? null,
      q.channelId ?? null,
      q.tagId ?? null,
      q.tagId ?? null,
      channels === null ? null : JSON.stringify(channels),
      channels === null ? null : JSON.stringify(channels),
    ],
  );
  const posts = rows.map((r) => {
    const publishedAt = new Date(r.published_at);
    const latest = latestOf((r.history ?? []).map((h) => ({ measuredAt: new Date(h.measured_at), metrics: metricsOf(h.metrics) }))).metrics;
    const { metrics, clicksSource } = withServiceClicks(latest, r.service_clicks);
    return { r, publishedAt, metrics, clicksSource, period: periodStart(publishedAt, q.groupBy, timeZone).label };
  });
  const series: AnalyticsSummary['series'] = [];
  for (let p = periodStart(from, q.groupBy, timeZone); p.start < to; p = nextPeriod(p.label, q.groupBy, timeZone)) {
    const inIt = posts.filter((x) => x.period === p.label);
    series.push({ period: p.label, start: p.start.toISOString(), posts: inIt.length, totals: sum(inIt.map((x) => x.metrics)) });
  }
  const topPosts = posts
    .map((x) => ({ x, engagement: engagementOf(x.metrics) }))
    .sort((a, b) => b.engagement - a.engagement || b.x.publishedAt.getTime() - a.x.publishedAt.getTime())
    .slice(0, TOP_POSTS)
    .map(({ x, engagement }) => ({
      postId: x.r.post_id,
      channelId: x.r.channel_id,
      platform: x.r.platform,
      url: x.r.url,
      publishedAt: x.publishedAt.toISOString(),
      engagement,
      metrics: x.metrics,
      clicksSource: x.clicksSource,
    }));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    groupBy: q.groupBy,
    timeZone,
    posts: posts.length,
    totals: sum(posts.map((x) => x.metrics)),
    series,
    topPosts,
  };
}
