// OAuth 2.0 authorization-code flows that connect channels (RFC 6749, PKCE RFC 7636 where the
// platform supports it). Each platform's authorize and token endpoints can be overridden
// (X_AUTHORIZE_URL, X_TOKEN_URL, …) so tests point them at a local fake provider.
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, randomBytes } from 'node:crypto';
import { OAuthGrant, type IOAuthGrant } from '../db/entities/index.ts';
import { sql } from '../db/sql.ts';
import type { Config } from '../lib/config.ts';
import { apiVersionOf } from '../platforms/api-versions.ts';
import { PLATFORM_INFO, type Platform } from '../platforms/catalog.ts';

type Settings = Config['platforms'];

export const OAUTH_PLATFORMS = ['X', 'LINKEDIN', 'REDDIT', 'PINTEREST', 'YOUTUBE', 'TIKTOK', 'FACEBOOK', 'INSTAGRAM', 'THREADS'] as const;
export type OAuthPlatform = (typeof OAUTH_PLATFORMS)[number];
export const isOAuthPlatform = (p: string): p is OAuthPlatform => (OAUTH_PLATFORMS as readonly string[]).includes(p);

/** How long a started flow may take, and how long the follow-up form may wait. */
export const GRANT_TTL_MS = 15 * 60 * 1000;

interface Provider {
  /** Prefix of the URL overrides: `${prefix}_AUTHORIZE_URL`, `${prefix}_TOKEN_URL`. */
  urlPrefix: string;
  authorizeUrl: (s: Settings) => string;
  tokenUrl: (s: Settings) => string;
  clientId: (s: Settings) => string | undefined;
  clientSecret: (s: Settings) => string | undefined;
  /** The env names, for "set these to enable" messages. */
  clientEnv: [string, string];
  /** Whether the app may work without a secret (X public clients with PKCE). */
  secretOptional?: boolean;
  /** TikTok calls the client id `client_key`. */
  idParam?: 'client_id' | 'client_key';
  scopes: string[];
  scopeSeparator?: string;
  pkce: boolean;
  /** basic: HTTP Basic client authentication; body: client_id/client_secret in the form. */
  clientAuth: 'basic' | 'body';
  extraAuthorize?: Record<string, string>;
  /** Account id found in the token response (Threads/Instagram `user_id`, LinkedIn's id_token `sub`). */
  accountFromToken?: (body: Record<string, unknown>) => string | undefined;
  /** Turns the first token into the one to store (Meta's long-lived tokens); best effort. */
  upgrade?: (token: TokenSet, s: Settings) => Promise<TokenSet>;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: string;
  [k: string]: unknown;
}

const graphVersion = (s: Settings) => apiVersionOf('FACEBOOK', s);
const trim = (u: string) => u.replace(/\/+$/, '');

function jwtSub(idToken: unknown): string | undefined {
  if (typeof idToken !== 'string') return undefined;
  try {
    const payload = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof payload.sub === 'string' && payload.sub ? payload.sub : undefined;
  } catch {
    return undefined;
  }
}

const userId = (b: Record<string, unknown>) =>
  typeof b.user_id === 'string' || typeof b.user_id === 'number' ? String(b.user_id) : undefined;

/** Meta's short-lived user tokens last an hour; exchange them for the long-lived kind (about 60 days). */
function metaExchange(
  url: (s: Settings) => string,
  grantType: string,
  secret: (s: Settings) => string | undefined,
  extra: (s: Settings) => Record<string, string> = () => ({}),
) {
  return async (token: TokenSet, s: Settings): Promise<TokenSet> => {
    const q = new URLSearchParams({ grant_type: grantType, client_secret: secret(s) ?? '', ...extra(s) });
    q.set(grantType === 'fb_exchange_token' ? 'fb_exchange_token' : 'access_token', token.accessToken);
    try {
      const res = await fetch(`${url(s)}?${q}`, { signal: AbortSignal.timeout(15_000) });
      const body = (await res.json()) as { access_token?: unknown; expires_in?: unknown };
      if (!res.ok || typeof body.access_token !== 'string') return token;
      const expiresIn = Number(body.expires_in);
      return {
        ...token,
        accessToken: body.access_token,
        ...(expiresIn > 0 ? { expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() } : {}),
      };
    } catch {
      return token; // keep the short-lived token; reconnecting later fixes it
    }
  };
}

