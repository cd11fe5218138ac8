// Settings → Webhooks: an organization's endpoints (add, test, enable/disable, rotate the secret,
// delete after a confirmation page) and each one's delivery log with Redeliver. The same service
// functions as /v1/webhooks; a web session acts for the whole organization. A new secret is shown
// once: it travels sealed in a short-lived cookie to the GET after the POST (like API keys).
import type { IWebhookEndpoint } from '../db/entities/index.ts';
import { router } from '../http/router.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import {
  createWebhook,
  type DeliveryView,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
} from '../services/webhooks.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect, serializeCookie } from './http.ts';
import { formErrors, layout } from './layout.ts';
import { formatDateTime } from './time.ts';

const BASE = '/settings/webhooks';
const { urlChars: URL_CHARS, descriptionChars: DESCRIPTION_CHARS } = WEBHOOK_LIMITS;
const SECRET_COOKIE = 'pp_new_webhook_secret';
const SECRET_TTL_MS = 60_000;

interface EndpointForm {
  url: string;
  events: 'all' | 'some';
  types: string[];
  description: string;
}

const EMPTY: EndpointForm = { url: '', events: 'all', types: [], description: '' };

const NOTICES: Record<string, string> = {
  created: 'Endpoint added.',
  rotated: 'Secret rotated. The previous one keeps signing for 24 hours.',
  'test-sent': 'Test event sent.',
  enabled: 'Endpoint enabled.',
  disabled: 'Endpoint disabled.',
  redelivering: 'Sending the delivery again.',
  deleted: 'Endpoint deleted.',
};

function need(web: Web) {
  if (!web.deps.webhooks) throw new Error('CREDENTIALS_KEY must be configured for webhooks');
  return web.deps.webhooks;
}

const csrfInput = (ctx: PageContext) => html`<input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">`;
const eventsText = (e: IWebhookEndpoint) => (e.events ? e.events.join(', ') : 'All events');
const endpointStatus = (e: IWebhookEndpoint) => (e.enabled ? 'active' : 'disabled');

function page(ctx: PageContext, title: string, body: SafeHtml, status = 200, cookieToClear = false): Response {
  const notice = NOTICES[ctx.url.searchParams.get('notice') ?? ''] ?? null;
  const res = htmlResponse(layout({ title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'webhooks', notice }), {
    status,
    // A page with a secret must not be kept by the browser or any cache.
    headers: { 'cache-control': 'no-store' },
  });
  if (cookieToClear)
    res.headers.append('set-cookie', serializeCookie(SECRET_COOKIE, '', { path: BASE, maxAgeSeconds: 0, secure: ctx.web.secureCookies() }));
  return res;
}

/** The secret created or rotated just before this GET for this endpoint, if its sealed cookie is here, intact and fresh. */
function openSecret(ctx: PageContext, endpointId: string): string | undefined {
  const sealed = ctx.cookies.get(SECRET_COOKIE);
  const sealKey = ctx.web.options().credentialsKey;
  if (!sealed || !sealKey) return undefined;
  try {
    const v = decryptJson<{ secret: string; endpointId: string; exp: number }>(sealKey, sealed);
    return v.exp > ctx.now.getTime() && v.endpointId === endpointId ? v.secret : undefined;
  } catch {
    return undefined;
  }
}

/** POST-redirect-GET with the new secret sealed for the endpoint's page. */
function redirectWithSecret(ctx: PageContext, endpointId: string, secret: string, notice: string): Response {
  const sealKey = ctx.web.options().credentialsKey;
  if (!sealKey) throw new Error('CREDENTIALS_KEY must be configured for webhooks');
  const sealed = encryptJson(sealKey, { secret, endpointId, exp: ctx.now.getTime() + SECRET_TTL_MS });
  return redirect(`${BASE}/${endpointId}?notice=${notice}`, {
    cookies: [serializeCookie(SECRET_COOKIE, sealed, { path: BASE, maxAgeSeconds: SECRET_TTL_MS / 1000, secure: ctx.web.secureCookies() })],
  });
}

function secretPanel(secret: string): SafeHtml {
  return html`<section class="new-key" role="status" aria-labelledby="new-secret-title" data-testid="new-secret-panel">
  <h2 id="new-secret-title">Signing secret</h2>
  <p><strong>Copy it now.</strong> It is shown only this once. Verify each delivery's <code>webhook-signature</code> with it.</p>
  <div class="copy-row">
    <label for="new-webhook-secret" class="visually-hidden">Signing secret</label>
    <input id="new-webhook-secret" class="key-value" readonly value="${secret}" data-testid="new-webhook-secret">
    <button type="button" data-copy="new-webhook-secret" data-testid="copy-webhook-secret">Copy</button>
  </div>
</section>`;
}

