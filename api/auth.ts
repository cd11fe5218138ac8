// Bearer-key authentication (SPEC.md §5, DESIGN.md §3) as an Elysia macro: a route declares
// `operation: POST_OPERATIONS.x` (its file's table), whose action (domain/access.ts) says what
// the key must hold, and its handler receives `auth`.
//
// The key is checked before anything of the request is read or validated (docs/decisions.md
// "Request bodies"): in the route's parse step for routes with a body (so an anonymous client
// gets its 401 before a byte of the body is read, and the body is then read with the 1 MB limit),
// in its transform step for the others (before query and params validation). The result is kept
// per Request, so `resolve` hands the same Auth to the handler and the rate limit and the
// monthly quota count each request once. Order of refusals: 401 → 403 plan_required →
// 429 rate_limited / quota_exceeded → 403 forbidden_scope (the scope, then the maker's role) →
// 413 / 422 of the body. Everything
// Postgres knows of it (key, organization, rate limit, quota, last use) is one admission: from
// the process's memory (services/admission-cache.ts) or one statement shared by the requests that
// arrive together (services/admission.ts).
import type { DocumentDecoration } from 'elysia';
import { router } from '../http/router.ts';
import { earlyStep, MAX_JSON_BODY_BYTES, readJsonBody } from '../http/body.ts';
import { authorizeCaller, keyChannels, keyPrincipal } from '../services/api-keys.ts';
import { scopeOf, type Action, type Principal } from '../domain/access.ts';
import { operationDoc } from './openapi/operation.ts';
import { ormAdmission, type KeyRecord, type OrganizationRecord } from '../services/admission.ts';
import { hashApiKey, hashesEqual, KEY_PATTERN } from '../lib/crypto.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { monthPeriod, PLAN_LIMITS } from '../lib/plans.ts';
import type { Scope } from '../lib/scopes.ts';
import type { AppDeps } from '../http/deps.ts';

