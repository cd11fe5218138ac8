// Bearer-key authentication (SPEC.md §5, DESIGN.md §3) as an Elysia macro: a route declares
// `{ scope: 'read' }` and its handler receives `auth`.
//
// The key is checked before anything of the request is read or validated (docs/decisions.md
// "Request bodies"): in the route's parse step for routes with a body (so an anonymous client
// gets its 401 before a byte of the body is read, and the body is then read with the 1 MB limit),
// in its transform step for the others (before query and params validation). The result is kept
// per Request, so `resolve` hands the same Auth to the handler and the rate limit and the
// monthly quota count each request once. Order of refusals: 401 → 403 plan_required →
// 429 rate_limited / quota_exceeded → 403 forbidden_scope → 413 / 422 of the body.
import { router } from '../http/router.ts';
import { earlyStep, MAX_JSON_BODY_BYTES, readJsonBody } from '../http/body.ts';
import { keyChannels, authenticateKey, touchApiKey } from '../services/api-keys.ts';
import { countRequest, requestsThisMonth } from '../services/usage.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { monthPeriod, PLAN_LIMITS } from '../lib/plans.ts';
import type { Scope } from '../lib/scopes.ts';
import type { IApiKey, IOrganization } from '../db/entities/index.ts';
import type { AppDeps } from '../http/deps.ts';

export interface Auth {
  key: IApiKey;
  organization: IOrganization;
  /** 'all' or the channel ids the key is limited to. */
  channels: 'all' | string[];
  usedThisMonth: number;
  now: Date;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

interface AuthInput {
  request: Request;
  set: { headers: Record<string, unknown> };
}

export function authPlugin(deps: AppDeps) {
  const now = deps.now ?? (() => new Date());
  const admitted = new WeakMap<Request, Promise<Auth>>();

  async function authenticate({ request, set }: AuthInput, scope: Scope): Promise<Auth> {
    const header = request.headers.get('authorization');
    if (!header) throw errors.unauthorized('Missing Authorization header; send "Authorization: Bearer <API key>".');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw errors.unauthorized('Malformed Authorization header; expected "Bearer <API key>".');
    const at = now();
    const em = deps.orm.em.fork();
    const { key, organization } = await authenticateKey(em, match[1], at);
    const limits = PLAN_LIMITS[organization.plan];
    if (!limits.apiAccess) throw errors.planRequired(organization.plan);
    // Per minute, per key (shared by every API process through Postgres).
    if (deps.rateLimiter) {
      const rate = await deps.rateLimiter.consume(key.id, organization.plan);
      const resetSeconds = Math.max(0, Math.ceil((rate.resetsAt.getTime() - Date.now()) / 1000));
      set.headers['ratelimit-limit'] = String(rate.limit);
      set.headers['ratelimit-remaining'] = String(rate.remaining);
      set.headers['ratelimit-reset'] = String(resetSeconds);
      if (!rate.allowed) {
        throw new ApiError('rate_limited', `More than ${rate.limit} requests a minute with this key; retry after ${resetSeconds} s.`, {
          details: { resetsAt: rate.resetsAt.toISOString(), limit: rate.limit },
          headers: { 'retry-after': String(resetSeconds) },
        });
      }
    }
    // Per month, per organization: every admitted authenticated request counts, also one
    // refused for scope; past the quota nothing more is counted.
    const [usedThisMonth] = await Promise.all([
      countRequest(em, organization.id, at, limits.requestsPerMonth),
      touchApiKey(em, key.id, at),
    ]);
    if (usedThisMonth === null) {
      const resetsAt = monthPeriod(at).resetsAt;
      const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - at.getTime()) / 1000));
      throw new ApiError('quota_exceeded', `The organization has used its ${limits.requestsPerMonth} requests for this month.`, {
        details: {
          resetsAt: resetsAt.toISOString(),
          limit: limits.requestsPerMonth,
          used: await requestsThisMonth(em, organization.id, at),
        },
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    if (!key.scopes.includes(scope)) throw errors.forbiddenScope(scope);
    return { key, organization, channels: keyChannels(key), usedThisMonth, now: at };
  }

  /** Once per Request, whichever step asks first. */
  function admit(input: AuthInput, scope: Scope): Promise<Auth> {
    let found = admitted.get(input.request);
    if (!found) {
      found = authenticate(input, scope);
      admitted.set(input.request, found);
    }
    return found;
  }

  return router('auth').macro({
    scope: (scope: Scope) => ({
      // Routes with a body: the key first, then the body, read with the limit (http/body.ts).
      parse: (ctx: AuthInput) =>
        earlyStep(async () => {
          await admit(ctx, scope);
          return readJsonBody(ctx.request, MAX_JSON_BODY_BYTES);
        }),
      // Routes without one: before query and params are validated.
      transform: async (ctx: AuthInput) => {
        await admit(ctx, scope);
      },
      async resolve(ctx): Promise<{ auth: Auth }> {
        return { auth: await admit(ctx, scope) };
      },
    }),
  });
}
