// Settings → Time zone: the zone a person sees and types times in (calendar, composer, post pages,
// queue editor). Stored on the user (users.time_zone). Null until set: the first sign-in stores the
// browser's zone (the pp_tz cookie app.js writes on the sign-in page; or, for a session older than
// that, app.js's PUT /web/api/me/time-zone with ifUnset, which never overwrites a chosen zone).
import type { EntityManager } from '@mikro-orm/postgresql';
import { t } from 'elysia';
import { router } from '../http/router.ts';
import { User } from '../db/entities/index.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { checkTimeZone, TIME_ZONE_CHARS, TIME_ZONE_MESSAGE } from '../lib/zoned-time.ts';
import { jsonRoute, pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse, jsonResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime } from './time.ts';

/** The zone in Intl's own spelling, or a 422 on `path`. */
function validZone(value: unknown, path: string): string {
  const fields: FieldError[] = [];
  const tz = checkTimeZone(typeof value === 'string' ? value.trim() : value, path, fields);
  if (tz === undefined) throw errors.validation(fields);
  return tz;
}

/** Saves the user's zone; with onlyIfUnset, only when none was set yet. True when it was written. */
export async function setUserTimeZone(em: EntityManager, userId: string, tz: string, onlyIfUnset = false): Promise<boolean> {
  const where = onlyIfUnset ? { id: userId, timeZone: null } : { id: userId };
  return (await em.nativeUpdate(User, where, { timeZone: tz })) > 0;
}

/** Every zone Intl knows, for the select (the current one first if Intl lists it under another name). */
export function zoneOptions(current: string): string[] {
  const all = Intl.supportedValuesOf('timeZone');
  return all.includes(current) ? all : [current, ...all];
}

function settingsPage(ctx: PageContext, o: { errors?: string[]; status?: number; notice?: string | null } = {}): Response {
  const current = ctx.tz;
  const body = html`<h1>Time zone</h1>
${formErrors(o.errors ?? [])}
<p>The calendar, the composer, post pages and the posting queues show and take times in your time zone.
It is now <strong data-testid="settings-tz-current">${current}</strong> (${formatDateTime(ctx.now, current)}).</p>
<form method="post" action="/settings/time-zone" class="stack" data-testid="tz-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <input type="hidden" name="browserTimeZone" value="" data-browser-tz-input>
  <div class="field">
    <label for="timeZone">Time zone</label>
    <select id="timeZone" name="timeZone" data-testid="tz-select">${zoneOptions(current).map(
      (z) => html`<option value="${z}"${z === current ? html` selected` : ''}>${z.replaceAll('_', ' ')}</option>`,
    )}</select>
  </div>
  <div class="actions">
    <button type="submit" class="primary" data-testid="tz-save">Save</button>
    <button type="submit" name="useBrowser" value="yes" data-testid="tz-use-browser" data-browser-tz hidden>Use this browser's time zone</button>
  </div>
</form>`;
  return htmlResponse(layout({ title: 'Time zone', body, signedIn: ctx.signedIn, tz: current, nav: null, notice: o.notice ?? null }), {
    status: o.status ?? 200,
  });
}

const TimeZoneBody = t.Object(
  {
    timeZone: t.String({ maxLength: TIME_ZONE_CHARS }),
    /** The first sign-in's default: leave a zone the person already chose. */
    ifUnset: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
);

export function settingsRoutes(web: Web) {
  return router()
    .get(
      '/settings/time-zone',
      pageRoute(web, 'read', (ctx) =>
        settingsPage(ctx, { notice: ctx.url.searchParams.get('notice') === 'saved' ? 'Time zone saved.' : null }),
      ),
    )
    .post(
      '/settings/time-zone',
      pageRoute(web, 'read', async (ctx) => {
        // "Use this browser's time zone" (shown by app.js) sends the zone app.js put in `browserTimeZone`.
        const value = ctx.form.get('useBrowser') === 'yes' ? ctx.form.get('browserTimeZone') : ctx.form.get('timeZone');
        let tz: string;
        try {
          tz = validZone(value ?? '', 'timeZone');
        } catch {
          return settingsPage(ctx, { errors: [`timeZone: ${TIME_ZONE_MESSAGE}`], status: 422 });
        }
        await setUserTimeZone(ctx.em, ctx.signedIn.user.id, tz);
        return redirect('/settings/time-zone?notice=saved');
      }),
      { parse: 'text' },
    )
    .put(
      '/web/api/me/time-zone',
      jsonRoute(web, 'read', async (ctx) => {
        const body = ctx.body as typeof TimeZoneBody.static;
        const tz = validZone(body.timeZone, 'timeZone');
        const saved = await setUserTimeZone(ctx.em, ctx.signedIn.user.id, tz, body.ifUnset === true);
        const user = await ctx.em.fork().findOneOrFail(User, { id: ctx.signedIn.user.id });
        return jsonResponse({ timeZone: user.timeZone, saved });
      }),
      { body: TimeZoneBody },
    );
}
