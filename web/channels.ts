// Channels: the list with statuses; connecting an account through the platform's OAuth flow
// (web/oauth.ts) or a credentials form (Mastodon, Bluesky, Telegram, Discord, or JSON by hand);
// reconnecting a channel (new credentials, status back to active).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { router } from '../http/router.ts';
import { Channel, OAuthGrant, type IChannel } from '../db/entities/index.ts';
import { decryptJson, encryptJson } from '../lib/crypto.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { createConnectors } from '../platforms/index.ts';
import { isPlatform, missingCredentials, PLATFORM_INFO, PLATFORMS, rulesFor, type Platform } from '../platforms/catalog.ts';
import { accountSettings, addChannel, probeChannel } from '../domain/channels.ts';
import type { AccountLimits } from '../platforms/types.ts';
import { DEFAULT_OUTBOUND } from '../lib/outbound.ts';
import { describeError, pageRoute, type PageContext, type Web } from './context.ts';
import { auditNote } from './audit.ts';
import { html, type SafeHtml } from './html.ts';
import { htmlResponse, redirect } from './http.ts';
import { formErrors, layout } from './layout.ts';
import {
  accountKey,
  callbackPath,
  consumeState,
  exchangeCode,
  facebookPageToken,
  isOAuthPlatform,
  missingClient,
  OAuthError,
  pendingGrant,
  startFlow,
  type OAuthPlatform,
} from './oauth.ts';
import { platformBadge, platformLabel, statusLabel } from './ui.ts';
import { channelsOf } from './post-actions.ts';

/** Forms of the token-based platforms: credential key → label, input type, hint. */
const CREDENTIAL_FIELDS: Partial<
  Record<Platform, { key: string; label: string; type: 'url' | 'text' | 'password'; hint?: string; value?: string }[]>
> = {
  MASTODON: [
    { key: 'instanceUrl', label: 'Instance URL', type: 'url', hint: 'e.g. https://mastodon.social' },
    {
      key: 'accessToken',
      label: 'Access token',
      type: 'password',
      hint: 'Preferences → Development → New application (scopes write:statuses, write:media)',
    },
  ],
  BLUESKY: [
    {
      key: 'service',
      label: 'Service URL',
      type: 'url',
      value: 'https://bsky.social',
      hint: 'your PDS; https://bsky.social for most accounts',
    },
    { key: 'identifier', label: 'Handle or DID', type: 'text', hint: 'e.g. alice.bsky.social' },
    { key: 'appPassword', label: 'App password', type: 'password', hint: 'Settings → Privacy and security → App passwords' },
  ],
  TELEGRAM: [
    { key: 'botToken', label: 'Bot token', type: 'password', hint: 'from @BotFather' },
    { key: 'chatId', label: 'Chat id', type: 'text', hint: 'e.g. @mychannel or -1001234567890; the bot must be an admin' },
  ],
  DISCORD: [{ key: 'webhookUrl', label: 'Webhook URL', type: 'password', hint: 'Channel settings → Integrations → Webhooks' }],
};

const URL_KEYS = new Set(['instanceUrl', 'service', 'webhookUrl']);

const ACCOUNT_HELP: Record<string, { label: string; hint: string }> = {
  authorUrn: { label: 'LinkedIn author URN', hint: 'urn:li:person:… for a member, urn:li:organization:… for a page you administer' },
  boardId: { label: 'Pinterest board id', hint: 'the numeric id of the board to pin to' },
  pageId: { label: 'Facebook Page id', hint: 'Page settings → About → Page ID; the account must manage the Page' },
  igUserId: { label: 'Instagram account id', hint: 'the professional account id' },
  threadsUserId: { label: 'Threads user id', hint: 'the numeric Threads user id' },
};

function platformParam(ctx: PageContext): Platform {
  const p = (ctx.params.platform ?? '').toUpperCase();
  if (!isPlatform(p)) throw errors.notFound('Platform');
  return p;
}

