// Bearer-key authentication (SPEC.md §5, DESIGN.md §3) as an Elysia macro: a route declares
// `{ scope: 'read' }` and its handler receives `auth`.
import { router } from './router.ts';
import { keyChannels, authenticateKey, touchApiKey } from '../services/api-keys.ts';
import { countRequest } from '../services/usage.ts';
import { errors } from '../lib/errors.ts';
import { PLAN_LIMITS } from '../lib/plans.ts';
import type { Scope } from '../lib/scopes.ts';
import type { IApiKey, IOrganization } from '../db/entities/index.ts';
import type { AppDeps } from './context.ts';

export interface Auth {
  key: IApiKey;
  organization: IOrganization;
  /** 'all' or the channel ids the key is limited to. */
  channels: 'all' | string[];
  usedThisMonth: number;
  now: Date;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

export function authPlugin(deps: AppDeps) {
  const now = deps.now ?? (() => new Date());
  return router('auth').macro({
    scope: (scope: Scope) => ({
      async resolve({ headers }): Promise<{ auth: Auth }> {
        const header = headers.authorization;
        if (!header) throw errors.unauthorized('Missing Authorization header; send "Authorization: Bearer <API key>".');
        const match = BEARER.exec(header);
        if (!match?.[1]) throw errors.unauthorized('Malformed Authorization header; expected "Bearer <API key>".');
        const at = now();
        const em = deps.orm.em.fork();
        const { key, organization } = await authenticateKey(em, match[1], at);
        if (!PLAN_LIMITS[organization.plan].apiAccess) throw errors.planRequired(organization.plan);
        // Every authenticated request counts toward the month, also one refused for scope.
        const [usedThisMonth] = await Promise.all([countRequest(em, organization.id, at), touchApiKey(em, key.id, at)]);
        if (!key.scopes.includes(scope)) throw errors.forbiddenScope(scope);
        return { auth: { key, organization, channels: keyChannels(key), usedThisMonth, now: at } };
      },
    }),
  });
}
