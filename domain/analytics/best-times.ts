// GET /v1/channels/{id}/best-times: when this channel's own posts did best. Rules:
//
// 1. The posts: the channel's posts published in the last LOOKBACK_DAYS that have at least one
//    reading, each with its engagement (domain/analytics/summary.ts engagementOf, latest figures).
// 2. Cells are the weekday and hour of publishing in the channel's queue time zone (its own, or
//    the organization's), so a cell can become a queue slot as it stands.
// 3. A cell's score is the mean engagement of its posts; only cells with at least MIN_POSTS posts
//    are ranked, best first (ties: more posts first).
// 4. suggestedSlots: the best SUGGESTED cells as queue slots at the full hour, in the shape
//    PUT /v1/channels/{id}/queue takes (with its timeZone).
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import { WEEKDAYS, zonedParts } from '../../lib/zoned-time.ts';
import { getQueue, type QueueAccess } from '../queues/queues.ts';
import { latestOf, metricsOf } from './metrics.ts';
import { engagementOf } from './summary.ts';

export const LOOKBACK_DAYS = 90;
export const MIN_POSTS = 2;
export const SUGGESTED = 5;

type Weekday = (typeof WEEKDAYS)[number];

export interface BestTimeCell {
  weekday: Weekday;
  hour: number;
  posts: number;
  averageEngagement: number;
}

export interface BestTimes {
  channelId: string;
  timeZone: string;
  since: string;
  posts: number;
  cells: BestTimeCell[];
  best: BestTimeCell[];
  suggestedSlots: { weekday: Weekday; time: string }[];
}

interface Row {
  published_at: string | Date;
  history: { measured_at: string; metrics: Record<string, number | null> }[];
}

/** The weekday (Monday first) of a wall date. */
const weekdayOf = (y: number, m: number, d: number): Weekday => WEEKDAYS[(new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7]!;

export async function bestTimes(
  em: EntityManager,
  organizationId: string,
  channelId: string,
  opts: QueueAccess & { now: Date },
): Promise<BestTimes> {
  // The channel as the key may see it (404 otherwise), and its queue's zone.
  const { timeZone } = await getQueue(em, organizationId, channelId, { ...opts, count: 1 });
  const since = new Date(opts.now.getTime() - LOOKBACK_DAYS * 86_400_000);
  const rows = await sql<Row>(
    em,
    `select pc.published_at, h.history
     from post_channels pc join posts p on p.id = pc.post_id
     cross join lateral (
       select json_agg(json_build_object('measured_at', m.measured_at, 'metrics', m.metrics)) as history
       from post_metrics m where m.post_channel_id = pc.id
     ) h
     where pc.channel_id = ? and p.deleted_at is null and pc.status = 'published'
       and pc.published_at >= ? and h.history is not null`,
    [channelId, since],
  );
  const byCell = new Map<string, { weekday: Weekday; hour: number; total: number; posts: number }>();
  for (const r of rows) {
    const w = zonedParts(new Date(r.published_at), timeZone);
    const weekday = weekdayOf(w.year, w.month, w.day);
    const cellKey = `${weekday} ${w.hour}`;
    const cell = byCell.get(cellKey) ?? { weekday, hour: w.hour, total: 0, posts: 0 };
    cell.total += engagementOf(
      latestOf(r.history.map((h) => ({ measuredAt: new Date(h.measured_at), metrics: metricsOf(h.metrics) }))).metrics,
    );
    cell.posts++;
    byCell.set(cellKey, cell);
  }
  const cells = [...byCell.values()]
    .map((c) => ({ weekday: c.weekday, hour: c.hour, posts: c.posts, averageEngagement: Math.round((c.total / c.posts) * 100) / 100 }))
    .sort((a, b) => WEEKDAYS.indexOf(a.weekday) - WEEKDAYS.indexOf(b.weekday) || a.hour - b.hour);
  const best = cells.filter((c) => c.posts >= MIN_POSTS).sort((a, b) => b.averageEngagement - a.averageEngagement || b.posts - a.posts);
  return {
    channelId,
    timeZone,
    since: since.toISOString(),
    posts: rows.length,
    cells,
    best,
    suggestedSlots: best.slice(0, SUGGESTED).map((c) => ({ weekday: c.weekday, time: `${String(c.hour).padStart(2, '0')}:00` })),
  };
}
