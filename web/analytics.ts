// Analytics in the app: the Analytics page (totals, engagement over time, per channel, top posts:
// domain/analytics/summary.ts, as GET /v1/analytics), a post's figures on its page
// (domain/analytics/post-analytics.ts) and a channel's best times as a heat map on its queue
// editor (domain/analytics/best-times.ts). Charts are drawn by static/analytics.js with uPlot,
// served by the app itself (web/static.ts); the numbers are in the HTML, the chart only draws them.
// The page narrows to one tag's posts (a campaign) as GET /v1/analytics `tagId` does. Clicks are
// said with where they come from (domain/analytics/metrics.ts rule 7: the platform's figure, else
// the post's short links' count), and a post's page lists each short link with its clicks.
import { analyticsSummary, engagementOf, GROUP_BYS, type AnalyticsSummary, type GroupBy } from '../domain/analytics/summary.ts';
import type { BestTimes } from '../domain/analytics/best-times.ts';
import type { ClicksSource, Metric, Metrics } from '../domain/analytics/metrics.ts';
import type { PostAnalytics } from '../domain/analytics/post-analytics.ts';
import { listTags, type TagView } from '../domain/tags.ts';
import { can } from '../domain/access.ts';
import type { IChannel } from '../db/entities/index.ts';
import { router } from '../http/router.ts';
import { WEEKDAYS } from '../lib/zoned-time.ts';
import { pageRoute, type PageContext, type Web } from './context.ts';
import { html, safeHttpUrl, type SafeHtml } from './html.ts';
import { htmlResponse } from './http.ts';
import { layout } from './layout.ts';
import { channelsOf } from './post-actions.ts';
import { formatDateTime } from './time.ts';
import { platformBadge, platformLabel, tagChip } from './ui.ts';
import { tagOfQuery, tagSelect } from './tag-filter.ts';

const SHOWN: { metric: Metric; label: string }[] = [
  { metric: 'impressions', label: 'Impressions' },
  { metric: 'views', label: 'Views' },
  { metric: 'likes', label: 'Likes' },
  { metric: 'replies', label: 'Replies' },
  { metric: 'reposts', label: 'Reposts' },
  { metric: 'quotes', label: 'Quotes' },
  { metric: 'saves', label: 'Saves' },
  { metric: 'clicks', label: 'Clicks' },
];
const CHARTED: Metric[] = ['likes', 'replies', 'reposts'];
const RANGES = [7, 30, 90] as const;

const figure = (v: number | null) => (v === null ? '—' : v.toLocaleString('en-US'));

/** Where a post's clicks come from, in words: "as Mastodon reports them", "counted on its short links". */
const clicksFrom = (source: ClicksSource, platform: string) =>
  source === 'platform' ? `as ${platformLabel(platform)} reports them` : 'counted on its short links';

/** A channel post's clicks and their source (none: no figure of either). */
function clicksNote(clicks: number | null, source: ClicksSource | null, platform: string, testId: string): SafeHtml {
  if (source === null) return html``;
  return html`<span data-testid="${testId}" data-source="${source}" data-clicks="${clicks ?? ''}">clicks ${figure(clicks)} (${clicksFrom(source, platform)})</span>`;
}

/** A chart's data, drawn by static/analytics.js: x as Unix seconds, one series per metric. */
function chart(testId: string, label: string, x: number[], series: { label: string; values: (number | null)[] }[]): SafeHtml {
  return html`<figure class="chart" data-testid="${testId}">
  <div class="chart-canvas" data-chart="${JSON.stringify({ x, series })}" role="img" aria-label="${label}"></div>
  <figcaption>${label}</figcaption>
</figure>`;
}

function totalsList(totals: Metrics, prefix: string): SafeHtml {
  return html`<dl class="figures">${SHOWN.map(
    ({ metric, label }) => html`<div><dt>${label}</dt><dd data-testid="${prefix}-${metric}">${figure(totals[metric])}</dd></div>`,
  )}</dl>`;
}

