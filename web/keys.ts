// Settings → API keys: create (the full key is shown once, in the answer to the POST, and never
// stored), list by prefix with scopes, channels, last use and expiry, and revoke.
import { router } from '../http/router.ts';
import { errors, type FieldError } from '../lib/errors.ts';
import { PLAN_LIMITS } from '../lib/plans.ts';
import { SCOPES } from '../lib/scopes.ts';
import { createApiKey, listApiKeys, revokeApiKey, type KeyView } from '../services/api-keys.ts';
import type { IChannel } from '../db/entities/index.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { auditNote } from './audit.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect, serializeCookie } from './http.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { formErrors, layout } from './layout.ts';
import { byId, channelsOf } from './post-actions.ts';
import { addDays, dayStart, formatDateTime, isTimeZone, parseDayKey } from './time.ts';
import { platformBadge } from './ui.ts';
import { ApiError } from '../lib/errors.ts';

const SCOPE_HELP: Record<string, string> = {
  read: 'read account, channels, posts and media',
  publish: 'create and edit posts, upload media',
  generate: 'content generation (no endpoint uses it yet)',
  approve: 'approve and reject posts waiting for approval',
};

interface KeyForm {
  name: string;
  scopes: string[];
  channels: 'all' | 'some';
  channelIds: string[];
  expiry: string;
  expiresOn: string;
  requiresApproval: boolean;
}

const EMPTY: KeyForm = {
  name: '',
  scopes: ['read', 'publish'],
  channels: 'all',
  channelIds: [],
  expiry: 'never',
  expiresOn: '',
  requiresApproval: false,
};

function keyStatus(k: KeyView, now: Date): string {
  if (k.revokedAt) return 'revoked';
  if (k.expiresAt && Date.parse(k.expiresAt) <= now.getTime()) return 'expired';
  return 'active';
}

function createForm(ctx: PageContext, f: KeyForm, channels: IChannel[]): SafeHtml {
  const csrf = ctx.signedIn.session.csrfToken;
  return html`<form method="post" action="/settings/api-keys" class="stack" data-testid="key-create-form">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="tz" value="${ctx.tz}" data-tz-input>
  <div class="field">
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="200" value="${f.name}" data-testid="key-name" aria-describedby="key-name-hint">
    <p class="hint" id="key-name-hint">Where the key is used, e.g. "Zapier" or "CI".</p>
  </div>
  <fieldset>
    <legend>Scopes</legend>
    ${SCOPES.map((s) => html`<div class="check"><input type="checkbox" id="scope-${s}" name="scopes" value="${s}" data-testid="key-scope-${s}"${f.scopes.includes(s) ? html` checked` : ''}><label for="scope-${s}"><strong>${s}</strong> <span class="hint">${SCOPE_HELP[s]}</span></label></div>`)}
  </fieldset>
  <div class="check"><input type="checkbox" id="key-requires-approval" name="requiresApproval" value="yes" data-testid="key-requires-approval"${f.requiresApproval ? html` checked` : ''}><label for="key-requires-approval"><strong>Posts need approval</strong> <span class="hint">posts made with this key wait for an approver before they are published</span></label></div>
  <fieldset>
    <legend>Channels</legend>
    <div class="radio"><input type="radio" id="key-channels-all" name="channels" value="all" data-testid="key-channels-all"${f.channels === 'all' ? html` checked` : ''}><label for="key-channels-all">All channels, including ones connected later</label></div>
    <div class="radio"><input type="radio" id="key-channels-some" name="channels" value="some" data-testid="key-channels-some"${f.channels === 'some' ? html` checked` : ''}><label for="key-channels-some">Only these channels:</label></div>
    <ul class="choice-list nested">${channels.map((c) => html`<li class="check"><input type="checkbox" id="key-ch-${c.id}" name="channelIds" value="${c.id}" data-testid="key-channel-option"${f.channelIds.includes(c.id) ? html` checked` : ''}><label for="key-ch-${c.id}">${platformBadge(c.platform)} ${c.name}</label></li>`)}</ul>
  </fieldset>
  <div class="field">
    <label for="key-expiry">Expires</label>
    <select id="key-expiry" name="expiry" data-testid="key-expiry">
      ${[
        ['never', 'Never'],
        ['30', 'In 30 days'],
        ['90', 'In 90 days'],
        ['365', 'In a year'],
        ['custom', 'On a date…'],
      ].map(([v, label]) => html`<option value="${v}"${f.expiry === v ? html` selected` : ''}>${label}</option>`)}
    </select>
  </div>
  <div class="field">
    <label for="key-expires-on">Expiry date <span class="hint">(with "On a date…"; the key works until the end of that day, ${ctx.tz})</span></label>
    <input type="date" id="key-expires-on" name="expiresOn" value="${f.expiresOn}" data-testid="key-expires-on">
  </div>
  <button type="submit" class="primary" data-testid="key-create">Create key</button>
</form>`;
}