export interface Auth {
  key: KeyRecord;
  organization: OrganizationRecord;
  /** 'all' or the channel ids the key is limited to. */
  channels: 'all' | string[];
  usedThisMonth: number;
  now: Date;
  /** The key as a principal (domain/access.ts), its maker read on first use (once per request). */
  principal: () => Promise<Principal>;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export interface AuthInput {
  request: Request;
  set: { headers: Record<string, unknown> };
}

/**
 * The check of a request's key, with the refusals in their order. `scope` null admits the key with
 * no scope check: for the MCP endpoint (mcp/http.ts), which checks each tool's scope itself. Each
 * call counts one request against the rate limit and the quota.
 */
export function keyAuthenticator(deps: AppDeps): (input: AuthInput, scope: Scope | null) => Promise<Auth> {
  const now = deps.now ?? (() => new Date());
  // Without a limiter (some tests, the bench stack's in-process API): the same statement through the ORM, unbatched.
  const admit = deps.rateLimiter ? deps.rateLimiter.admit : ormAdmission(deps.orm);
  return async function authenticate({ request, set }: AuthInput, scope: Scope | null): Promise<Auth> {
    const header = request.headers.get('authorization');
    if (!header) throw errors.unauthorized('Missing Authorization header; send "Authorization: Bearer <API key>".');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw errors.unauthorized('Malformed Authorization header; expected "Bearer <API key>".');
    const at = now();
    if (!KEY_PATTERN.test(match[1])) throw errors.unauthorized('The API key is malformed.');
    const hash = hashApiKey(match[1]);
    // Key, organization, rate limit, quota and last-used: one admission (services/admission.ts).
    const found = await admit({ hash, at, period: monthPeriod(at).period });
    if (!found.found || !hashesEqual(found.key.hash, hash)) throw errors.unauthorized('The API key is not recognised.');
    const { key, organization } = found;
    if (key.revokedAt) throw errors.unauthorized('The API key has been revoked.');
    if (key.expiresAt && key.expiresAt.getTime() <= at.getTime()) throw errors.unauthorized('The API key has expired.');
    const limits = PLAN_LIMITS[organization.plan];
    if (!limits.apiAccess || !found.counted) throw errors.planRequired(organization.plan);
    // Per minute, per key (shared by every API process through Postgres).
    if (found.rate) {
      const limit = limits.requestsPerMinute;
      const resetsAt = found.rate.resetsAt;
      const resetSeconds = Math.max(0, Math.ceil((resetsAt.getTime() - Date.now()) / 1000));
      set.headers['ratelimit-limit'] = String(limit);
      set.headers['ratelimit-remaining'] = String(Math.max(0, limit - found.rate.points));
      set.headers['ratelimit-reset'] = String(resetSeconds);
      if (found.rate.points > limit) {
        throw new ApiError('rate_limited', `More than ${limit} requests a minute with this key; retry after ${resetSeconds} s.`, {
          details: { resetsAt: resetsAt.toISOString(), limit },
          headers: { 'retry-after': String(resetSeconds) },
        });
      }
    }
    // Per month, per organization: every admitted authenticated request counts, also one
    // refused for scope; past the quota nothing more is counted.
    if (!found.quotaOk) {
      const resetsAt = monthPeriod(at).resetsAt;
      const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - at.getTime()) / 1000));
      throw new ApiError('quota_exceeded', `The organization has used its ${limits.requestsPerMonth} requests for this month.`, {
        details: { resetsAt: resetsAt.toISOString(), limit: limits.requestsPerMonth, used: found.usedThisMonth },
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    if (scope !== null && !key.scopes.includes(scope)) throw errors.forbiddenScope(scope);
    let principal: Promise<Principal> | undefined;
    return {
      key,
      organization,
      channels: keyChannels(key),
      usedThisMonth: found.usedThisMonth,
      now: at,
      principal: () => (principal ??= keyPrincipal(deps.orm.em.fork(), key)),
    };
  };
}

export function authPlugin(deps: AppDeps) {
  const authenticate = keyAuthenticator(deps);
  const admitted = new WeakMap<Request, Promise<Auth>>();

  /** Once per Request, whichever step asks first: the key, then the action. */
  function admit(input: AuthInput, action: Action): Promise<Auth> {
    let found = admitted.get(input.request);
    if (!found) {
      const scope = scopeOf(action);
      if (scope === null) throw new Error(`${action} is not done through a key: no /v1 route may name it`);
      found = authenticate(input, scope).then(async (auth) => {
        await authorizeCaller(auth, action);
        return auth;
      });
      admitted.set(input.request, found);
    }
    return found;
  }

  return router('auth').macro({
    /**
     * `operation: POST_OPERATIONS.x` (an entry of the route file's own table): the route's
     * document entry and its access check from the one entry — the entry's action
     * (domain/access.ts) gives the scope and the roles a key's maker must hold, before anything
     * of the request is read.
     */
    operation: (detail: DocumentDecoration) => {
      const op = operationDoc(detail);
      if (!op) throw new Error('operation: pass a doc() entry of the route file’s operations table (api/openapi/operation.ts)');
      const maxBodyBytes = op.maxBodyBytes ?? MAX_JSON_BODY_BYTES;
      return {
        detail,
        // Routes with a body: the key first, then the body, read with the limit (http/body.ts).
        // Each hook names what it reads (server/app.ts says why).
        parse: ({ request, set }: AuthInput) =>
          earlyStep(async () => {
            await admit({ request, set }, op.action);
            return readJsonBody(request, maxBodyBytes, op.bodyMediaType);
          }),
        // Routes without one: before query and params are validated.
        transform: async ({ request, set }: AuthInput) => {
          await admit({ request, set }, op.action);
        },
        async resolve({ request, set }): Promise<{ auth: Auth }> {
          return { auth: await admit({ request, set }, op.action) };
        },
      };
    },
  });
}
