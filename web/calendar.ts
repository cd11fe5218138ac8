// The calendar: month and week views of every post of the organization (from the API and from
// the app), in the viewer's time zone, kept live by calendar.js polling /web/api/posts; a post
// with unread comments links to them in the Inbox. Drafts meant for a time are marked on their
// day, and drafts without one are offered beside it to drag onto a day (calendar-marks.ts). Each
// post shows its tags; `tagId` narrows the posts to one tag's, by the filter of GET /v1/posts
// (the live feed too, so the posts of other tags are neither added nor announced).
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../http/router.ts';
import { parseInstant } from '../lib/date-time.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { getPostForKey } from '../domain/posts/view.ts';
import { getTag, listTags, type TagView } from '../domain/tags.ts';
import { commentCountsByPost } from '../domain/inbox/comments.ts';
import { Text } from '../domain/posts/content.ts';
import { jsonRoute, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, jsonResponse } from './http.ts';
import { layout } from './layout.ts';
import { byId, channelsOf, editAppPost, postsInRange } from './post-actions.ts';
import { postActor } from './composer.ts';
import {
  addDays,
  dayKey,
  dayStart,
  formatDayKey,
  formatDayTitle,
  formatLongDay,
  formatMonthTitle,
  parseDayKey,
  startOfWeek,
  WEEKDAY_LABELS,
  zonedParts,
  zonedToUtc,
  type CalendarDay,
} from './time.ts';
import { postItem } from './ui.ts';
import { tagFilter, tagOfQuery } from './tag-filter.ts';
import { calendarMarks, unplacedDrafts } from './calendar-marks.ts';
import type { PostView } from '../domain/posts/view.ts';
import type { IChannel } from '../db/entities/index.ts';

type View = 'month' | 'week';

function today(now: Date, tz: string): CalendarDay {
  const p = zonedParts(now, tz);
  return { year: p.year, month: p.month, day: p.day };
}

function range(
  view: View,
  date: CalendarDay,
): { start: CalendarDay; end: CalendarDay; prev: CalendarDay; next: CalendarDay; title: string } {
  if (view === 'week') {
    const start = startOfWeek(date);
    const end = addDays(start, 7);
    return { start, end, prev: addDays(start, -7), next: end, title: `Week of ${formatLongDay(start)}` };
  }
  const first = { year: date.year, month: date.month, day: 1 };
  const nextMonth = date.month === 12 ? { year: date.year + 1, month: 1, day: 1 } : { year: date.year, month: date.month + 1, day: 1 };
  const prevMonth = date.month === 1 ? { year: date.year - 1, month: 12, day: 1 } : { year: date.year, month: date.month - 1, day: 1 };
  const start = startOfWeek(first);
  const end = addDays(startOfWeek(addDays(nextMonth, -1)), 7);
  return { start, end, prev: prevMonth, next: nextMonth, title: formatMonthTitle(first) };
}

/** Per post, its unread comments (commentCountsByPost: one statement for the whole period). */
type Unread = Map<string, { unread: number }>;
/** The organization's tags by id, for the posts' chips. */
type Tags = ReadonlyMap<string, TagView>;

function dayList(
  posts: PostView[] | undefined,
  channels: Map<string, IChannel>,
  tz: string,
  marks: SafeHtml | undefined,
  unread: Unread,
  tags: Tags,
): SafeHtml {
  return html`<ul class="post-list">${(posts ?? []).map((p) => postItem(p, channels, tz, unread.get(p.id)?.unread, tags))}</ul>${marks ?? ''}`;
}

function addLink(d: CalendarDay): SafeHtml {
  const key = formatDayKey(d);
  return html`<a class="add-post" href="/posts/new?date=${key}" data-testid="add-post-${key}"><span aria-hidden="true">+</span><span class="visually-hidden">New post on ${formatLongDay(d)}</span></a>`;
}

function monthGrid(
  r: ReturnType<typeof range>,
  month: number,
  todayKey: string,
  byDay: Map<string, PostView[]>,
  channels: Map<string, IChannel>,
  tz: string,
  marks: Map<string, SafeHtml>,
  unread: Unread,
  tags: Tags,
): SafeHtml {
  const weeks: CalendarDay[][] = [];
  for (let d = r.start; formatDayKey(d) < formatDayKey(r.end); d = addDays(d, 1)) {
    if (!weeks.length || weeks.at(-1)!.length === 7) weeks.push([]);
    weeks.at(-1)!.push(d);
  }
  return html`<table class="month" data-testid="calendar-month">
  <caption class="visually-hidden">${r.title}</caption>
  <thead><tr>${WEEKDAY_LABELS.map((w) => html`<th scope="col"><abbr title="${w}">${w.slice(0, 3)}</abbr></th>`)}</tr></thead>
  <tbody>${weeks.map(
    (week) =>
      html`<tr>${week.map((d) => {
        const key = formatDayKey(d);
        const posts = byDay.get(key);
        const classes = ['day', d.month !== month ? 'other-month' : '', key === todayKey ? 'today' : '', posts?.length ? 'has-posts' : '']
          .filter(Boolean)
          .join(' ');
        return html`<td class="${classes}" data-date="${key}" data-testid="day-${key}"${key === todayKey ? html` aria-current="date"` : ''}>
      <div class="day-head"><span class="day-num"><span class="visually-hidden">${formatLongDay(d)}</span><span aria-hidden="true"><span class="day-name">${formatDayTitle(d).split(' ')[0]} </span>${d.day}</span></span>${addLink(d)}</div>
      ${dayList(posts, channels, tz, marks.get(key), unread, tags)}
    </td>`;
      })}</tr>`,
  )}</tbody>
</table>`;
}

