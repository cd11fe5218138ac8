// Request handling shared by every web route: the signed-in session from its cookie, the
// viewer's time zone, CSRF and Origin checks on state-changing requests, error mapping — HTML
// pages for pages, the API's JSON error body for the JSON endpoints under /web/api — and the
// audit log of every change (web/audit.ts).
// Bodies are read only after the session is known, each with a limit (webBodyParser).
import type { EntityManager } from '@mikro-orm/postgresql';
import { bodyText, earlyStep, isBodyTooLarge, readBody, readJsonBody } from '../http/body.ts';
import { defaultLog, type AppDeps } from '../http/deps.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { authorize, type Action } from '../domain/access.ts';
import { csrfMatches, findSession, memberPrincipal, type SignedIn } from '../services/users.ts';
import { isMultipart, MAX_FORM_BYTES, multipartForm, parseCookies, parseForm, redirect, serializeCookie, htmlResponse } from './http.ts';
import { errorBody, layout } from './layout.ts';
import { defaultWebOptions, type WebOptions } from './options.ts';
import { DEFAULT_TZ, isTimeZone } from './time.ts';
import { auditWebChange, type RouteOrigin } from './audit.ts';

export const SESSION_COOKIE = 'pp_session';
/** Set by app.js from Intl.DateTimeFormat().resolvedOptions().timeZone; not HttpOnly. */
export const TZ_COOKIE = 'pp_tz';

/** The API's dependencies and the web app's own settings. */
export interface WebDeps extends AppDeps {
  /** The web application's settings (base URL, credentials key, OAuth apps): webOptions(config); the defaults when absent. */
  web?: WebOptions;
}

export interface Web {
  deps: WebDeps;
  options: () => WebOptions;
  now: () => Date;
  /** Cookies get `Secure` when the public base URL is https. */
  secureCookies: () => boolean;
  log: (entry: Record<string, unknown>) => void;
  /** What the body parser already found out about a request, for its handler (one lookup each). */
  requests: WeakMap<Request, { ctx: RequestContext; signedIn?: Promise<SignedInCookie | null> }>;
}

export function createWeb(deps: WebDeps): Web {
  let options: WebOptions | undefined = deps.web;
  const get = () => (options ??= defaultWebOptions());
  return {
    deps,
    options: get,
    now: deps.now ?? (() => new Date()),
    secureCookies: () => get().publicBaseUrl.startsWith('https://'),
    log: deps.log ?? defaultLog,
    requests: new WeakMap(),
  };
}

export function sessionCookie(web: Web, value: string, expiresAt: Date, now: Date): string {
  return serializeCookie(SESSION_COOKIE, value, {
    maxAgeSeconds: (expiresAt.getTime() - now.getTime()) / 1000,
    httpOnly: true,
    secure: web.secureCookies(),
  });
}

export const clearSessionCookie = (web: Web) =>
  serializeCookie(SESSION_COOKIE, '', { maxAgeSeconds: 0, httpOnly: true, secure: web.secureCookies() });

/** What an Elysia handler receives that the web routes use (`route`, `server`: for the audit log). */
export interface RouteInput extends RouteOrigin {
  request: Request;
  params?: Record<string, string>;
  body?: unknown;
}

export interface RequestContext {
  web: Web;
  request: Request;
  url: URL;
  params: Record<string, string>;
  cookies: Map<string, string>;
  em: EntityManager;
  now: Date;
  /**
   * The viewer's IANA time zone: `?tz=`, else (signed in) the user's own zone, else the pp_tz
   * cookie (the browser's), else UTC. See zoneOf.
   */
  tz: string;
}

export interface PageContext extends RequestContext {
  signedIn: SignedIn;
  /** The parsed form of a POST (empty for GET). */
  form: URLSearchParams;
}

export interface JsonContext extends RequestContext {
  signedIn: SignedIn;
  body: unknown;
}

/** Thrown to leave a handler with a redirect (e.g. to the sign-in page). */
export class RedirectSignal extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
  }
}

/** One per Request: the body parser and the handler share its EntityManager and clock. */
/** Elysia gives null for a path segment that is no valid percent-encoding ("/posts/%"): no such id. */
const pathParams = (params: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : '']));

export function requestContext(web: Web, input: RouteInput): RequestContext {
  const known = web.requests.get(input.request)?.ctx;
  if (known) return input.params ? { ...known, params: pathParams(input.params) } : known;
  const url = new URL(input.request.url);
  const cookies = parseCookies(input.request.headers.get('cookie'));
  const fromQuery = url.searchParams.get('tz');
  const fromCookie = cookies.get(TZ_COOKIE);
  const tz = isTimeZone(fromQuery) ? fromQuery : isTimeZone(fromCookie) ? fromCookie : DEFAULT_TZ;
  const ctx = {
    web,
    request: input.request,
    url,
    params: pathParams(input.params ?? {}),
    cookies,
    em: web.deps.orm.em.fork(),
    now: web.now(),
    tz,
  };
  web.requests.set(input.request, { ctx });
  return ctx;
}