const metaId = (own: 'INSTAGRAM_APP_ID' | 'THREADS_APP_ID' | null) => (s: Settings) => (own ? s[own] : undefined) ?? s.META_APP_ID;
const metaSecret = (own: 'INSTAGRAM_APP_SECRET' | 'THREADS_APP_SECRET' | null) => (s: Settings) =>
  (own ? s[own] : undefined) ?? s.META_APP_SECRET;

export const PROVIDERS: Record<OAuthPlatform, Provider> = {
  X: {
    urlPrefix: 'X',
    authorizeUrl: (s) => s.X_AUTHORIZE_URL ?? 'https://x.com/i/oauth2/authorize',
    tokenUrl: (s) => s.X_TOKEN_URL ?? 'https://api.x.com/2/oauth2/token',
    clientId: (s) => s.X_CLIENT_ID,
    clientSecret: (s) => s.X_CLIENT_SECRET,
    clientEnv: ['X_CLIENT_ID', 'X_CLIENT_SECRET'],
    secretOptional: true,
    // tweet.moderate.write: hiding replies (the inbox).
    scopes: ['tweet.read', 'tweet.write', 'tweet.moderate.write', 'users.read', 'media.write', 'offline.access'],
    pkce: true,
    clientAuth: 'basic',
  },
  LINKEDIN: {
    urlPrefix: 'LINKEDIN',
    authorizeUrl: (s) => s.LINKEDIN_AUTHORIZE_URL ?? 'https://www.linkedin.com/oauth/v2/authorization',
    tokenUrl: (s) => s.LINKEDIN_TOKEN_URL ?? 'https://www.linkedin.com/oauth/v2/accessToken',
    clientId: (s) => s.LINKEDIN_CLIENT_ID,
    clientSecret: (s) => s.LINKEDIN_CLIENT_SECRET,
    clientEnv: ['LINKEDIN_CLIENT_ID', 'LINKEDIN_CLIENT_SECRET'],
    scopes: ['openid', 'profile', 'w_member_social'],
    // LinkedIn offers PKCE to native clients only; web apps authenticate with the secret.
    pkce: false,
    clientAuth: 'body',
    accountFromToken: (b) => {
      const sub = jwtSub(b.id_token);
      return sub ? `urn:li:person:${sub}` : undefined;
    },
  },
  REDDIT: {
    urlPrefix: 'REDDIT',
    authorizeUrl: (s) => s.REDDIT_AUTHORIZE_URL ?? 'https://www.reddit.com/api/v1/authorize',
    tokenUrl: (s) => s.REDDIT_TOKEN_URL ?? 'https://www.reddit.com/api/v1/access_token',
    clientId: (s) => s.REDDIT_CLIENT_ID,
    clientSecret: (s) => s.REDDIT_CLIENT_SECRET,
    clientEnv: ['REDDIT_CLIENT_ID', 'REDDIT_CLIENT_SECRET'],
    // flair: a subreddit's link flairs, read for what a post there may carry; edit: deleting a reply (the inbox).
    scopes: ['identity', 'submit', 'read', 'history', 'flair', 'edit'],
    pkce: false,
    clientAuth: 'basic',
    extraAuthorize: { duration: 'permanent' },
  },
  PINTEREST: {
    urlPrefix: 'PINTEREST',
    authorizeUrl: (s) => s.PINTEREST_AUTHORIZE_URL ?? 'https://www.pinterest.com/oauth/',
    tokenUrl: (s) => s.PINTEREST_TOKEN_URL ?? 'https://api.pinterest.com/v5/oauth/token',
    clientId: (s) => s.PINTEREST_CLIENT_ID,
    clientSecret: (s) => s.PINTEREST_CLIENT_SECRET,
    clientEnv: ['PINTEREST_CLIENT_ID', 'PINTEREST_CLIENT_SECRET'],
    scopes: ['boards:read', 'pins:read', 'pins:write'],
    scopeSeparator: ',',
    pkce: false,
    clientAuth: 'basic',
  },
  YOUTUBE: {
    urlPrefix: 'GOOGLE',
    authorizeUrl: (s) => s.GOOGLE_AUTHORIZE_URL ?? 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: (s) => s.GOOGLE_TOKEN_URL ?? 'https://oauth2.googleapis.com/token',
    clientId: (s) => s.GOOGLE_CLIENT_ID,
    clientSecret: (s) => s.GOOGLE_CLIENT_SECRET,
    clientEnv: ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
    // force-ssl: the first comment under a video (commentThreads.insert) needs it.
    scopes: [
      'https://www.googleapis.com/auth/youtube.upload',
      'https://www.googleapis.com/auth/youtube.readonly',
      'https://www.googleapis.com/auth/youtube.force-ssl',
    ],
    pkce: true,
    clientAuth: 'body',
    // A refresh token is only issued with offline access (and again only with consent).
    extraAuthorize: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  },
  TIKTOK: {
    urlPrefix: 'TIKTOK',
    authorizeUrl: (s) => s.TIKTOK_AUTHORIZE_URL ?? 'https://www.tiktok.com/v2/auth/authorize/',
    tokenUrl: (s) => s.TIKTOK_TOKEN_URL ?? 'https://open.tiktokapis.com/v2/oauth/token/',
    clientId: (s) => s.TIKTOK_CLIENT_KEY,
    clientSecret: (s) => s.TIKTOK_CLIENT_SECRET,
    clientEnv: ['TIKTOK_CLIENT_KEY', 'TIKTOK_CLIENT_SECRET'],
    idParam: 'client_key',
    scopes: ['user.info.basic', 'video.publish', 'video.upload', 'video.list'],
    scopeSeparator: ',',
    // TikTok's web Login Kit authenticates with the client secret (PKCE is for mobile/desktop).
    pkce: false,
    clientAuth: 'body',
  },
  FACEBOOK: {
    urlPrefix: 'FACEBOOK',
    authorizeUrl: (s) => s.FACEBOOK_AUTHORIZE_URL ?? `https://www.facebook.com/${graphVersion(s)}/dialog/oauth`,
    tokenUrl: (s) => s.FACEBOOK_TOKEN_URL ?? `https://graph.facebook.com/${graphVersion(s)}/oauth/access_token`,
    clientId: metaId(null),
    clientSecret: metaSecret(null),
    clientEnv: ['META_APP_ID', 'META_APP_SECRET'],
    // pages_read_user_content and pages_manage_engagement: reading, answering, hiding and deleting comments (the inbox).
    scopes: ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement', 'pages_read_user_content', 'pages_manage_engagement'],
    scopeSeparator: ',',
    pkce: false,
    clientAuth: 'body',
    upgrade: metaExchange(
      (s) => `${trim(s.FACEBOOK_GRAPH_URL ?? 'https://graph.facebook.com')}/${graphVersion(s)}/oauth/access_token`,
      'fb_exchange_token',
      metaSecret(null),
      (s) => ({ client_id: s.META_APP_ID ?? '' }),
    ),
  },
  INSTAGRAM: {
    urlPrefix: 'INSTAGRAM',
    authorizeUrl: (s) => s.INSTAGRAM_AUTHORIZE_URL ?? 'https://www.instagram.com/oauth/authorize',
    tokenUrl: (s) => s.INSTAGRAM_TOKEN_URL ?? 'https://api.instagram.com/oauth/access_token',
    clientId: metaId('INSTAGRAM_APP_ID'),
    clientSecret: metaSecret('INSTAGRAM_APP_SECRET'),
    clientEnv: ['INSTAGRAM_APP_ID (or META_APP_ID)', 'INSTAGRAM_APP_SECRET (or META_APP_SECRET)'],
    // instagram_business_manage_comments: reading, answering, hiding and deleting comments (the inbox).
    scopes: ['instagram_business_basic', 'instagram_business_content_publish', 'instagram_business_manage_comments'],
    scopeSeparator: ',',
    pkce: false,
    clientAuth: 'body',
    accountFromToken: userId,
    upgrade: metaExchange(
      (s) => `${trim(s.INSTAGRAM_GRAPH_URL ?? 'https://graph.instagram.com')}/access_token`,
      'ig_exchange_token',
      metaSecret('INSTAGRAM_APP_SECRET'),
    ),
  },
  THREADS: {
    urlPrefix: 'THREADS',
    authorizeUrl: (s) => s.THREADS_AUTHORIZE_URL ?? 'https://threads.net/oauth/authorize',
    tokenUrl: (s) => s.THREADS_TOKEN_URL ?? 'https://graph.threads.net/oauth/access_token',
    clientId: metaId('THREADS_APP_ID'),
    clientSecret: metaSecret('THREADS_APP_SECRET'),
    clientEnv: ['THREADS_APP_ID (or META_APP_ID)', 'THREADS_APP_SECRET (or META_APP_SECRET)'],
    // The inbox: reading replies, hiding them, deleting ours.
    scopes: ['threads_basic', 'threads_content_publish', 'threads_read_replies', 'threads_manage_replies', 'threads_delete'],
    scopeSeparator: ',',
    pkce: false,
    clientAuth: 'body',
    accountFromToken: userId,
    upgrade: metaExchange(
      (s) => `${trim(s.THREADS_GRAPH_URL ?? 'https://graph.threads.net')}/access_token`,
      'th_exchange_token',
      metaSecret('THREADS_APP_SECRET'),
    ),
  },
};