function createForm(ctx: PageContext, f: EndpointForm): SafeHtml {
  return html`<form method="post" action="${BASE}" class="stack" data-testid="webhook-create-form">
  ${csrfInput(ctx)}
  <div class="field">
    <label for="webhook-url">URL</label>
    <input id="webhook-url" name="url" type="url" required maxlength="${URL_CHARS}" value="${f.url}" data-testid="webhook-url" aria-describedby="webhook-url-hint">
    <p class="hint" id="webhook-url-hint">Where Postpilot POSTs the events (http or https).</p>
  </div>
  <fieldset>
    <legend>Events</legend>
    <div class="radio"><input type="radio" id="webhook-events-all" name="events" value="all" data-testid="webhook-events-all"${f.events === 'all' ? html` checked` : ''}><label for="webhook-events-all">All events, including ones added later</label></div>
    <div class="radio"><input type="radio" id="webhook-events-some" name="events" value="some" data-testid="webhook-events-some"${f.events === 'some' ? html` checked` : ''}><label for="webhook-events-some">Only these events:</label></div>
    <ul class="choice-list nested">${WEBHOOK_EVENT_TYPES.map((t) => html`<li class="check"><input type="checkbox" id="webhook-type-${t}" name="types" value="${t}" data-testid="webhook-type-${t}"${f.types.includes(t) ? html` checked` : ''}><label for="webhook-type-${t}"><code>${t}</code></label></li>`)}</ul>
  </fieldset>
  <div class="field">
    <label for="webhook-description">Description <span class="hint">(optional)</span></label>
    <input id="webhook-description" name="description" maxlength="${DESCRIPTION_CHARS}" value="${f.description}" data-testid="webhook-description">
  </div>
  <button type="submit" class="primary" data-testid="webhook-create">Add endpoint</button>
</form>`;
}

function endpointsTable(endpoints: IWebhookEndpoint[]): SafeHtml {
  if (!endpoints.length) return html`<p data-testid="no-webhooks">No webhook endpoints yet.</p>`;
  return html`<table class="table" data-testid="webhook-list">
  <caption class="visually-hidden">Webhook endpoints</caption>
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Status</th></tr></thead>
  <tbody>${endpoints.map(
    (e) => html`<tr data-testid="webhook-row" data-webhook-id="${e.id}" data-status="${endpointStatus(e)}">
    <th scope="row"><a href="${BASE}/${e.id}" data-testid="webhook-link">${e.url}</a></th>
    <td data-testid="webhook-events">${eventsText(e)}</td>
    <td>${e.description ?? ''}</td>
    <td><span class="status status-${endpointStatus(e)}" data-testid="webhook-status">${e.enabled ? 'Enabled' : 'Disabled'}</span>${e.disabledReason ? html` <span class="hint" data-testid="webhook-disabled-reason">${e.disabledReason}</span>` : ''}</td>
  </tr>`,
  )}</tbody>
</table>`;
}

async function listPage(ctx: PageContext, o: { form?: EndpointForm; errors?: string[]; status?: number } = {}) {
  const endpoints = await listWebhooks(ctx.em, ctx.signedIn.organization.id);
  const body = html`<h1>Webhooks</h1>
<section aria-labelledby="webhooks-title">
  <h2 id="webhooks-title">Endpoints</h2>
  ${endpointsTable(endpoints)}
</section>
<section aria-labelledby="webhook-create-title">
  <h2 id="webhook-create-title">Add an endpoint</h2>
  ${formErrors(o.errors ?? [])}
  ${createForm(ctx, o.form ?? EMPTY)}
</section>`;
  return page(ctx, 'Webhooks', body, o.status);
}

