// A channel's posting queue, on the channel's queue page: its weekly slots (one field per
// weekday, "09:00, 13:30"), the zone they are in (the channel's own, or the organization's), and
// the next free slot times — through the same services as GET/PUT /v1/channels/{id}/queue. A plain
// form: no JavaScript needed. Slot times are wall times of the queue's zone (a 09:00 slot stays
// 09:00 there across daylight-saving changes); the free times are also shown in the viewer's zone.
import { router } from '../http/router.ts';
import { bestTimes } from '../domain/analytics/best-times.ts';
import { bestTimesHeatMap } from './analytics.ts';
import { ApiError, type FieldError } from '../lib/errors.ts';
import { organizationTimeZone, getQueue, setQueue, type QueueView } from '../domain/queues/queues.ts';
import { Channel } from '../db/entities/index.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime, weekdayLabel, WEEKDAYS } from './time.ts';
import { platformBadge } from './ui.ts';
import { errors } from '../lib/errors.ts';

/** "9:00, 13:30 17:05" → ["09:00", "13:30", "17:05"]; malformed entries become field errors. */
export function parseDayTimes(value: string, weekday: string, fields: FieldError[]): string[] {
  const out: string[] = [];
  for (const part of value.split(/[\s,;]+/).filter(Boolean)) {
    const m = /^(\d{1,2})[:.h](\d{2})$/.exec(part);
    const hour = m ? Number(m[1]) : -1;
    const minute = m ? Number(m[2]) : -1;
    if (hour < 0 || hour > 23 || minute < 0 || minute > 59) {
      fields.push({ path: `slots.${weekday}`, message: `"${part}" is not a time HH:MM (00:00 to 23:59)` });
      continue;
    }
    out.push(`${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`);
  }
  return out;
}

interface FormState {
  /** Per weekday, the field's text. */
  days: Record<string, string>;
  /** '' = the organization's zone. */
  zone: string;
}

function stateOf(q: QueueView, userZone: string): FormState {
  const days: Record<string, string> = {};
  for (const d of WEEKDAYS)
    days[d] = q.slots
      .filter((s) => s.weekday === d)
      .map((s) => s.time)
      .join(', ');
  // A queue set up for the first time starts in the person's own zone (a New Yorker's 09:00 is New York's).
  const zone = q.timeZoneSource === 'channel' ? q.timeZone : q.slots.length ? '' : userZone;
  return { days, zone };
}

async function queuePage(
  ctx: PageContext,
  channelId: string,
  o: { state?: FormState; errors?: string[]; status?: number; notice?: string | null } = {},
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const channel = await ctx.em.findOne(Channel, { id: channelId, organization: orgId });
  if (!channel) throw errors.notFound('Channel');
  const [q, orgZone, best] = await Promise.all([
    getQueue(ctx.em, orgId, channelId, { now: ctx.now, count: 10 }),
    organizationTimeZone(ctx.em, orgId),
    bestTimes(ctx.em.fork(), orgId, channelId, { now: ctx.now }),
  ]);
  const state = o.state ?? stateOf(q, ctx.tz);
  const zones = Intl.supportedValuesOf('timeZone');
  const zoneChoices = state.zone && !zones.includes(state.zone) ? [state.zone, ...zones] : zones;
  const body = html`<h1>${platformBadge(channel.platform)} Posting queue: ${channel.name}</h1>
${formErrors(o.errors ?? [])}
<p>Posts added to the queue (“Add to queue” in the composer, or <code>"queue": true</code> in the API) go out at the earliest free slot.
Slots are times of day in the queue's time zone, <strong data-testid="queue-tz">${q.timeZone}</strong>${q.timeZoneSource === 'organization' ? ' (the organization’s)' : ''}: a 09:00 slot stays 09:00 there when the clocks change.</p>
<form method="post" action="/channels/${channel.id}/queue" class="stack" data-testid="queue-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <div class="field">
    <label for="queue-zone">Time zone of the slots</label>
    <select id="queue-zone" name="timeZone" data-testid="queue-tz-select">
      <option value=""${state.zone === '' ? html` selected` : ''}>The organization’s (${orgZone})</option>
      ${zoneChoices.map((z) => html`<option value="${z}"${z === state.zone ? html` selected` : ''}>${z.replaceAll('_', ' ')}</option>`)}
    </select>
  </div>
  <fieldset data-testid="queue-slots">
    <legend>Slots <span class="hint">(times HH:MM, separated by commas)</span></legend>
    ${WEEKDAYS.map(
      (d) => html`<div class="field">
      <label for="slots-${d}">${weekdayLabel(d)}</label>
      <input id="slots-${d}" name="slots_${d}" value="${state.days[d] ?? ''}" maxlength="600" inputmode="numeric" placeholder="e.g. 09:00, 13:30" data-testid="queue-day-${d}">
    </div>`,
    )}
  </fieldset>
  <div class="actions">
    <button type="submit" class="primary" data-testid="queue-save">Save queue</button>
    <a href="/channels">Back to channels</a>
  </div>
</form>
<h2>Next free slots</h2>
${
  q.nextFreeSlots.length
    ? html`<ol class="plain" data-testid="queue-free">${q.nextFreeSlots.map(
        (at) =>
          html`<li data-testid="queue-free-slot" data-at="${at}"><time datetime="${at}">${formatDateTime(new Date(at), ctx.tz)}</time>${
            q.timeZone !== ctx.tz ? html` <span class="hint">(${formatDateTime(new Date(at), q.timeZone)} ${q.timeZone})</span>` : ''
          }</li>`,
      )}</ol>
  <p class="hint">Shown in your time zone, ${ctx.tz}.</p>`
    : html`<p data-testid="queue-free-none">${q.slots.length ? 'No free slot in the next 90 days.' : 'No slots yet.'}</p>`
}
${bestTimesHeatMap(best)}`;
  return htmlResponse(
    layout({ title: `Queue: ${channel.name}`, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'channels', notice: o.notice ?? null }),
    { status: o.status ?? 200 },
  );
}

export function queueRoutes(web: Web) {
  return router()
    .get(
      '/channels/:id/queue',
      pageRoute(web, 'read', (ctx) =>
        queuePage(ctx, ctx.params.id!, { notice: ctx.url.searchParams.get('notice') === 'saved' ? 'Queue saved.' : null }),
      ),
    )
    .post(
      '/channels/:id/queue',
      pageRoute(web, 'queues.write', async (ctx) => {
        const channelId = ctx.params.id!;
        const fields: FieldError[] = [];
        const state: FormState = { days: {}, zone: (ctx.form.get('timeZone') ?? '').trim() };
        const slots: { weekday: string; time: string }[] = [];
        for (const d of WEEKDAYS) {
          const value = ctx.form.get(`slots_${d}`) ?? '';
          state.days[d] = value;
          for (const time of parseDayTimes(value, d, fields)) slots.push({ weekday: d, time });
        }
        try {
          if (fields.length) throw errors.validation(fields);
          await setQueue(ctx.em, ctx.signedIn.organization.id, channelId, { slots, timeZone: state.zone || null }, { now: ctx.now });
        } catch (err) {
          if (!(err instanceof ApiError) || err.status !== 422) throw err;
          return queuePage({ ...ctx, em: ctx.em.fork() }, channelId, { state, errors: describeError(err), status: 422 });
        }
        return redirect(`/channels/${channelId}/queue?notice=saved`);
      }),
      { parse: 'text' },
    );
}