async function ownChannel(
  em: EntityManager,
  organizationId: string,
  id: string | null | undefined,
  platform?: Platform,
): Promise<IChannel | null> {
  if (!id) return null;
  const c = await em.findOne(Channel, { id, organization: organizationId });
  if (!c || (platform && c.platform !== platform)) throw errors.notFound('Channel');
  return c;
}

/** Replaces a channel's credentials and makes it active again; the row is locked like a token refresh. */
async function reconnectChannel(
  em: EntityManager,
  key: Buffer,
  organizationId: string,
  channelId: string,
  credentials: Record<string, unknown>,
  limits: AccountLimits,
): Promise<void> {
  await em.transactional(async (tx) => {
    const channel = await tx.findOne(Channel, { id: channelId, organization: organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!channel) throw errors.notFound('Channel');
    const missing = missingCredentials(channel.platform, credentials);
    if (missing.length) throw errors.validation(missing.map((k) => ({ path: `credentials.${k}`, message: 'required (non-empty string)' })));
    channel.credentialsEncrypted = encryptJson(key, credentials);
    channel.status = 'active';
    if (limits.maxChars !== undefined) channel.maxChars = limits.maxChars;
    if (limits.charactersReservedPerUrl !== undefined)
      channel.settings = { ...channel.settings, ...accountSettings(limits.charactersReservedPerUrl) };
  });
}

function needKey(web: Web): Buffer {
  const key = web.options().credentialsKey;
  if (!key) throw new ApiError('internal_error', 'CREDENTIALS_KEY is not configured: channels cannot be connected.');
  return key;
}

/**
 * Refuses a tenant-chosen address the service must not contact (422 on that credential) and
 * reads a Mastodon instance's max_characters, as `channel add` does; the platform default if unreachable.
 */
async function readLimits(web: Web, platform: Platform, credentials: Record<string, unknown>): Promise<AccountLimits> {
  const outbound = web.options().outbound ?? DEFAULT_OUTBOUND;
  return probeChannel(createConnectors(web.options().platforms, outbound), platform, credentials, outbound);
}

async function saveConnection(
  web: Web,
  ctx: PageContext,
  o: { platform: Platform; name: string; channelId: string | null; credentials: Record<string, unknown> },
): Promise<string> {
  const key = needKey(web);
  const limits = await readLimits(web, o.platform, o.credentials);
  const orgId = ctx.signedIn.organization.id;
  if (o.channelId) {
    await reconnectChannel(ctx.em, key, orgId, o.channelId, o.credentials, limits);
    auditNote(ctx, { resourceId: o.channelId, details: { platform: o.platform, reconnected: true } });
    return 'reconnected';
  }
  const channel = await addChannel(ctx.em, key, {
    organizationId: orgId,
    platform: o.platform,
    name: o.name,
    credentials: o.credentials,
    maxChars: limits.maxChars,
    charactersReservedPerUrl: limits.charactersReservedPerUrl,
  });
  auditNote(ctx, { resourceId: channel.id, details: { platform: o.platform, name: channel.name } });
  return 'connected';
}

function channelsPage(ctx: PageContext, channels: IChannel[]): Response {
  const notice =
    ({ connected: 'Channel connected.', reconnected: 'Channel reconnected.' } as Record<string, string>)[
      ctx.url.searchParams.get('notice') ?? ''
    ] ?? null;
  const body = html`<h1>Channels</h1>
${
  channels.length
    ? html`<table class="table" data-testid="channel-list">
  <caption class="visually-hidden">Connected channels</caption>
  <thead><tr><th scope="col">Channel</th><th scope="col">Platform</th><th scope="col">Status</th><th scope="col">Max characters</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${channels.map(
    (c) => html`<tr data-testid="channel-row" data-channel-id="${c.id}" data-platform="${c.platform}" data-status="${c.status}">
    <th scope="row">${platformBadge(c.platform)} <span data-testid="channel-name">${c.name}</span></th>
    <td>${platformLabel(c.platform)}</td>
    <td><span class="status status-${c.status}" data-testid="channel-status">${statusLabel(c.status)}</span></td>
    <td>${rulesFor(c.platform, c.maxChars).maxChars}</td>
    <td><a href="/channels/${c.id}/queue" data-testid="channel-queue">Queue<span class="visually-hidden"> of ${c.name}</span></a>
      <a href="/channels/connect/${c.platform.toLowerCase()}?channel=${c.id}" data-testid="channel-reconnect"${c.status === 'reauth_required' ? html` class="button primary"` : ''}>Reconnect<span class="visually-hidden"> ${c.name}</span></a></td>
  </tr>`,
  )}</tbody>
</table>`
    : html`<p data-testid="no-channels">No channels yet. Connect one below.</p>`
}
<h2 id="connect-title">Connect a channel</h2>
<ul class="connect-grid" aria-labelledby="connect-title">${PLATFORMS.map(
    (p) => html`<li>
  <a href="/channels/connect/${p.toLowerCase()}" data-testid="connect-${p}">${platformBadge(p)} ${platformLabel(p)}</a>
  <span class="hint">${isOAuthPlatform(p) ? 'sign in with the platform' : 'credentials'}</span>
</li>`,
  )}</ul>`;
  return htmlResponse(layout({ title: 'Channels', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'channels', notice }));
}

interface ConnectState {
  platform: Platform;
  channel: IChannel | null;
  errors: string[];
  /** Non-secret values to show again after an error. */
  values: Record<string, string>;
}

function credentialsForm(ctx: PageContext, s: ConnectState): SafeHtml {
  const fields = CREDENTIAL_FIELDS[s.platform];
  return html`<form method="post" action="/channels/connect/${s.platform.toLowerCase()}" class="stack" data-testid="credentials-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  ${s.channel ? html`<input type="hidden" name="channelId" value="${s.channel.id}">` : nameField(s, isOAuthPlatform(s.platform) ? 'channel-name-manual' : 'channel-name')}
  ${
    fields
      ? fields.map(
          (f) => html`<div class="field">
    <label for="cred-${f.key}">${f.label}</label>
    <input id="cred-${f.key}" name="cred_${f.key}" type="${f.type}" required autocomplete="off" value="${f.type === 'password' ? '' : (s.values[`cred_${f.key}`] ?? f.value ?? '')}" data-testid="credential-${f.key}"${f.hint ? html` aria-describedby="hint-${f.key}"` : ''}>
    ${f.hint ? html`<p class="hint" id="hint-${f.key}">${f.hint}</p>` : ''}
  </div>`,
        )
      : html`<div class="field">
    <label for="credentials-json">Credentials (JSON)</label>
    <textarea id="credentials-json" name="credentialsJson" rows="6" required data-testid="credentials-json" aria-describedby="credentials-json-hint"></textarea>
    <p class="hint" id="credentials-json-hint">Keys: ${PLATFORM_INFO[s.platform].credentials.join(', ')}${isOAuthPlatform(s.platform) ? ', optional refreshToken and expiresAt' : ''}.</p>
  </div>`
  }
  <button type="submit" class="primary" data-testid="credentials-submit">${s.channel ? 'Save new credentials' : 'Connect'}</button>
</form>`;
}

/** `id` differs between the OAuth form and the manual form shown on the same page. */
function nameField(s: ConnectState, id = 'channel-name'): SafeHtml {
  return html`<div class="field">
    <label for="${id}">Channel name</label>
    <input id="${id}" name="name" required maxlength="200" value="${s.values.name ?? `${platformLabel(s.platform)} account`}" data-testid="${id === 'channel-name' ? 'channel-name-input' : `${id}-input`}">
  </div>`;
}

function connectPage(web: Web, ctx: PageContext, s: ConnectState, status = 200): Response {
  const label = platformLabel(s.platform);
  const title = s.channel ? `Reconnect ${s.channel.name}` : `Connect ${label}`;
  let main: SafeHtml;
  if (isOAuthPlatform(s.platform)) {
    const missing = missingClient(s.platform, web.options().platforms);
    const redirectUri = `${web.options().publicBaseUrl}${callbackPath(s.platform)}`;
    main = html`${
      missing
        ? html`<p class="notice" data-testid="oauth-not-configured">Connecting ${label} accounts is not set up on this server: the administrator must set ${missing.join(' and ')} (and register the redirect URI <code>${redirectUri}</code> with ${label}).</p>`
        : html`<form method="post" action="/channels/oauth/${s.platform.toLowerCase()}/start" class="stack" data-testid="oauth-start-form">
    <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
    ${s.channel ? html`<input type="hidden" name="channelId" value="${s.channel.id}">` : nameField(s)}
    <p>You will be sent to ${label} to allow Postpilot to post for the account, then brought back here.</p>
    <button type="submit" class="primary" data-testid="oauth-start">Continue to ${label}</button>
  </form>`
    }
  <details class="manual" data-testid="manual-credentials">
    <summary>Enter tokens by hand instead</summary>
    ${credentialsForm(ctx, s)}
  </details>`;
  } else {
    main = credentialsForm(ctx, s);
  }
  const body = html`<h1>${platformBadge(s.platform)} ${title}</h1>
${formErrors(s.errors)}
${s.channel?.status === 'reauth_required' ? html`<p class="notice" data-testid="reauth-notice">${label} rejected this channel's credentials. Connect the account again to resume publishing.</p>` : ''}
${main}
<p><a href="/channels">Back to channels</a></p>`;
  return htmlResponse(layout({ title, body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'channels' }), { status });
}

function credentialsFromForm(platform: Platform, form: URLSearchParams): Record<string, unknown> {
  const fields = CREDENTIAL_FIELDS[platform];
  if (!fields) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(form.get('credentialsJson') ?? '');
    } catch {
      throw errors.validation([{ path: 'credentials', message: 'must be a JSON object' }]);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw errors.validation([{ path: 'credentials', message: 'must be a JSON object' }]);
    return parsed as Record<string, unknown>;
  }
  const out: Record<string, string> = {};
  const bad: FieldError[] = [];
  for (const f of fields) {
    const v = (form.get(`cred_${f.key}`) ?? '').trim();
    out[f.key] = v;
    if (v && URL_KEYS.has(f.key) && !/^https?:\/\/[^\s]+$/i.test(v))
      bad.push({ path: `credentials.${f.key}`, message: 'must be an http(s) URL' });
  }
  if (out.instanceUrl) out.instanceUrl = out.instanceUrl.replace(/\/+$/, '');
  if (bad.length) throw errors.validation(bad);
  return out;
}

async function completeOAuth(
  web: Web,
  ctx: PageContext,
  grant: { platform: Platform; channelId: string | null; channelName: string },
  credentials: Record<string, unknown>,
): Promise<Response> {
  const notice = await saveConnection(web, ctx, {
    platform: grant.platform,
    name: grant.channelName,
    channelId: grant.channelId,
    credentials,
  });
  return redirect(`/channels?notice=${notice}`);
}

function finishPage(
  ctx: PageContext,
  grantId: string,
  platform: Platform,
  key: string,
  errs: string[],
  value = '',
  status = 200,
): Response {
  const help = ACCOUNT_HELP[key] ?? { label: key, hint: '' };
  const body = html`<h1>${platformBadge(platform)} Finish connecting ${platformLabel(platform)}</h1>
${formErrors(errs)}
<p>${platformLabel(platform)} authorized Postpilot. One more thing is needed to know where to post.</p>
<form method="post" action="/channels/oauth/finish/${grantId}" class="stack" data-testid="oauth-finish-form">
  <input type="hidden" name="_csrf" value="${ctx.signedIn.session.csrfToken}">
  <div class="field">
    <label for="account">${help.label}</label>
    <input id="account" name="account" required maxlength="200" value="${value}" data-testid="oauth-account" aria-describedby="account-hint">
    <p class="hint" id="account-hint">${help.hint}</p>
  </div>
  <button type="submit" class="primary" data-testid="oauth-finish">Connect</button>
</form>`;
  return htmlResponse(layout({ title: 'Finish connecting', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'channels' }), { status });
}

function failedConnection(ctx: PageContext, message: string, status: number): Response {
  const body = html`<section class="error-page" data-testid="error-page">
  <h1>The channel was not connected</h1>
  <p data-testid="error-message">${message}</p>
  <p><a href="/channels">Back to channels</a></p>
</section>`;
  return htmlResponse(layout({ title: 'Not connected', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'channels' }), { status });
}

export function channelRoutes(web: Web) {
  return router()
    .get(
      '/channels',
      pageRoute(web, 'read', async (ctx) => channelsPage(ctx, await channelsOf(ctx.em, ctx.signedIn.organization.id))),
    )
    .get(
      '/channels/connect/:platform',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const platform = platformParam(ctx);
        const channel = await ownChannel(ctx.em, ctx.signedIn.organization.id, ctx.url.searchParams.get('channel'), platform);
        return connectPage(web, ctx, { platform, channel, errors: [], values: {} });
      }),
    )
    .post(
      '/channels/connect/:platform',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const platform = platformParam(ctx);
        const channel = await ownChannel(ctx.em, ctx.signedIn.organization.id, ctx.form.get('channelId'), platform);
        const values: Record<string, string> = { name: ctx.form.get('name') ?? '' };
        for (const [k, v] of ctx.form) if (k.startsWith('cred_')) values[k] = v;
        try {
          const credentials = credentialsFromForm(platform, ctx.form);
          const notice = await saveConnection(web, ctx, { platform, name: values.name!, channelId: channel?.id ?? null, credentials });
          return redirect(`/channels?notice=${notice}`);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'validation_failed')
            return connectPage(web, ctx, { platform, channel, errors: describeError(err), values }, 422);
          throw err;
        }
      }),
      { parse: 'text' },
    )
    .post(
      '/channels/oauth/:platform/start',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const platform = platformParam(ctx);
        if (!isOAuthPlatform(platform)) throw errors.notFound('OAuth flow');
        const settings = web.options().platforms;
        const missing = missingClient(platform, settings);
        if (missing) throw new ApiError('conflict', `Connecting ${platformLabel(platform)} is not set up: set ${missing.join(' and ')}.`);
        const orgId = ctx.signedIn.organization.id;
        const channel = await ownChannel(ctx.em, orgId, ctx.form.get('channelId'), platform);
        const name = channel?.name ?? (ctx.form.get('name') ?? '').trim();
        if (!name || name.length > 200) {
          return connectPage(web, ctx, { platform, channel, errors: ['Channel name: must be 1 to 200 characters'], values: { name } }, 422);
        }
        const flow = await startFlow(ctx.em, settings, {
          platform,
          userId: ctx.signedIn.user.id,
          organizationId: orgId,
          channelId: channel?.id ?? null,
          channelName: name,
          redirectUri: `${web.options().publicBaseUrl}${callbackPath(platform)}`,
          now: ctx.now,
        });
        return redirect(flow.authorizeUrl);
      }),
      { parse: 'text' },
    )
    .get(
      '/channels/oauth/:platform/callback',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const platform = platformParam(ctx);
        if (!isOAuthPlatform(platform)) throw errors.notFound('OAuth flow');
        const q = ctx.url.searchParams;
        const grant = await consumeState(ctx.em, q.get('state') ?? '', ctx.signedIn.user.id, ctx.now);
        // Another user's state is as unknown as a forged one: say nothing more.
        if (!grant || grant.user !== ctx.signedIn.user.id || grant.platform !== platform) {
          return failedConnection(
            ctx,
            'This connection link is invalid, has expired or was already used. Start again from the Channels page.',
            400,
          );
        }
        const settings = web.options().platforms;
        try {
          const denied = q.get('error');
          if (denied)
            return failedConnection(
              ctx,
              `${platformLabel(platform)} did not authorize the connection: ${q.get('error_description') ?? denied}.`,
              400,
            );
          const code = q.get('code');
          if (!code) return failedConnection(ctx, `${platformLabel(platform)} sent no authorization code.`, 400);
          let tokens: Record<string, unknown>;
          let account: string | undefined;
          try {
            ({ tokens, account } = await exchangeCode(platform, settings, grant, code));
          } catch (err) {
            if (err instanceof OAuthError)
              return failedConnection(ctx, `Connecting ${platformLabel(platform)} failed: ${err.message}.`, 502);
            throw err;
          }
          const key = accountKey(platform);
          const existing = grant.channelId ? await ownChannel(ctx.em, grant.organization, grant.channelId, platform) : null;
          if (key && !account && existing) {
            // Reconnecting: the account is the one the channel already posts as.
            const old = decryptJson<Record<string, unknown>>(needKey(web), existing.credentialsEncrypted);
            if (typeof old[key] === 'string' && old[key]) account = old[key] as string;
          }
          if (key && !account) {
            grant.credentialsEncrypted = encryptJson(needKey(web), tokens);
            await ctx.em.flush();
            return redirect(`/channels/oauth/finish/${grant.id}`);
          }
          let credentials: Record<string, unknown> = key ? { ...tokens, [key]: account } : tokens;
          if (platform === 'FACEBOOK') {
            try {
              credentials = await withPageToken(settings, credentials);
            } catch (err) {
              if (err instanceof OAuthError) return failedConnection(ctx, `Connecting Facebook failed: ${err.message}.`, 502);
              throw err;
            }
          }
          await ctx.em.nativeDelete(OAuthGrant, { id: grant.id });
          return completeOAuth(web, ctx, { platform, channelId: grant.channelId ?? null, channelName: grant.channelName }, credentials);
        } finally {
          if (!grant.credentialsEncrypted) await ctx.em.fork().nativeDelete(OAuthGrant, { id: grant.id });
        }
      }),
    )
    .get(
      '/channels/oauth/finish/:grant',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const grant = await pendingGrant(ctx.em, ctx.params.grant ?? '', ctx.signedIn.user.id, ctx.now);
        if (!grant)
          return failedConnection(ctx, 'This connection has expired or was already finished. Start again from the Channels page.', 404);
        return finishPage(ctx, grant.id, grant.platform, accountKey(grant.platform) ?? 'account', []);
      }),
    )
    .post(
      '/channels/oauth/finish/:grant',
      pageRoute(web, 'channels.manage', async (ctx) => {
        const grant = await pendingGrant(ctx.em, ctx.params.grant ?? '', ctx.signedIn.user.id, ctx.now);
        if (!grant)
          return failedConnection(ctx, 'This connection has expired or was already finished. Start again from the Channels page.', 404);
        const key = accountKey(grant.platform) ?? 'account';
        const account = (ctx.form.get('account') ?? '').trim();
        if (!account || account.length > 200)
          return finishPage(ctx, grant.id, grant.platform, key, [`${ACCOUNT_HELP[key]?.label ?? key}: required`], account, 422);
        const tokens = decryptJson<Record<string, unknown>>(needKey(web), grant.credentialsEncrypted!);
        let credentials: Record<string, unknown> = { ...tokens, [key]: account };
        if (grant.platform === 'FACEBOOK') {
          try {
            credentials = await withPageToken(web.options().platforms, credentials);
          } catch (err) {
            if (err instanceof OAuthError) return finishPage(ctx, grant.id, grant.platform, key, [err.message], account, 422);
            throw err;
          }
        }
        // Spend the grant first: a double submit must not create two channels.
        const deleted = await ctx.em.nativeDelete(OAuthGrant, { id: grant.id, user: ctx.signedIn.user.id });
        if (!deleted) return failedConnection(ctx, 'This connection was already finished.', 409);
        return completeOAuth(
          web,
          ctx,
          { platform: grant.platform, channelId: grant.channelId ?? null, channelName: grant.channelName },
          credentials,
        );
      }),
      { parse: 'text' },
    );
}

/** Facebook posts with the Page's token, fetched with the user token for the chosen Page. */
async function withPageToken(
  settings: Parameters<typeof facebookPageToken>[0],
  credentials: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const userToken = String(credentials.userAccessToken ?? credentials.accessToken);
  const page = await facebookPageToken(settings, String(credentials.pageId), userToken);
  return { ...credentials, userAccessToken: userToken, accessToken: page.accessToken };
}

export type { OAuthPlatform };