function deliveryLog(ctx: PageContext, e: IWebhookEndpoint, deliveries: DeliveryView[]): SafeHtml {
  if (!deliveries.length) return html`<p data-testid="no-deliveries">No deliveries yet.</p>`;
  const when = (iso: string | null) => (iso ? html`<time datetime="${iso}">${formatDateTime(new Date(iso), ctx.tz)}</time>` : '—');
  return html`<table class="table" data-testid="delivery-list">
  <caption class="visually-hidden">Recent deliveries</caption>
  <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Code</th><th scope="col">Duration</th><th scope="col">Attempts</th><th scope="col">Last attempt</th><th scope="col">Error</th><th scope="col">Next retry</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${deliveries.map(
    (d) => html`<tr data-testid="delivery-row" data-delivery-id="${d.id}" data-status="${d.status}">
    <th scope="row"><code data-testid="delivery-event">${d.eventType}</code></th>
    <td><span class="status status-${d.status}" data-testid="delivery-status">${d.status}</span></td>
    <td data-testid="delivery-code">${d.statusCode ?? '—'}</td>
    <td data-testid="delivery-duration">${d.durationMs === null ? '—' : `${d.durationMs} ms`}</td>
    <td data-testid="delivery-attempts">${d.attempts}</td>
    <td>${when(d.lastAttemptAt)}</td>
    <td data-testid="delivery-error">${d.error ?? ''}</td>
    <td data-testid="delivery-next-retry">${when(d.nextRetryAt)}</td>
    <td>${
      d.status === 'pending' || !e.enabled
        ? ''
        : html`<form method="post" action="${BASE}/${e.id}/deliveries/${d.id}/redeliver" class="inline">
      ${csrfInput(ctx)}<button type="submit" data-testid="delivery-redeliver">Redeliver<span class="visually-hidden"> ${d.eventType}</span></button>
    </form>`
    }</td>
  </tr>`,
  )}</tbody>
</table>`;
}

const action = (ctx: PageContext, e: IWebhookEndpoint, path: string, label: string, testId: string, cls = '') =>
  html`<form method="post" action="${BASE}/${e.id}/${path}" class="inline">${csrfInput(ctx)}<button type="submit"${cls ? html` class="${cls}"` : ''} data-testid="${testId}">${label}</button></form>`;

async function endpointPage(ctx: PageContext, id: string): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const e = await getWebhook(ctx.em, orgId, id);
  const { data } = await listDeliveries(ctx.em, orgId, e.id, { limit: 25 });
  const secret = openSecret(ctx, e.id);
  const body = html`<p><a href="${BASE}" data-testid="webhooks-back">← All endpoints</a></p>
<h1>Webhook endpoint</h1>
${secret ? secretPanel(secret) : ''}
<dl class="details" data-testid="webhook-detail" data-webhook-id="${e.id}" data-status="${endpointStatus(e)}">
  <dt>URL</dt><dd data-testid="webhook-detail-url">${e.url}</dd>
  <dt>Events</dt><dd data-testid="webhook-events">${eventsText(e)}</dd>
  ${e.description ? html`<dt>Description</dt><dd>${e.description}</dd>` : ''}
  <dt>Status</dt><dd><span class="status status-${endpointStatus(e)}" data-testid="webhook-status">${e.enabled ? 'Enabled' : 'Disabled'}</span>${e.disabledReason ? html` <span data-testid="webhook-disabled-reason">${e.disabledReason}</span>` : ''}</dd>
  ${e.disabledAt ? html`<dt>Disabled</dt><dd data-testid="webhook-disabled-at"><time datetime="${e.disabledAt.toISOString()}">${formatDateTime(e.disabledAt, ctx.tz)}</time></dd>` : ''}
</dl>
<div class="actions">
  ${e.enabled ? action(ctx, e, 'test', 'Send test event', 'webhook-test') : ''}
  ${e.enabled ? action(ctx, e, 'disable', 'Disable', 'webhook-disable') : action(ctx, e, 'enable', 'Enable', 'webhook-enable')}
  ${action(ctx, e, 'rotate-secret', 'Rotate secret', 'webhook-rotate')}
  <a href="${BASE}/${e.id}/delete" class="button danger" data-testid="webhook-delete">Delete…</a>
</div>
<section aria-labelledby="deliveries-title">
  <h2 id="deliveries-title">Recent deliveries</h2>
  <p><a href="${BASE}/${e.id}" data-testid="deliveries-refresh">Refresh</a></p>
  ${deliveryLog(ctx, e, data)}
</section>`;
  return page(ctx, 'Webhook endpoint', body, 200, ctx.cookies.has(SECRET_COOKIE));
}

async function confirmDelete(ctx: PageContext, id: string, problems: string[] = [], status = 200): Promise<Response> {
  const e = await getWebhook(ctx.em, ctx.signedIn.organization.id, id);
  const body = html`<section class="confirm" data-testid="webhook-delete-confirm">
  <h1>Delete this endpoint?</h1>
  ${formErrors(problems)}
  <p><code>${e.url}</code> receives no more events, and its delivery log is deleted with it.</p>
  <form method="post" action="${BASE}/${e.id}/delete" class="actions">
    ${csrfInput(ctx)}
    <button type="submit" name="confirm" value="yes" class="danger" data-testid="webhook-delete-submit">Delete endpoint</button>
    <a href="${BASE}/${e.id}" data-testid="webhook-delete-keep">Keep it</a>
  </form>
</section>`;
  return page(ctx, 'Delete webhook endpoint?', body, status);
}