function analyticsPage(
  ctx: PageContext,
  o: {
    days: number;
    channelId: string | null;
    tags: TagView[];
    tag: TagView | null;
    groupBy: GroupBy;
    summary: AnalyticsSummary;
    channels: IChannel[];
    perChannel: { channel: IChannel; summary: AnalyticsSummary }[];
  },
): Response {
  const s = o.summary;
  const x = s.series.map((p) => Date.parse(p.start) / 1000);
  const names = new Map(o.channels.map((c) => [c.id, c]));
  const body = html`<h1>Analytics</h1>
<form method="get" action="/analytics" class="filters" data-testid="analytics-filters">
  <div class="field"><label for="days">Published in the last</label>
    <select id="days" name="days" data-testid="analytics-days">${RANGES.map((d) => html`<option value="${d}"${d === o.days ? html` selected` : ''}>${d} days</option>`)}</select></div>
  <div class="field"><label for="channel">Channel</label>
    <select id="channel" name="channel" data-testid="analytics-channel"><option value="">All channels</option>${o.channels.map(
      (c) => html`<option value="${c.id}"${c.id === o.channelId ? html` selected` : ''}>${c.name}</option>`,
    )}</select></div>
  ${
    o.tags.length
      ? html`<div class="field"><label for="analytics-tag">Tag</label>
    ${tagSelect({ id: 'analytics-tag', testId: 'analytics-tag', tags: o.tags, current: o.tag, all: 'All posts' })}</div>`
      : ''
  }
  <div class="field"><label for="groupBy">By</label>
    <select id="groupBy" name="groupBy" data-testid="analytics-group-by">${GROUP_BYS.map(
      (g) => html`<option value="${g}"${g === o.groupBy ? html` selected` : ''}>${g}</option>`,
    )}</select></div>
  <div class="actions"><button type="submit" data-testid="analytics-apply">Show</button></div>
</form>
${o.tag ? html`<p data-testid="analytics-tag-current">Only the posts tagged ${tagChip(o.tag)}.</p>` : ''}
<p class="hint">${s.posts} channel post${s.posts === 1 ? '' : 's'} published from ${formatDateTime(new Date(s.from), ctx.tz)} to ${formatDateTime(new Date(s.to), ctx.tz)}; periods in ${s.timeZone}. A dash: no post of the range reports that figure.</p>
<section aria-labelledby="totals-h"><h2 id="totals-h">Totals</h2>${totalsList(s.totals, 'analytics-total')}</section>
<section aria-labelledby="over-time-h"><h2 id="over-time-h">Engagement over time</h2>
${chart(
  'analytics-chart',
  `Likes, replies and reposts per ${s.groupBy}`,
  x,
  CHARTED.map((m) => ({ label: SHOWN.find((d) => d.metric === m)!.label, values: s.series.map((p) => p.totals[m]) })),
)}</section>
<section aria-labelledby="channels-h"><h2 id="channels-h">Per channel</h2>
<table class="table" data-testid="analytics-channels">
  <thead><tr><th scope="col">Channel</th><th scope="col">Posts</th>${SHOWN.slice(0, 5).map((d) => html`<th scope="col">${d.label}</th>`)}</tr></thead>
  <tbody>${o.perChannel.map(
    ({ channel, summary }) => html`<tr data-testid="analytics-channel-row" data-channel-id="${channel.id}">
    <th scope="row">${platformBadge(channel.platform)} ${channel.name}</th><td>${summary.posts}</td>${SHOWN.slice(0, 5).map((d) => html`<td>${figure(summary.totals[d.metric])}</td>`)}</tr>`,
  )}</tbody>
</table></section>
<section aria-labelledby="top-h"><h2 id="top-h">Top posts</h2>
${
  s.topPosts.length
    ? html`<ol class="top-posts" data-testid="analytics-top-posts">${s.topPosts.map(
        (
          t,
        ) => html`<li data-testid="analytics-top-post" data-post-id="${t.postId}"><a href="/posts/${t.postId}">${formatDateTime(new Date(t.publishedAt), ctx.tz)}</a>
      ${platformBadge(t.platform)} ${names.get(t.channelId)?.name ?? t.channelId}: <strong>${t.engagement}</strong> engagement (likes ${figure(t.metrics.likes)}, replies ${figure(t.metrics.replies)}, reposts ${figure(t.metrics.reposts)}${t.clicksSource ? html`; ${clicksNote(t.metrics.clicks, t.clicksSource, t.platform, 'analytics-top-post-clicks')}` : ''})</li>`,
      )}</ol>`
    : html`<p data-testid="analytics-no-posts">No post published in this range has been read yet. Figures are read 1 hour, 6 hours, 1, 3, 7 and 30 days after publishing.</p>`
}</section>
${can(ctx.signedIn.role, 'settings.manage') ? html`<p class="hint">Clicks of posts whose platform reports none are counted on the service's short links: <a href="/settings/links" data-testid="links-settings-link">Tracked links settings</a>.</p>` : ''}`;
  return htmlResponse(
    layout({
      title: 'Analytics',
      body,
      signedIn: ctx.signedIn,
      tz: ctx.tz,
      nav: 'analytics',
      scripts: ['uplot.js', 'analytics.js'],
      styles: ['uplot.css'],
    }),
  );
}

