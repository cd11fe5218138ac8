// What the calendar marks beside the posts: the upcoming occurrences of recurring series
// that are not posts yet (domain/series/series.ts listFutureOccurrences; each becomes a post of its own
// shortly before its time, and then shows as a post), the free slots of the channels' posting
// queues (domain/queues/queues.ts nextFreeSlots), each a link to the composer at that time, and
// the drafts meant for a time (domain/posts/drafts.ts: not scheduled yet, never published as
// they are), which a member who writes posts drags to another day (calendar.js). A scheduled draft
// is not marked: it shows as the post it became.
import { Draft, type IChannel, type IDraft } from '../db/entities/index.ts';
import { can } from '../domain/access.ts';
import { nextFreeSlots } from '../domain/queues/queues.ts';
import { listFutureOccurrences, type FutureOccurrence } from '../domain/series/series.ts';
import type { PageContext } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { dayKey, formatTime, localInputValue } from './time.ts';
import { excerpt, platformBadge } from './ui.ts';

/** Free slots looked up per channel and period (a month view is six weeks). */
const MAX_SLOTS_PER_CHANNEL = 300;
/** Drafts marked in a period; past it the Drafts page lists them all. */
const MAX_DRAFTS = 500;
/** Drafts without a time offered beside the calendar to drag onto a day. */
const MAX_UNPLACED = 10;

interface Mark {
  at: Date;
  markup: SafeHtml;
}

function badges(ids: string[], channels: Map<string, IChannel>): SafeHtml {
  return html`<span class="badges">${ids.map((id) => {
    const c = channels.get(id);
    return c ? platformBadge(c.platform, c.name, c.id) : '';
  })}</span>`;
}

function occurrenceItem(o: FutureOccurrence, channels: Map<string, IChannel>, tz: string): SafeHtml {
  const at = new Date(o.at);
  return html`<li class="occurrence" data-testid="series-occurrence" data-series-id="${o.seriesId}" data-at="${o.at}" title="An upcoming repeat of a recurring post: it becomes a post of its own shortly before its time">
  <time datetime="${o.at}" data-testid="occurrence-time">${formatTime(at, tz)}</time>
  <span class="mark-occurrence" data-testid="occurrence-mark">↻ Repeats</span>
  <span class="excerpt" data-testid="occurrence-excerpt">${excerpt(o.content, 60) || '(media only)'}</span>
  ${badges(o.channelIds, channels)}
</li>`;
}

function slotItem(at: Date, ids: string[], channels: Map<string, IChannel>, tz: string): SafeHtml {
  const [day, time] = localInputValue(at, tz).split('T') as [string, string];
  const names = ids.map((id) => channels.get(id)?.name ?? id).join(', ');
  const href = `/posts/new?date=${day}&time=${time}${ids.map((id) => `&channel=${encodeURIComponent(id)}`).join('')}`;
  return html`<li class="free-slot" data-testid="queue-slot" data-at="${at.toISOString()}" data-channel-ids="${ids.join(' ')}">
  <a href="${href}" data-testid="queue-slot-link"><time datetime="${at.toISOString()}" data-testid="queue-slot-time">${formatTime(at, tz)}</time> <span class="mark-slot">○ Free slot</span><span class="visually-hidden"> in the queue of ${names}: write a post for it</span></a>
  ${badges(ids, channels)}
</li>`;
}

/**
 * A draft on the calendar (or, without a time, beside it): its time, the draft mark, its text and
 * channels; a link to edit it (to the Drafts page for a role that cannot), draggable for a role
 * that may change it.
 */