function readForm(ctx: PageContext): EndpointForm {
  return {
    url: (ctx.form.get('url') ?? '').trim(),
    events: ctx.form.get('events') === 'some' ? 'some' : 'all',
    types: ctx.form.getAll('types'),
    description: (ctx.form.get('description') ?? '').trim(),
  };
}

/** What the API's body schema checks (lengths, known event types, no NUL), for the form. */
function checkForm(f: EndpointForm): FieldError[] {
  const fields: FieldError[] = [];
  if (!f.url) fields.push({ path: 'url', message: 'is required' });
  else if ([...f.url].length > URL_CHARS || f.url.includes('\0'))
    fields.push({ path: 'url', message: `must be a URL of at most ${URL_CHARS} characters` });
  if ([...f.description].length > DESCRIPTION_CHARS || f.description.includes('\0'))
    fields.push({ path: 'description', message: `must be at most ${DESCRIPTION_CHARS} characters` });
  if (f.events === 'some') {
    if (!f.types.length) fields.push({ path: 'events', message: 'choose at least one event, or all events' });
    const unknown = f.types.filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
    if (unknown.length) fields.push({ path: 'events', message: 'contains an unknown event type' });
  }
  return fields;
}

export function webhookRoutes(web: Web) {
  const idOf = (ctx: PageContext) => ctx.params.id ?? '';
  const orgOf = (ctx: PageContext) => ctx.signedIn.organization.id;
  return router()
    .get(
      BASE,
      pageRoute(web, 'webhooks.manage', (ctx) => listPage(ctx)),
    )
    .post(
      BASE,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        const f = readForm(ctx);
        try {
          const fields = checkForm(f);
          if (fields.length) throw errors.validation(fields);
          const { endpoint, secret } = await createWebhook(
            ctx.em,
            need(web),
            ctx.signedIn.organization,
            { url: f.url, events: f.events === 'all' ? 'all' : f.types, description: f.description || null },
            ctx.now,
          );
          return redirectWithSecret(ctx, endpoint.id, secret, 'created');
        } catch (err) {
          if (err instanceof ApiError && (err.code === 'validation_failed' || err.code === 'limit_reached'))
            return listPage(ctx, { form: f, errors: describeError(err), status: err.status });
          throw err;
        }
      }),
      { parse: 'text' },
    )
    .get(
      `${BASE}/:id`,
      pageRoute(web, 'webhooks.manage', (ctx) => endpointPage(ctx, idOf(ctx))),
    )
    .post(
      `${BASE}/:id/test`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        await sendTestEvent(web.deps.orm, web.deps.temporal, orgOf(ctx), idOf(ctx), ctx.now);
        return redirect(`${BASE}/${idOf(ctx)}?notice=test-sent`);
      }),
      { parse: 'text' },
    )
    .post(
      `${BASE}/:id/enable`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        await updateWebhook(ctx.em, need(web), orgOf(ctx), idOf(ctx), { enabled: true }, ctx.now);
        return redirect(`${BASE}/${idOf(ctx)}?notice=enabled`);
      }),
      { parse: 'text' },
    )
    .post(
      `${BASE}/:id/disable`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        await updateWebhook(ctx.em, need(web), orgOf(ctx), idOf(ctx), { enabled: false }, ctx.now);
        return redirect(`${BASE}/${idOf(ctx)}?notice=disabled`);
      }),
      { parse: 'text' },
    )
    .post(
      `${BASE}/:id/rotate-secret`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        const r = await rotateWebhookSecret(ctx.em, need(web), orgOf(ctx), idOf(ctx), ctx.now);
        return redirectWithSecret(ctx, r.endpoint.id, r.secret, 'rotated');
      }),
      { parse: 'text' },
    )
    .get(
      `${BASE}/:id/delete`,
      pageRoute(web, 'webhooks.manage', (ctx) => confirmDelete(ctx, idOf(ctx))),
    )
    .post(
      `${BASE}/:id/delete`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        // Only the confirmation page's button sends confirm=yes.
        if (ctx.form.get('confirm') !== 'yes') return confirmDelete(ctx, idOf(ctx), ['Confirm with the button below.'], 422);
        await deleteWebhook(ctx.em, orgOf(ctx), idOf(ctx));
        return redirect(`${BASE}?notice=deleted`);
      }),
      { parse: 'text' },
    )
    .post(
      `${BASE}/:id/deliveries/:deliveryId/redeliver`,
      pageRoute(web, 'webhooks.manage', async (ctx) => {
        await redeliver(web.deps.orm, web.deps.temporal, orgOf(ctx), idOf(ctx), ctx.params.deliveryId ?? '');
        return redirect(`${BASE}/${idOf(ctx)}?notice=redelivering`);
      }),
      { parse: 'text' },
    );
}