/** The credential key naming the account (authorUrn, pageId, …), if the platform needs one. */
export function accountKey(platform: Platform): string | undefined {
  return PLATFORM_INFO[platform].credentials.find((k) => k !== 'accessToken');
}

/** Null when the app's client credentials are set; else the env names to set. */
export function missingClient(platform: OAuthPlatform, s: Settings): string[] | null {
  const p = PROVIDERS[platform];
  const missing: string[] = [];
  if (!p.clientId(s)) missing.push(p.clientEnv[0]);
  if (!p.secretOptional && !p.clientSecret(s)) missing.push(p.clientEnv[1]);
  return missing.length ? missing : null;
}

export const callbackPath = (platform: OAuthPlatform) => `/channels/oauth/${platform.toLowerCase()}/callback`;

const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const b64urlSha256 = (s: string) => createHash('sha256').update(s, 'ascii').digest('base64url');

export interface StartedFlow {
  authorizeUrl: string;
  grantId: string;
}

/** Stores the flow (hashed state, PKCE verifier) and returns where to send the browser. */
export async function startFlow(
  em: EntityManager,
  s: Settings,
  o: {
    platform: OAuthPlatform;
    userId: string;
    organizationId: string;
    channelId: string | null;
    channelName: string;
    redirectUri: string;
    now: Date;
  },
): Promise<StartedFlow> {
  const p = PROVIDERS[o.platform];
  const state = randomBytes(32).toString('base64url');
  // RFC 7636: 43–128 characters of [A-Z a-z 0-9 - . _ ~]; 48 random bytes in base64url are 64.
  const verifier = p.pkce ? randomBytes(48).toString('base64url') : null;
  const grant = em.create(OAuthGrant, {
    id: randomBytes(24).toString('base64url'),
    stateHash: sha256hex(state),
    user: o.userId,
    organization: o.organizationId,
    platform: o.platform,
    channelId: o.channelId,
    channelName: o.channelName,
    codeVerifier: verifier,
    redirectUri: o.redirectUri,
    credentialsEncrypted: null,
    expiresAt: new Date(o.now.getTime() + GRANT_TTL_MS),
    createdAt: o.now,
  });
  await em.flush();
  const q = new URLSearchParams({
    response_type: 'code',
    [p.idParam ?? 'client_id']: p.clientId(s) ?? '',
    redirect_uri: o.redirectUri,
    scope: p.scopes.join(p.scopeSeparator ?? ' '),
    state,
    ...p.extraAuthorize,
  });
  if (verifier) {
    q.set('code_challenge', b64urlSha256(verifier));
    q.set('code_challenge_method', 'S256');
  }
  const base = p.authorizeUrl(s);
  return { authorizeUrl: `${base}${base.includes('?') ? '&' : '?'}${q}`, grantId: grant.id };
}