function weekList(
  r: ReturnType<typeof range>,
  todayKey: string,
  byDay: Map<string, PostView[]>,
  channels: Map<string, IChannel>,
  tz: string,
  marks: Map<string, SafeHtml>,
  unread: Unread,
  tags: Tags,
): SafeHtml {
  const days: CalendarDay[] = [];
  for (let d = r.start; days.length < 7; d = addDays(d, 1)) days.push(d);
  return html`<ol class="week" data-testid="calendar-week">${days.map((d) => {
    const key = formatDayKey(d);
    const posts = byDay.get(key);
    return html`<li class="day${key === todayKey ? ' today' : ''}" data-date="${key}" data-testid="day-${key}"${key === todayKey ? html` aria-current="date"` : ''}>
      <div class="day-head"><h2>${formatDayTitle(d)}</h2>${addLink(d)}</div>
      ${posts?.length || marks.has(key) ? '' : html`<p class="empty">No posts</p>`}
      ${dayList(posts, channels, tz, marks.get(key), unread, tags)}
    </li>`;
  })}</ol>`;
}

const CALENDAR_NOTICES: Record<string, string> = {
  created: 'Post created.',
  deleted: 'Post deleted: it will not be published.',
  removed: 'Post removed from the lists. Its posts on the platforms stay.',
};

async function calendarPage(ctx: PageContext): Promise<Response> {
  const q = ctx.url.searchParams;
  const view: View = q.get('view') === 'week' ? 'week' : 'month';
  const now = today(ctx.now, ctx.tz);
  const date = parseDayKey(q.get('date')) ?? now;
  const r = range(view, date);
  const from = dayStart(r.start, ctx.tz);
  const to = dayStart(r.end, ctx.tz);
  const orgId = ctx.signedIn.organization.id;
  const tagList = await listTags(ctx.em, orgId);
  const tag = tagOfQuery(tagList, q);
  const [{ posts, truncated }, channelList] = await Promise.all([
    postsInRange(ctx.em, orgId, from, to, { tagId: tag?.id }),
    channelsOf(ctx.em, orgId),
  ]);
  const channels = byId(channelList);
  const tags = byId(tagList);
  const byDay = new Map<string, PostView[]>();
  for (const p of posts) {
    const key = dayKey(new Date(p.scheduledAt), ctx.tz);
    byDay.set(key, [...(byDay.get(key) ?? []), p]);
  }
  const marks = await calendarMarks(ctx, channelList, channels, from, to);
  const unplaced = await unplacedDrafts(ctx, channels);
  // Only a post that went out can have comments.
  const unread = await commentCountsByPost(
    ctx.em,
    orgId,
    posts.filter((p) => p.status !== 'scheduled').map((p) => p.id),
  );
  const todayKey = formatDayKey(now);
  const narrowed = tag ? `&tagId=${encodeURIComponent(tag.id)}` : '';
  const link = (v: View, d: CalendarDay) => `/calendar?view=${v}&date=${formatDayKey(d)}${narrowed}`;
  const feed = `/web/api/posts?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}${narrowed}`;
  const body = html`<section class="calendar" data-testid="calendar" data-view="${view}" data-feed="${feed}" data-live-posts aria-labelledby="calendar-title">
  <div class="calendar-bar">
    <h1 id="calendar-title" data-testid="calendar-title">${r.title}</h1>
    <nav class="calendar-nav" aria-label="Calendar">
      <a href="${link(view, r.prev)}" data-testid="calendar-prev" rel="prev">Previous<span class="visually-hidden"> ${view}</span></a>
      <a href="${link(view, now)}" data-testid="calendar-today">Today</a>
      <a href="${link(view, r.next)}" data-testid="calendar-next" rel="next">Next<span class="visually-hidden"> ${view}</span></a>
      <span class="view-switch">
        <a href="${link('month', date)}" data-testid="view-month"${view === 'month' ? html` aria-current="page"` : ''}>Month</a>
        <a href="${link('week', date)}" data-testid="view-week"${view === 'week' ? html` aria-current="page"` : ''}>Week</a>
      </span>
      <a class="button primary" href="/posts/new" data-testid="calendar-new-post">New post</a>
    </nav>
  </div>
  <p class="hint">Times in <strong data-testid="calendar-tz">${ctx.tz}</strong>. Drag a scheduled post to another day to move it, or open it to edit; drag a draft onto a day to mean it for that day.
    <span class="legend"><span class="mark-occurrence">↻ upcoming repeat</span> <span class="mark-slot">○ free queue slot</span> <span class="mark-draft">✎ draft</span></span></p>
  ${tagFilter({ action: '/calendar', name: 'calendar', noun: 'posts', keep: { view, date: formatDayKey(date) }, tags: tagList, current: tag })}
  ${unplaced}
  ${truncated ? html`<p class="notice" data-testid="calendar-truncated">Only the first 1000 posts of this period are shown.</p>` : ''}
  <p class="visually-hidden" role="status" aria-live="polite" data-testid="calendar-message" id="calendar-message"></p>
  <p class="notice stale" data-testid="calendar-stale" hidden>Posts were added elsewhere. <a href="">Reload the calendar</a></p>
  ${view === 'month' ? monthGrid(r, date.month, todayKey, byDay, channels, ctx.tz, marks, unread, tags) : weekList(r, todayKey, byDay, channels, ctx.tz, marks, unread, tags)}
</section>`;
  const notice = CALENDAR_NOTICES[q.get('notice') ?? ''] ?? null;
  return htmlResponse(
    layout({ title: r.title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'calendar', scripts: ['calendar.js'], notice, tzReload: true }),
  );
}