/** `?tz=` wins (a link or a script naming its zone); then the person's saved zone; then the cookie's. */
export function zoneOf(ctx: RequestContext, signedIn: SignedIn | null): string {
  if (isTimeZone(ctx.url.searchParams.get('tz'))) return ctx.tz;
  const own = signedIn?.user.timeZone;
  return isTimeZone(own) ? own : ctx.tz;
}

export async function signedInFrom(ctx: RequestContext): Promise<SignedIn | null> {
  const value = ctx.cookies.get(SESSION_COOKIE);
  return value ? findSession(ctx.em, value, ctx.now) : null;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Browsers send Origin on every POST/PATCH/DELETE; when present it must be this service (a
 * second line behind the token). Sec-Fetch-Site: cross-site is refused outright.
 */
export function originAllowed(web: Web, request: Request): boolean {
  if (request.headers.get('sec-fetch-site') === 'cross-site') return false;
  const origin = request.headers.get('origin');
  if (origin === null) return true;
  const allowed = new Set([new URL(request.url).origin]);
  try {
    allowed.add(new URL(web.options().publicBaseUrl).origin);
  } catch {
    /* no usable base URL: the request's own origin only */
  }
  return allowed.has(origin);
}

export const csrfError = () =>
  new ApiError(
    'unauthorized',
    'The form or request is missing a valid CSRF token (or came from another site). Reload the page and try again.',
    { details: { reason: 'csrf' }, status: 403 },
  );

function statusTitle(status: number): string {
  return (
    (
      {
        400: 'Bad request',
        403: 'Not allowed',
        404: 'Not found',
        409: 'Cannot do that now',
        413: 'Too large',
        422: 'Check your input',
        429: 'Too many attempts',
      } as Record<number, string>
    )[status] ?? 'Something went wrong'
  );
}

/** Message of an ApiError with its field errors, for people. */
export function describeError(err: ApiError): string[] {
  const fields = (err.details as { fields?: { path: string; message: string }[] } | undefined)?.fields;
  if (err.code === 'validation_failed' && fields?.length) return fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message));
  return [err.message];
}

export function errorPage(_web: Web, status: number, message: string, signedIn: SignedIn | null, tz: string): Response {
  const title = statusTitle(status);
  return htmlResponse(layout({ title, body: errorBody(title, message), signedIn, tz }), { status });
}

function pageError(ctx: RequestContext, signedIn: SignedIn | null, err: unknown): Response {
  if (err instanceof RedirectSignal) return redirect(err.location);
  if (err instanceof ApiError) {
    if (err.code === 'unauthorized' && err.status === 401) return redirect(signInPath(ctx.url));
    return errorPage(ctx.web, err.status, describeError(err).join(' '), signedIn, zoneOf(ctx, signedIn));
  }
  const requestId = newRequestRef();
  ctx.web.log({
    level: 'error',
    requestId,
    method: ctx.request.method,
    path: ctx.url.pathname,
    error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
  });
  return errorPage(ctx.web, 500, `Something went wrong on our side (reference ${requestId}).`, signedIn, ctx.tz);
}

const newRequestRef = () => `web_${crypto.randomUUID().slice(0, 8)}`;

export const signInPath = (url: URL) => `/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`;

function withRenewal(web: Web, res: Response, signedIn: SignedInCookie | null, now: Date): Response {
  if (signedIn?.renewedUntil) res.headers.append('set-cookie', sessionCookie(web, signedIn.cookieValue, signedIn.renewedUntil, now));
  return res;
}

type SignedInCookie = SignedIn & { cookieValue: string };

/** Looked up once per request (by the body parser when the request has a body). */
function signedInWithCookie(ctx: RequestContext): Promise<SignedInCookie | null> {
  let known = ctx.web.requests.get(ctx.request);
  if (!known) ctx.web.requests.set(ctx.request, (known = { ctx }));
  known.signedIn ??= signedInFrom(ctx).then((found) => (found ? { ...found, cookieValue: ctx.cookies.get(SESSION_COOKIE)! } : null));
  return known.signedIn;
}

/** The largest body of a signed-in form or /web/api request: the composer's longest texts fit. */
export const WEB_BODY_BYTES = MAX_FORM_BYTES;
/** Without a session only the sign-in form is read (email, password, token, next path). */
export const SIGNED_OUT_BODY_BYTES = 16 * 1024;

const WEB_API_PATH = /^\/web\/api(\/|$)/;

const sessionRequired = () => new ApiError('unauthorized', 'Sign in first: this endpoint uses the web session.');

/** A page's form past its limit (413) or unreadable (422): the page answers in HTML once the session has been checked. */
export class RefusedBody {
  constructor(readonly error: ApiError) {}
}

/**
 * The web routes' body parser (an Elysia parse hook, ahead of each route's own): the session is
 * looked up before anything is read; /web/api refuses a request without one (401) unread and
 * reads JSON up to WEB_BODY_BYTES; a page reads its form up to WEB_BODY_BYTES when signed in
 * (urlencoded, or multipart with files), SIGNED_OUT_BODY_BYTES when not. Reading stops at the
 * first byte past the limit (http/body.ts).
 */