/** Spends a state: the flow it belongs to, once; null when unknown, used, expired or another user's. */
export async function consumeState(em: EntityManager, state: string, userId: string, now: Date): Promise<IOAuthGrant | null> {
  if (!/^[A-Za-z0-9_-]{20,200}$/.test(state)) return null;
  // Bound to the user who started the flow: someone else's browser cannot spend (or use) it.
  const rows = await sql<{ id: string }>(
    em,
    'update oauth_grants set state_hash = null, expires_at = ? where state_hash = ? and user_id = ? and expires_at > ? returning id',
    [new Date(now.getTime() + GRANT_TTL_MS), sha256hex(state), userId, now],
  );
  if (!rows[0]) return null;
  return em.findOne(OAuthGrant, { id: rows[0].id }, { refresh: true });
}

/** A flow waiting for its follow-up form (tokens already exchanged), for this user only. */
export async function pendingGrant(em: EntityManager, id: string, userId: string, now: Date): Promise<IOAuthGrant | null> {
  if (!/^[A-Za-z0-9_-]{32}$/.test(id)) return null;
  const g = await em.findOne(OAuthGrant, { id, user: userId, stateHash: null });
  if (!g?.credentialsEncrypted || g.expiresAt.getTime() <= now.getTime()) return null;
  return g;
}