export function draftMark(
  d: Pick<IDraft, 'id' | 'content' | 'channelIds' | 'intendedAt'>,
  channels: Map<string, IChannel>,
  tz: string,
  write: boolean,
): SafeHtml {
  const at = d.intendedAt ? new Date(d.intendedAt) : null;
  const iso = at?.toISOString() ?? '';
  const text = typeof d.content.content === 'string' ? d.content.content : '';
  return html`<li class="draft-mark" data-testid="calendar-draft" data-draft-id="${d.id}" data-intended-at="${iso}"${write ? html` draggable="true"` : ''} title="A draft: not scheduled, never published as it is">
  <a href="${write ? `/drafts/${d.id}/edit` : `/drafts#draft-${d.id}`}" data-testid="calendar-draft-link"><time datetime="${iso}" data-testid="calendar-draft-time"${at ? '' : html` hidden`}>${at ? formatTime(at, tz) : ''}</time> <span class="mark-draft" data-testid="calendar-draft-mark">✎ Draft</span> <span class="excerpt" data-testid="calendar-draft-excerpt">${excerpt(text, 60) || '(no text yet)'}</span></a>
  ${badges(d.channelIds, channels)}
</li>`;
}

/** The organization's drafts meant for [from, to), not scheduled yet, by time. */
function draftsIn(ctx: PageContext, from: Date, to: Date) {
  return ctx.em.find(
    Draft,
    { organization: ctx.signedIn.organization.id, post: null, scheduledAt: null, intendedAt: { $gte: from, $lt: to } },
    { orderBy: { intendedAt: 'asc', id: 'asc' }, limit: MAX_DRAFTS },
  );
}

/**
 * Beside the calendar, for a member who may change drafts: the last changed drafts without a
 * time, to drag onto a day (they get 09:00 there); empty when there are none.
 */
export async function unplacedDrafts(ctx: PageContext, channels: Map<string, IChannel>): Promise<SafeHtml> {
  if (!can(ctx.signedIn.role, 'posts.write')) return html``;
  const drafts = await ctx.em.find(
    Draft,
    { organization: ctx.signedIn.organization.id, post: null, scheduledAt: null, intendedAt: null },
    { orderBy: { updatedAt: 'desc', id: 'desc' }, limit: MAX_UNPLACED },
  );
  if (!drafts.length) return html``;
  return html`<section class="unplaced-drafts" data-testid="calendar-unplaced-drafts" aria-labelledby="unplaced-title">
  <h2 id="unplaced-title" class="small-heading">Drafts without a day</h2>
  <p class="hint">Drag one onto a day to give it that day (at 09:00), or open it. <a href="/drafts">All drafts</a></p>
  <ul class="marks">${drafts.map((d) => draftMark(d, channels, ctx.tz, true))}</ul>
</section>`;
}

/** Per calendar day (`YYYY-MM-DD` in the viewer's zone), the marks of [from, to), by time. */
export async function calendarMarks(
  ctx: PageContext,
  channelList: IChannel[],
  channels: Map<string, IChannel>,
  from: Date,
  to: Date,
): Promise<Map<string, SafeHtml>> {
  const orgId = ctx.signedIn.organization.id;
  const marks: Mark[] = [];
  for (const o of await listFutureOccurrences(ctx.em, orgId, from, to))
    marks.push({ at: new Date(o.at), markup: occurrenceItem(o, channels, ctx.tz) });
  const write = can(ctx.signedIn.role, 'posts.write');
  for (const d of await draftsIn(ctx, from, to)) marks.push({ at: d.intendedAt!, markup: draftMark(d, channels, ctx.tz, write) });
  // Free slots: only ahead of now; one entry per instant with every channel free then.
  const start = from > ctx.now ? from : ctx.now;
  if (start < to) {
    const free = new Map<number, string[]>();
    for (const c of channelList.filter((ch) => ch.status === 'active')) {
      for (const at of await nextFreeSlots(ctx.em, orgId, [c.id], start, MAX_SLOTS_PER_CHANNEL)) {
        if (at >= to) break;
        free.set(at.getTime(), [...(free.get(at.getTime()) ?? []), c.id]);
      }
    }
    for (const [t, ids] of free) marks.push({ at: new Date(t), markup: slotItem(new Date(t), ids, channels, ctx.tz) });
  }
  const byDay = new Map<string, Mark[]>();
  for (const m of marks.sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const key = dayKey(m.at, ctx.tz);
    byDay.set(key, [...(byDay.get(key) ?? []), m]);
  }
  return new Map(
    [...byDay].map(([key, list]) => [key, html`<ul class="marks" data-testid="calendar-marks">${list.map((m) => m.markup)}</ul>`]),
  );
}
