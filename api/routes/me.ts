import { router } from '../../http/router.ts';
import { PLAN_LIMITS, monthPeriod } from '../../lib/plans.ts';
import type { Scope } from '../../lib/scopes.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { MeSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

export function meRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/me',
      ({ auth }) => {
        const { organization, key } = auth;
        const limits = PLAN_LIMITS[organization.plan];
        return {
          organization: { id: organization.id, name: organization.name, plan: organization.plan },
          key: {
            name: key.name,
            prefix: key.prefix,
            scopes: key.scopes as Scope[],
            channels: auth.channels,
            expiresAt: key.expiresAt?.toISOString() ?? null,
          },
          quota: {
            requestsPerMinute: limits.requestsPerMinute,
            requestsPerMonth: limits.requestsPerMonth,
            usedThisMonth: auth.usedThisMonth,
            resetsAt: monthPeriod(auth.now).resetsAt.toISOString(),
          },
        };
      },
      { scope: 'read', response: { 200: MeSchema }, detail: OPERATIONS.getMe },
    );
}
