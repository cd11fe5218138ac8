// GET /v1/posts/{id}/analytics: per channel of a post the latest figures (domain/analytics/metrics.ts
// rule 6) with when each was measured, the next scheduled reading, why the last one got nothing,
// and every snapshot, oldest first; `clicks` from the service's short links where the platform
// reports none (rule 7), and each short link with its clicks. Who may see the post is decided as
// for GET /v1/posts/{id}.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../../db/sql.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { getPostForKey } from '../posts/view.ts';
import { latestOf, metricsOf, withServiceClicks, type ClicksSource, type Metric, type Metrics } from './metrics.ts';
import { postLinkClicks, type LinkClicks } from '../links/clicks.ts';

export interface ChannelAnalytics {
  channelId: string;
  platform: string;
  status: string;
  platformPostId: string | null;
  url: string | null;
  metrics: Metrics;
  measuredAt: Record<Metric, string | null>;
  /** Where `metrics.clicks` comes from (rule 7); null: there is none. */
  clicksSource: ClicksSource | null;
  lastReadingAt: string | null;
  nextReadingAt: string | null;
  error: string | null;
  history: { measuredAt: string; metrics: Metrics }[];
}

export interface PostAnalytics {
  postId: string;
  channels: ChannelAnalytics[];
  /** The post's short links (domain/links/clicks.ts), each with its clicks. */
  links: LinkClicks[];
}

interface Row {
  channel_id: string;
  metrics_next_at: string | Date | null;
  metrics_error: string | null;
  history: { measured_at: string; metrics: Record<string, number | null> }[] | null;
}

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());

export async function postAnalyticsForKey(
  em: EntityManager,
  organizationId: string,
  postId: string,
  keyChannels: 'all' | string[],
  storage?: ObjectStorage,
): Promise<PostAnalytics> {
  const post = await getPostForKey(em, organizationId, postId, keyChannels, storage);
  const rows = await sql<Row>(
    em,
    `select pc.channel_id, pc.metrics_next_at, pc.metrics_error,
       (select json_agg(json_build_object('measured_at', m.measured_at, 'metrics', m.metrics) order by m.measured_at)
        from post_metrics m where m.post_channel_id = pc.id) as history
     from post_channels pc where pc.post_id = ?`,
    [post.id],
  );
  const byChannel = new Map(rows.map((r) => [r.channel_id, r]));
  const links = await postLinkClicks(em, post.id);
  // The service's count is live: it is as of this answer.
  const countedAt = new Date().toISOString();
  const channels = post.channels as {
    channelId: string;
    platform: string;
    status: string;
    platformPostId: string | null;
    url: string | null;
  }[];
  return {
    postId: post.id,
    channels: channels.map((c): ChannelAnalytics => {
      const row = byChannel.get(c.channelId);
      const history = (row?.history ?? []).map((h) => ({ measuredAt: new Date(h.measured_at), metrics: metricsOf(h.metrics) }));
      const latest = latestOf(history);
      const own = links.filter((l) => l.channelId === c.channelId);
      const clicks = withServiceClicks(latest.metrics, own.length ? own.reduce((n, l) => n + l.clicks, 0) : null);
      return {
        channelId: c.channelId,
        platform: c.platform,
        status: c.status,
        platformPostId: c.platformPostId,
        url: c.url,
        metrics: clicks.metrics,
        measuredAt: clicks.clicksSource === 'service' ? { ...latest.measuredAt, clicks: countedAt } : latest.measuredAt,
        clicksSource: clicks.clicksSource,
        lastReadingAt: history.length ? history[history.length - 1]!.measuredAt.toISOString() : null,
        nextReadingAt: iso(row?.metrics_next_at ?? null),
        error: row?.metrics_error ?? null,
        history: history.map((h) => ({ measuredAt: h.measuredAt.toISOString(), metrics: h.metrics })),
      };
    }),
    links: links.filter((l) => channels.some((c) => c.channelId === l.channelId)),
  };
}