function keysTable(ctx: PageContext, keys: KeyView[], channels: Map<string, IChannel>): SafeHtml {
  if (!keys.length) return html`<p data-testid="no-keys">No API keys yet.</p>`;
  const csrf = ctx.signedIn.session.csrfToken;
  const when = (iso: string | null, none: string) =>
    iso ? html`<time datetime="${iso}">${formatDateTime(new Date(iso), ctx.tz)}</time>` : none;
  return html`<table class="table" data-testid="key-list">
  <caption class="visually-hidden">API keys</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Scopes</th><th scope="col">Channels</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${keys.map((k) => {
    const status = keyStatus(k, ctx.now);
    return html`<tr data-testid="key-row" data-key-id="${k.id}" data-status="${status}">
    <th scope="row" data-testid="key-row-name">${k.name}</th>
    <td><code data-testid="key-prefix">${k.prefix}…</code></td>
    <td data-testid="key-scopes">${k.scopes.join(', ')}</td>
    <td data-testid="key-channels">${k.channels === 'all' ? 'All' : k.channels.map((id, i) => html`${i ? ', ' : ''}${channels.get(id)?.name ?? id}`)}</td>
    <td data-testid="key-last-used">${when(k.lastUsedAt, 'Never')}</td>
    <td data-testid="key-expires">${when(k.expiresAt, 'Never')}</td>
    <td><span class="status status-${status}" data-testid="key-status">${status}</span></td>
    <td>${
      status === 'revoked'
        ? ''
        : html`<form method="post" action="/settings/api-keys/${k.id}/revoke" class="inline">
      <input type="hidden" name="_csrf" value="${csrf}">
      <button type="submit" class="danger" data-testid="key-revoke">Revoke<span class="visually-hidden"> key ${k.name}</span></button>
    </form>`
    }</td>
  </tr>`;
  })}</tbody>
</table>`;
}

async function keysPage(
  ctx: PageContext,
  o: { form?: KeyForm; created?: { key: string; name: string }; errors?: string[]; status?: number } = {},
): Promise<Response> {
  const orgId = ctx.signedIn.organization.id;
  const [keys, channelList] = await Promise.all([listApiKeys(ctx.em, orgId), channelsOf(ctx.em, orgId)]);
  const channels = byId(channelList);
  const apiAccess = PLAN_LIMITS[ctx.signedIn.organization.plan].apiAccess;
  const body = html`<h1>API keys</h1>
${apiAccess ? '' : html`<p class="notice" data-testid="plan-notice">The ${ctx.signedIn.organization.plan} plan has no API access: keys are refused (403 plan_required) until the organization upgrades.</p>`}
${
  o.created
    ? html`<section class="new-key" role="status" aria-labelledby="new-key-title" data-testid="new-key-panel">
  <h2 id="new-key-title">Your new key "${o.created.name}"</h2>
  <p><strong>Copy it now.</strong> It is shown only this once; Postpilot keeps only a hash of it.</p>
  <div class="copy-row">
    <label for="new-api-key" class="visually-hidden">New API key</label>
    <input id="new-api-key" class="key-value" readonly value="${o.created.key}" data-testid="new-api-key">
    <button type="button" data-copy="new-api-key" data-testid="copy-api-key">Copy</button>
  </div>
</section>`
    : ''
}
<section aria-labelledby="keys-title">
  <h2 id="keys-title">Keys</h2>
  ${keysTable(ctx, keys, channels)}
</section>
<section aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  ${formErrors(o.errors ?? [])}
  ${createForm(ctx, o.form ?? EMPTY, channelList)}
</section>`;
  const n = ctx.url.searchParams.get('notice');
  const notice = n === 'revoked' ? 'Key revoked.' : n === 'created' && o.created ? 'Key created.' : null;
  return htmlResponse(layout({ title: 'API keys', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'keys', notice }), {
    status: o.status ?? 200,
    // The page with a new key must not be kept by the browser or any cache.
    headers: { 'cache-control': 'no-store' },
  });
}