export function analyticsRoutes(web: Web) {
  return router().get(
    '/analytics',
    pageRoute(web, 'read', async (ctx) => {
      const orgId = ctx.signedIn.organization.id;
      const q = ctx.url.searchParams;
      const days = RANGES.find((d) => String(d) === q.get('days')) ?? 30;
      const groupBy: GroupBy = GROUP_BYS.find((g) => g === q.get('groupBy')) ?? 'day';
      const channels = await channelsOf(ctx.em, orgId);
      const channelId = channels.some((c) => c.id === q.get('channel')) ? q.get('channel') : null;
      const tags = await listTags(ctx.em, orgId);
      const tag = tagOfQuery(tags, q);
      const range = { from: new Date(ctx.now.getTime() - days * 86_400_000), to: ctx.now, groupBy, ...(tag ? { tagId: tag.id } : {}) };
      const summary = await analyticsSummary(ctx.em, orgId, 'all', { ...range, ...(channelId ? { channelId } : {}) }, ctx.now);
      const perChannel = [];
      for (const channel of channelId ? channels.filter((c) => c.id === channelId) : channels) {
        perChannel.push({ channel, summary: await analyticsSummary(ctx.em, orgId, 'all', { ...range, channelId: channel.id }, ctx.now) });
      }
      return analyticsPage(ctx, { days, channelId, tags, tag, groupBy, summary, channels, perChannel });
    }),
  );
}

/**
 * The post page's figures: per published channel its latest figures, its clicks and where they
 * come from, and a small chart of its readings; then the post's short links with their clicks.
 */
export function postFigures(analytics: PostAnalytics, channels: Map<string, IChannel>): SafeHtml {
  const published = analytics.channels.filter((c) => c.status === 'published');
  return html`${published.length ? channelFigures(published, channels) : ''}${trackedLinks(analytics.links, channels)}`;
}

function channelFigures(published: PostAnalytics['channels'], channels: Map<string, IChannel>): SafeHtml {
  return html`<h2>Performance</h2>
<div class="post-figures" data-testid="post-figures">${published.map(
    (c) => html`<section class="post-figures-channel" data-testid="post-figures-channel" data-channel-id="${c.channelId}">
  <h3>${platformBadge(c.platform)} ${channels.get(c.channelId)?.name ?? c.channelId}</h3>
  ${
    c.history.length
      ? html`${totalsList(c.metrics, `post-figure-${c.channelId}`)}
  <p class="hint">${c.history.length} reading${c.history.length === 1 ? '' : 's'}; engagement now ${engagementOf(c.metrics)}.${c.nextReadingAt ? html` Next reading <time datetime="${c.nextReadingAt}">${c.nextReadingAt.slice(0, 16).replace('T', ' ')} UTC</time>.` : ''}</p>
  ${chart(
    `post-figures-chart-${c.channelId}`,
    'Likes, replies and reposts at each reading',
    c.history.map((h) => Date.parse(h.measuredAt) / 1000),
    CHARTED.map((m) => ({ label: SHOWN.find((d) => d.metric === m)!.label, values: c.history.map((h) => h.metrics[m]) })),
  )}`
      : html`<p class="hint" data-testid="post-figures-pending">Not read yet.${c.nextReadingAt ? html` First reading <time datetime="${c.nextReadingAt}">${c.nextReadingAt.slice(0, 16).replace('T', ' ')} UTC</time>.` : ''}</p>`
  }
  ${c.clicksSource ? html`<p class="hint">${clicksNote(c.metrics.clicks, c.clicksSource, c.platform, 'post-clicks')}</p>` : ''}
  ${c.error ? html`<p class="error-text" data-testid="post-figures-error">${c.error}</p>` : ''}
</section>`,
  )}</div>`;
}