const RescheduleBody = t.Object(
  {
    /** Move to this calendar day (viewer's zone), keeping the time of day. */
    date: t.Optional(t.String({ maxLength: 10 })),
    /** Or an exact instant (ISO 8601 with offset). */
    publishAt: t.Optional(t.String({ maxLength: 64 })),
    content: t.Optional(Text),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** A date-time with an offset (lib/date-time.ts), in the years the calendar shows (1970–9998); else a 422. */
function instantParam(value: string | null, path: string): Date {
  const fields: FieldError[] = [];
  const d = parseInstant(value ?? '', path, fields);
  if (!d) throw errors.validation(fields);
  if (d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9998)
    throw errors.validation([{ path, message: 'must be in the years 1970 to 9998' }]);
  return d;
}

export function calendarRoutes(web: Web) {
  return (
    router()
      .get('/calendar', pageRoute(web, 'read', calendarPage))
      // Posts of a period, for the live update (every 3 s while the page is visible).
      .get(
        '/web/api/posts',
        jsonRoute(web, 'read', async (ctx) => {
          const from = instantParam(ctx.url.searchParams.get('from'), 'from');
          const to = instantParam(ctx.url.searchParams.get('to'), 'to');
          if (to.getTime() - from.getTime() > 62 * 24 * 3600 * 1000 || to <= from)
            throw errors.validation([{ path: 'to', message: 'must be after from, at most 62 days later' }]);
          const orgId = ctx.signedIn.organization.id;
          // Only the organization's tag narrows: another id is a 404, and the page keeps what it shows.
          const tagId = ctx.url.searchParams.get('tagId');
          const tag = tagId === null ? null : await getTag(ctx.em, orgId, tagId);
          const { posts } = await postsInRange(ctx.em, orgId, from, to, { tagId: tag?.id });
          return jsonResponse({ data: posts });
        }),
      )
      .get(
        '/web/api/posts/:id',
        jsonRoute(web, 'read', async (ctx) =>
          jsonResponse(await getPostForKey(ctx.em, ctx.signedIn.organization.id, ctx.params.id!, 'all', web.deps.storage)),
        ),
      )
      // Drag and drop on the month view: the same validation and workflow Update as PATCH /v1/posts/{id}.
      .patch(
        '/web/api/posts/:id',
        jsonRoute(web, 'posts.write', async (ctx) => {
          const body = ctx.body as { date?: string; publishAt?: string; content?: string };
          const orgId = ctx.signedIn.organization.id;
          let publishAt: Date | undefined;
          if (body.date !== undefined) {
            const day = parseDayKey(body.date);
            if (!day) throw errors.validation([{ path: 'date', message: 'must be a date YYYY-MM-DD' }]);
            const current = await getPostForKey(ctx.em, orgId, ctx.params.id!, 'all');
            const at = zonedParts(new Date(current.scheduledAt), ctx.tz);
            publishAt = zonedToUtc({ ...day, hour: at.hour, minute: at.minute, second: at.second }, ctx.tz);
          } else if (body.publishAt !== undefined) {
            publishAt = instantParam(body.publishAt, 'publishAt');
          }
          const view = await editAppPost(postActor(web, ctx), ctx.params.id!, { publishAt, content: body.content });
          return jsonResponse(view);
        }),
        { body: RescheduleBody, transform: refuseUnstorableBody },
      )
  );
}
