// A local OAuth 2.0 authorization server (RFC 6749 authorization-code grant with PKCE, RFC 7636)
// standing in for a platform's authorize and token endpoints. The authorize endpoint approves
// at once and redirects back with code + state; the token endpoint checks the client's
// authentication (Basic or in the body), the redirect_uri, the single use of the code and the
// code_verifier against the code_challenge, and serves refresh grants with rotating tokens.
import { createHash, randomBytes } from 'node:crypto';

export interface FakeOAuthOptions {
  clientId?: string;
  /** null: a public client (PKCE only, no secret). */
  clientSecret?: string | null;
  /** TikTok names the client id `client_key`. */
  clientIdParam?: 'client_id' | 'client_key';
  /** Extra fields of every token answer (e.g. `user_id`, `open_id`, `id_token`). */
  tokenExtras?: Record<string, unknown>;
  /** Raw JSON members added to every token answer, for values JS numbers cannot hold (`"user_id": 17841400000000001`). */
  rawTokenMembers?: string;
  /** Answer 200 with `{error}` instead of 4xx (Reddit does that). */
  errorsAs200?: boolean;
  accessTokenTtlSeconds?: number;
}

export interface FakeAuthorization {
  code: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  extra: Record<string, string>;
  used: boolean;
}

export interface FakeExchange {
  grantType: string;
  clientAuth: 'basic' | 'body' | 'none';
  code: string | null;
  /** true: a verifier matched the challenge; false: missing or wrong; null: the code had no challenge. */
  pkceVerified: boolean | null;
  ok: boolean;
  error?: string;
}

export interface FakeOAuth {
  url: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string | null;
  authorizations: FakeAuthorization[];
  exchanges: FakeExchange[];
  validAccessTokens: Set<string>;
  validRefreshTokens: Set<string>;
  /** The next authorize request is denied (redirect with error=access_denied). */
  denyNext(): void;
  stop(): Promise<void>;
}

const b64urlSha256 = (s: string) => createHash('sha256').update(s, 'ascii').digest('base64url');
const token = (prefix: string) => `${prefix}_${randomBytes(18).toString('base64url')}`;