/** The post's short links (one per channel and link), each with its target, its channel and its clicks so far. */
function trackedLinks(links: PostAnalytics['links'], channels: Map<string, IChannel>): SafeHtml {
  if (!links.length) return html``;
  return html`<section aria-labelledby="tracked-links-h" data-testid="tracked-links">
  <h2 id="tracked-links-h">Tracked links</h2>
  <p class="hint">Clicks are counted once per address and minute, never for link-preview crawlers.</p>
  <table class="table">
    <thead><tr><th scope="col">Link</th><th scope="col">Short link</th><th scope="col">Channel</th><th scope="col">Clicks</th></tr></thead>
    <tbody>${links.map((l) => {
      const target = safeHttpUrl(l.url);
      const channel = channels.get(l.channelId);
      return html`<tr data-testid="tracked-link-row" data-channel-id="${l.channelId}" data-short-url="${l.shortUrl}">
      <td data-testid="tracked-link-url">${target ? html`<a href="${target}" rel="noopener noreferrer" target="_blank">${l.url}</a>` : l.url}</td>
      <td><code data-testid="tracked-link-short">${l.shortUrl}</code></td>
      <td>${channel ? html`${platformBadge(channel.platform)} ${channel.name}` : l.channelId}</td>
      <td data-testid="tracked-link-clicks">${figure(l.clicks)}</td>
    </tr>`;
    })}</tbody>
  </table>
</section>`;
}

/** The queue editor's heat map: mean engagement by weekday and hour, and the suggested slots. */
export function bestTimesHeatMap(best: BestTimes): SafeHtml {
  if (!best.posts) {
    return html`<section aria-labelledby="best-h" data-testid="best-times"><h2 id="best-h">Best times</h2><p class="hint">No post of this channel published in the last 90 days has been read yet.</p></section>`;
  }
  const max = Math.max(...best.cells.map((c) => c.averageEngagement), 1);
  const cell = (weekday: string, hour: number) => best.cells.find((c) => c.weekday === weekday && c.hour === hour);
  const hours = Array.from({ length: 24 }, (_, h) => h);
  return html`<section aria-labelledby="best-h" data-testid="best-times"><h2 id="best-h">Best times</h2>
<p class="hint">Mean engagement (likes, replies, reposts, quotes, saves) of this channel's posts of the last 90 days by the weekday and hour they were published, in ${best.timeZone}. Darker is better; a number is how many posts.</p>
<div class="heat-map-wrap"><table class="heat-map" data-testid="best-times-heat-map">
  <thead><tr><th scope="col"><span class="visually-hidden">Weekday</span></th>${hours.map((h) => html`<th scope="col">${String(h).padStart(2, '0')}</th>`)}</tr></thead>
  <tbody>${WEEKDAYS.map(
    (w) =>
      html`<tr><th scope="row">${w.slice(0, 3)}</th>${hours.map((h) => {
        const c = cell(w, h);
        if (!c) return html`<td></td>`;
        const level = Math.max(1, Math.round((c.averageEngagement / max) * 5));
        return html`<td class="heat-${level}" data-testid="best-times-cell" data-weekday="${w}" data-hour="${h}" title="${c.posts} post${c.posts === 1 ? '' : 's'}, mean engagement ${c.averageEngagement}">${c.posts}</td>`;
      })}</tr>`,
  )}</tbody>
</table></div>
${
  best.suggestedSlots.length
    ? html`<p data-testid="best-times-suggested">Suggested slots: ${best.suggestedSlots.map((s, i) => html`${i ? ', ' : ''}<strong>${s.weekday} ${s.time}</strong>`)} (cells with at least 2 posts, best first).</p>`
    : html`<p class="hint">No weekday and hour has 2 posts yet: no slot to suggest.</p>`
}
</section>`;
}
