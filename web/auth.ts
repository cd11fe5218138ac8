// Signing in and out. The sign-in form has no session yet, so its CSRF token is a double-submit:
// a random value in an HttpOnly cookie that the form must repeat. Failed attempts are limited per
// (email, client address) and per address, in Postgres (services/sign-in-throttle.ts), so
// passwords cannot be guessed at full speed and nobody elsewhere can lock a user out.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { router } from '../http/router.ts';
import { authenticateUser, createSession, deleteSession, normalizeEmail, switchOrganization } from '../services/users.ts';
import { errors } from '../lib/errors.ts';
import { beginSignIn, clientAddress, signInSucceeded } from '../services/sign-in-throttle.ts';
import {
  clearSessionCookie,
  formBody,
  originAllowed,
  pageRoute,
  publicRoute,
  SESSION_COOKIE,
  sessionCookie,
  TZ_COOKIE,
  type RequestContext,
  type RouteInput,
  type Web,
} from './context.ts';
import { html } from './html.ts';
import { htmlResponse, redirect, safeNextPath, serializeCookie } from './http.ts';
import { layout } from './layout.ts';
import { setUserTimeZone } from './settings.ts';
import { isTimeZone } from './time.ts';
import { canonicalTimeZone } from '../lib/zoned-time.ts';

const SIGNIN_COOKIE = 'pp_signin';

/** The socket's peer address of each sign-in request (Elysia's `server`; none under app.handle). */
const peers = new WeakMap<Request, string | null>();
type SocketInput = RouteInput & { server?: { requestIP(request: Request): { address: string } | null } | null };
const notePeer = (handler: (input: RouteInput) => Promise<Response>) => (input: SocketInput) => {
  peers.set(input.request, input.server?.requestIP(input.request)?.address ?? null);
  return handler(input);
};

function signInPage(
  ctx: RequestContext,
  o: { token: string; next: string; email?: string; error?: string; status?: number; cookies?: string[] },
): Response {
  const body = html`<section class="auth-card" aria-labelledby="sign-in-title">
  <h1 id="sign-in-title">Sign in to Postpilot</h1>
  ${o.error ? html`<p class="form-errors" role="alert" data-testid="sign-in-error">${o.error}</p>` : ''}
  <form method="post" action="/sign-in" data-testid="sign-in-form">
    <input type="hidden" name="_csrf" value="${o.token}">
    <input type="hidden" name="next" value="${o.next}">
    <div class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${o.email ?? ''}" data-testid="sign-in-email">
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024" data-testid="sign-in-password">
    </div>
    <button type="submit" class="primary" data-testid="sign-in-submit">Sign in</button>
  </form>
</section>`;
  return htmlResponse(layout({ title: 'Sign in', body, tz: ctx.tz }), { status: o.status ?? 200, cookies: o.cookies });
}

function sameToken(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function authRoutes(web: Web) {
  const preToken = (ctx: RequestContext) => {
    const existing = ctx.cookies.get(SIGNIN_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, cookies: [] as string[] };
    const token = randomBytes(32).toString('base64url');
    return {
      token,
      cookies: [serializeCookie(SIGNIN_COOKIE, token, { maxAgeSeconds: 3600, httpOnly: true, secure: web.secureCookies() })],
    };
  };

  return (
    router()
      .get(
        '/sign-in',
        publicRoute(web, (ctx) => {
          const next = safeNextPath(ctx.url.searchParams.get('next'));
          if (ctx.signedIn) return redirect(next);
          const { token, cookies } = preToken(ctx);
          return signInPage(ctx, { token, next, cookies });
        }),
      )
      .post(
        '/sign-in',
        notePeer(
          publicRoute(web, async (ctx) => {
            // Read by the web app's body parser, at most SIGNED_OUT_BODY_BYTES (web/context.ts).
            const form = formBody(ctx.body);
            const next = safeNextPath(form.get('next'));
            const email = (form.get('email') ?? '').slice(0, 320);
            const cookieToken = ctx.cookies.get(SIGNIN_COOKIE);
            if (!originAllowed(web, ctx.request) || !sameToken(cookieToken, form.get('_csrf'))) {
              const { token, cookies } = preToken(ctx);
              return signInPage(ctx, {
                token,
                cookies,
                next,
                email,
                status: 403,
                error: 'The sign-in form expired or cookies are blocked. Please try again.',
              });
            }
            const key = normalizeEmail(email);
            const address = clientAddress(ctx.request, peers.get(ctx.request), web.options().trustProxyHops ?? 0);
            const attempt = await beginSignIn(ctx.em, key, address, ctx.now);
            if (!attempt.allowed) {
              const seconds = Math.max(1, Math.ceil((attempt.retryAt.getTime() - ctx.now.getTime()) / 1000));
              const minutes = Math.ceil(seconds / 60);
              const error = `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
              const page = signInPage(ctx, { token: cookieToken!, next, email, status: 429, error });
              page.headers.set('retry-after', String(seconds));
              return page;
            }
            const user = await authenticateUser(ctx.em, email, form.get('password') ?? '');
            if (!user)
              return signInPage(ctx, { token: cookieToken!, next, email, status: 401, error: 'The email or password is not correct.' });
            await signInSucceeded(ctx.em, key, address);
            // First sign-in: the person's zone starts as the browser's (app.js wrote it on this form's page).
            const browserZone = ctx.cookies.get(TZ_COOKIE);
            if (!user.timeZone && isTimeZone(browserZone)) await setUserTimeZone(ctx.em, user.id, canonicalTimeZone(browserZone), true);
            const session = await createSession(ctx.em, user, ctx.now);
            return redirect(next, {
              cookies: [
                sessionCookie(web, session.token, session.expiresAt, ctx.now),
                serializeCookie(SIGNIN_COOKIE, '', { maxAgeSeconds: 0, httpOnly: true, secure: web.secureCookies() }),
              ],
            });
          }),
        ),
        { parse: 'text' },
      )
      .post(
        '/sign-out',
        pageRoute(web, 'read', async (ctx) => {
          await deleteSession(ctx.em, ctx.cookies.get(SESSION_COOKIE) ?? '');
          return redirect('/sign-in', { cookies: [clearSessionCookie(web)] });
        }),
        { parse: 'text' },
      )
      // The organization switcher (a person in several): the session opens the one chosen.
      .post(
        '/session/organization',
        pageRoute(web, 'read', async (ctx) => {
          const chosen = ctx.form.get('organizationId') ?? '';
          if (!(await switchOrganization(ctx.em, ctx.signedIn.session, chosen))) throw errors.notFound('organization');
          return redirect('/calendar');
        }),
        { parse: 'text' },
      )
  );
}