export async function startFakeOAuth(opts: FakeOAuthOptions = {}): Promise<FakeOAuth> {
  const clientId = opts.clientId ?? 'test-client';
  const clientSecret = opts.clientSecret === undefined ? 'test-secret' : opts.clientSecret;
  const idParam = opts.clientIdParam ?? 'client_id';
  const authorizations: FakeAuthorization[] = [];
  const exchanges: FakeExchange[] = [];
  const validAccessTokens = new Set<string>();
  const validRefreshTokens = new Set<string>();
  let deny = false;

  const fail = (status: number, error: string, description: string) =>
    Response.json({ error, error_description: description }, { status: opts.errorsAs200 ? 200 : status });

  function issue(): Response {
    const access = token('at');
    const refresh = token('rt');
    validAccessTokens.add(access);
    validRefreshTokens.add(refresh);
    const json = JSON.stringify({
      access_token: access,
      token_type: 'bearer',
      expires_in: opts.accessTokenTtlSeconds ?? 7200,
      refresh_token: refresh,
      scope: 'granted',
      ...opts.tokenExtras,
    });
    const body = opts.rawTokenMembers ? `${json.slice(0, -1)},${opts.rawTokenMembers}}` : json;
    return new Response(body, { headers: { 'content-type': 'application/json' } });
  }

  function authorize(url: URL): Response {
    const q = url.searchParams;
    if (q.get('response_type') !== 'code') return new Response('unsupported response_type', { status: 400 });
    if (q.get(idParam) !== clientId) return new Response('unknown client', { status: 400 });
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!/^https?:\/\//.test(redirectUri)) return new Response('bad redirect_uri', { status: 400 });
    const state = q.get('state') ?? '';
    const back = new URL(redirectUri);
    if (deny) {
      deny = false;
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'The user denied the request');
      back.searchParams.set('state', state);
      return Response.redirect(back.toString(), 302);
    }
    const method = q.get('code_challenge_method');
    if (q.get('code_challenge') && method !== 'S256' && method !== 'plain')
      return new Response('bad code_challenge_method', { status: 400 });
    const code = token('code');
    const known = new Set(['response_type', idParam, 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']);
    authorizations.push({
      code,
      clientId,
      redirectUri,
      scope: q.get('scope') ?? '',
      state,
      codeChallenge: q.get('code_challenge'),
      codeChallengeMethod: method,
      extra: Object.fromEntries([...q].filter(([k]) => !known.has(k))),
      used: false,
    });
    back.searchParams.set('code', code);
    back.searchParams.set('state', state);
    return Response.redirect(back.toString(), 302);
  }

  async function tokenEndpoint(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text());
    const grantType = form.get('grant_type') ?? '';
    // Client authentication: HTTP Basic, or the id (and secret) in the body.
    let auth: FakeExchange['clientAuth'] = 'none';
    let givenId: string | null = null;
    let givenSecret: string | null = null;
    const header = req.headers.get('authorization');
    if (header?.startsWith('Basic ')) {
      const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
      auth = 'basic';
      givenId = decodeURIComponent(id ?? '');
      givenSecret = decodeURIComponent(secret ?? '');
    } else if (form.get(idParam)) {
      auth = 'body';
      givenId = form.get(idParam);
      givenSecret = form.get('client_secret');
    }
    const record = (e: Omit<FakeExchange, 'grantType' | 'clientAuth'>) => exchanges.push({ grantType, clientAuth: auth, ...e });
    const clientOk = givenId === clientId && (clientSecret === null ? !givenSecret || auth === 'body' : givenSecret === clientSecret);
    if (!clientOk) {
      record({ code: form.get('code'), pkceVerified: null, ok: false, error: 'invalid_client' });
      return fail(401, 'invalid_client', 'Client authentication failed');
    }
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const a = authorizations.find((x) => x.code === code);
      if (!a || a.used) {
        record({ code, pkceVerified: null, ok: false, error: 'invalid_grant' });
        return fail(400, 'invalid_grant', 'The authorization code is invalid or was already used');
      }
      a.used = true;
      if (form.get('redirect_uri') !== a.redirectUri) {
        record({ code, pkceVerified: null, ok: false, error: 'invalid_grant' });
        return fail(400, 'invalid_grant', 'redirect_uri does not match the authorization request');
      }
      let pkceVerified: boolean | null = null;
      if (a.codeChallenge) {
        const verifier = form.get('code_verifier') ?? '';
        const valid = /^[A-Za-z0-9\-._~]{43,128}$/.test(verifier);
        const computed = a.codeChallengeMethod === 'plain' ? verifier : b64urlSha256(verifier);
        pkceVerified = valid && computed === a.codeChallenge;
        if (!pkceVerified) {
          record({ code, pkceVerified, ok: false, error: 'invalid_grant' });
          return fail(400, 'invalid_grant', 'PKCE verification failed');
        }
      }
      record({ code, pkceVerified, ok: true });
      return issue();
    }
    if (grantType === 'refresh_token') {
      const refresh = form.get('refresh_token') ?? '';
      if (!validRefreshTokens.delete(refresh)) {
        record({ code: null, pkceVerified: null, ok: false, error: 'invalid_grant' });
        return fail(400, 'invalid_grant', 'The refresh token is invalid');
      }
      record({ code: null, pkceVerified: null, ok: true });
      return issue();
    }
    record({ code: null, pkceVerified: null, ok: false, error: 'unsupported_grant_type' });
    return fail(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported`);
  }

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === 'GET' && url.pathname === '/authorize') return authorize(url);
      if (req.method === 'POST' && url.pathname === '/token') return tokenEndpoint(req);
      return new Response('not found', { status: 404 });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    url: base,
    authorizeUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    clientId,
    clientSecret,
    authorizations,
    exchanges,
    validAccessTokens,
    validRefreshTokens,
    denyNext: () => {
      deny = true;
    },
    stop: async () => {
      server.stop(true);
    },
  };
}