export class OAuthError extends Error {
  override name = 'OAuthError';
}

/** Exchanges the code at the platform's token endpoint (with the PKCE verifier) for tokens. */
export async function exchangeCode(
  platform: OAuthPlatform,
  s: Settings,
  grant: IOAuthGrant,
  code: string,
): Promise<{ tokens: TokenSet; account?: string }> {
  const p = PROVIDERS[platform];
  const id = p.clientId(s) ?? '';
  const secret = p.clientSecret(s);
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: grant.redirectUri });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (p.clientAuth === 'basic' && secret) {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    if (platform === 'X') form.set('client_id', id);
  } else {
    form.set(p.idParam ?? 'client_id', id);
    if (secret) form.set('client_secret', secret);
  }
  if (grant.codeVerifier) form.set('code_verifier', grant.codeVerifier);
  let res: Response;
  try {
    res = await fetch(p.tokenUrl(s), { method: 'POST', headers, body: form, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new OAuthError(`the token endpoint could not be reached (${(err as Error).message})`);
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  // Instagram and Threads send user_id as a JSON number above 2^53: JSON.parse would round it.
  const bigId = /"user_id"\s*:\s*(\d{16,})/.exec(text);
  if (bigId) body.user_id = bigId[1];
  if (!res.ok || typeof body.access_token !== 'string' || !body.access_token || body.error) {
    const reason = [body.error, body.error_description].filter((v) => typeof v === 'string' && v).join(': ') || `HTTP ${res.status}`;
    throw new OAuthError(`the platform refused the authorization code (${reason.slice(0, 300)})`);
  }
  let tokens: TokenSet = { accessToken: body.access_token };
  if (typeof body.refresh_token === 'string' && body.refresh_token) tokens.refreshToken = body.refresh_token;
  const expiresIn = Number(body.expires_in);
  if (expiresIn > 0) tokens.expiresAt = new Date(Date.now() + expiresIn * 1000).toISOString();
  if (platform === 'TIKTOK' && typeof body.open_id === 'string') tokens.openId = body.open_id;
  const account = p.accountFromToken?.(body);
  if (p.upgrade) tokens = await p.upgrade(tokens, s);
  return { tokens, account };
}

/** Facebook: the Page's own token (what the connector posts with), from the user token. */
export async function facebookPageToken(
  settings: Settings,
  pageId: string,
  userToken: string,
): Promise<{ accessToken: string; name?: string }> {
  const base = `${trim(settings.FACEBOOK_GRAPH_URL ?? 'https://graph.facebook.com')}/${graphVersion(settings)}`;
  const q = new URLSearchParams({ fields: 'access_token,name', access_token: userToken });
  const res = await fetch(`${base}/${encodeURIComponent(pageId)}?${q}`, { signal: AbortSignal.timeout(15_000) }).catch((err: Error) => {
    throw new OAuthError(`Facebook could not be reached (${err.message})`);
  });
  const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; name?: unknown; error?: { message?: string } };
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new OAuthError(
      `Facebook did not give a token for Page ${pageId}${body.error?.message ? ` (${body.error.message})` : ''}; is the account an admin of it?`,
    );
  }
  return { accessToken: body.access_token, name: typeof body.name === 'string' ? body.name : undefined };
}