export function webBodyParser(web: Web) {
  // The parts of the context it reads are named: Elysia reads a hook's source to decide what to
  // build for every request of the app, and a whole context handed on makes it parse every
  // request's cookies, headers and query (server/app.ts).
  return ({ request, params }: RouteInput) =>
    earlyStep(async () => {
      const ctx = requestContext(web, { request, params });
      const signedIn = await signedInWithCookie(ctx);
      if (WEB_API_PATH.test(ctx.url.pathname)) {
        if (!signedIn) throw sessionRequired();
        return readJsonBody(ctx.request, WEB_BODY_BYTES);
      }
      try {
        const bytes = await readBody(ctx.request, signedIn ? WEB_BODY_BYTES : SIGNED_OUT_BODY_BYTES);
        if (bytes === null) return null; // never undefined (see readJsonBody)
        // A form with a file (the CSV import's upload) is read into fields here, so its `_csrf` is checked as any form's.
        const type = ctx.request.headers.get('content-type');
        if (signedIn && isMultipart(type)) {
          return (
            (await multipartForm(bytes, type!)) ?? new RefusedBody(errors.validation([{ path: '', message: 'the form could not be read' }]))
          );
        }
        return bodyText(bytes);
      } catch (err) {
        if (isBodyTooLarge(err)) return new RefusedBody(err);
        throw err;
      }
    });
}

/** A page's form from the parsed body; a refused one is answered with its 413 page. */
export function formBody(body: unknown): URLSearchParams {
  if (body instanceof RefusedBody) throw body.error;
  return parseForm(body);
}

/** Each route names the action it performs; the member must be allowed it (domain/access.ts). */
function assertRoleMay(signedIn: SignedIn, action: Action): void {
  authorize(memberPrincipal(signedIn), action);
}

/**
 * A page: signed in or redirected to /sign-in; POSTs carry a form with `_csrf`. Errors become
 * HTML pages with the matching status.
 */
export function pageRoute(web: Web, action: Action, handler: (ctx: PageContext) => Promise<Response> | Response) {
  return async (input: RouteInput): Promise<Response> => {
    const ctx = requestContext(web, input);
    let signedIn: SignedInCookie | null = null;
    try {
      signedIn = await signedInWithCookie(ctx);
      if (!signedIn) {
        if (ctx.request.method === 'GET') return redirect(signInPath(ctx.url));
        throw new ApiError('unauthorized', 'Sign in first.');
      }
      assertRoleMay(signedIn, action);
      let form = new URLSearchParams();
      if (STATE_CHANGING.has(ctx.request.method)) {
        form = formBody(input.body);
        if (
          !originAllowed(web, ctx.request) ||
          !csrfMatches(signedIn.session, form.get('_csrf') ?? ctx.request.headers.get('x-csrf-token'))
        ) {
          throw csrfError();
        }
      }
      const res = await handler({ ...ctx, tz: zoneOf(ctx, signedIn), signedIn, form });
      await auditWebChange(web, input, ctx, signedIn, res);
      return withRenewal(web, res, signedIn, ctx.now);
    } catch (err) {
      return pageError(ctx, signedIn, err);
    }
  };
}

/**
 * A JSON endpoint for the pages' scripts: the session cookie authenticates, the X-CSRF-Token
 * header must match on POST/PATCH/DELETE. Errors are thrown to the app's onError, so they have
 * the API's error body.
 */
export function jsonRoute(web: Web, action: Action, handler: (ctx: JsonContext) => Promise<Response> | Response) {
  return async (input: RouteInput): Promise<Response> => {
    const ctx = requestContext(web, input);
    const signedIn = await signedInWithCookie(ctx);
    if (!signedIn) throw sessionRequired();
    assertRoleMay(signedIn, action);
    if (STATE_CHANGING.has(ctx.request.method)) {
      if (!originAllowed(web, ctx.request) || !csrfMatches(signedIn.session, ctx.request.headers.get('x-csrf-token'))) throw csrfError();
    }
    const res = await handler({ ...ctx, tz: zoneOf(ctx, signedIn), signedIn, body: input.body });
    await auditWebChange(web, input, ctx, signedIn, res);
    return withRenewal(web, res, signedIn, ctx.now);
  };
}

/** A public page (sign-in): errors become HTML pages; no session needed. `body`: what the parser read. */
export function publicRoute(
  web: Web,
  handler: (ctx: RequestContext & { signedIn: SignedIn | null; body: unknown }) => Promise<Response> | Response,
) {
  return async (input: RouteInput): Promise<Response> => {
    const ctx = requestContext(web, input);
    let signedIn: SignedInCookie | null = null;
    try {
      signedIn = await signedInWithCookie(ctx);
      const res = await handler({ ...ctx, tz: zoneOf(ctx, signedIn), signedIn, body: input.body });
      await auditWebChange(web, input, ctx, signedIn, res);
      return res;
    } catch (err) {
      return pageError(ctx, signedIn, err);
    }
  };
}