function expiryFrom(f: KeyForm, ctx: PageContext, fields: FieldError[]): Date | null {
  if (f.expiry === 'never') return null;
  if (f.expiry === 'custom') {
    const day = parseDayKey(f.expiresOn);
    if (!day) {
      fields.push({ path: 'expiresAt', message: 'choose an expiry date' });
      return null;
    }
    const tz = ctx.form.get('tz');
    return dayStart(addDays(day, 1), isTimeZone(tz) ? tz : ctx.tz);
  }
  const days = Number(f.expiry);
  if (![30, 90, 365].includes(days)) {
    fields.push({ path: 'expiresAt', message: 'choose an expiry' });
    return null;
  }
  return new Date(ctx.now.getTime() + days * 24 * 60 * 60 * 1000);
}

const NEW_KEY_COOKIE = 'pp_new_key';
const NEW_KEY_TTL_MS = 60_000;

/** The key created just before this GET, if its sealed cookie is here, intact and fresh. */
function openNewKey(ctx: PageContext): { key: string; name: string } | undefined {
  const sealed = ctx.cookies.get(NEW_KEY_COOKIE);
  const sealKey = ctx.web.options().credentialsKey;
  if (!sealed || !sealKey) return undefined;
  try {
    const v = decryptJson<{ key: string; name: string; exp: number }>(sealKey, sealed);
    return v.exp > ctx.now.getTime() ? { key: v.key, name: v.name } : undefined;
  } catch {
    return undefined;
  }
}

export function keyRoutes(web: Web) {
  return router()
    .get(
      '/settings/api-keys',
      pageRoute(web, 'keys.manage', async (ctx) => {
        const created = openNewKey(ctx);
        const res = await keysPage(ctx, created ? { created } : {});
        if (ctx.cookies.has(NEW_KEY_COOKIE)) {
          res.headers.append(
            'set-cookie',
            serializeCookie(NEW_KEY_COOKIE, '', { path: '/settings/api-keys', maxAgeSeconds: 0, secure: ctx.web.secureCookies() }),
          );
        }
        return res;
      }),
    )
    .post(
      '/settings/api-keys',
      pageRoute(web, 'keys.manage', async (ctx) => {
        const f: KeyForm = {
          name: ctx.form.get('name') ?? '',
          scopes: ctx.form.getAll('scopes'),
          channels: ctx.form.get('channels') === 'some' ? 'some' : 'all',
          channelIds: ctx.form.getAll('channelIds'),
          expiry: ctx.form.get('expiry') ?? 'never',
          expiresOn: ctx.form.get('expiresOn') ?? '',
          requiresApproval: ctx.form.get('requiresApproval') === 'yes',
        };
        try {
          const fields: FieldError[] = [];
          const expiresAt = expiryFrom(f, ctx, fields);
          if (fields.length) throw errors.validation(fields);
          const created = await createApiKey(
            ctx.em,
            {
              organizationId: ctx.signedIn.organization.id,
              name: f.name,
              scopes: f.scopes,
              channels: f.channels === 'all' ? 'all' : f.channelIds,
              expiresAt,
              requiresApproval: f.requiresApproval,
              createdBy: { userId: ctx.signedIn.user.id, role: ctx.signedIn.role },
            },
            ctx.now,
          );
          auditNote(ctx, { resourceId: created.id, details: { name: f.name.trim(), scopes: f.scopes } });
          // POST-redirect-GET, so a reload cannot create a second key: the new key travels once,
          // encrypted, in a short-lived cookie read (and cleared) by the next GET of the page.
          const sealKey = ctx.web.options().credentialsKey;
          if (!sealKey) return keysPage({ ...ctx, em: ctx.em.fork() }, { created: { key: created.key, name: f.name.trim() }, status: 201 });
          const sealed = encryptJson(sealKey, { key: created.key, name: f.name.trim(), exp: ctx.now.getTime() + NEW_KEY_TTL_MS });
          return redirect('/settings/api-keys?notice=created', {
            cookies: [
              serializeCookie(NEW_KEY_COOKIE, sealed, {
                path: '/settings/api-keys',
                maxAgeSeconds: NEW_KEY_TTL_MS / 1000,
                secure: ctx.web.secureCookies(),
              }),
            ],
          });
        } catch (err) {
          if (err instanceof ApiError && err.code === 'validation_failed')
            return keysPage(ctx, { form: f, errors: describeError(err), status: 422 });
          throw err;
        }
      }),
      { parse: 'text' },
    )
    .post(
      '/settings/api-keys/:id/revoke',
      pageRoute(web, 'keys.manage', async (ctx) => {
        const id = ctx.params.id ?? '';
        const own = (await listApiKeys(ctx.em, ctx.signedIn.organization.id)).some((k) => k.id === id);
        if (!own) throw errors.notFound('API key');
        await revokeApiKey(ctx.em, id, ctx.now);
        return redirect('/settings/api-keys?notice=revoked');
      }),
      { parse: 'text' },
    );
}
