// The calling key, its organization and quota (SPEC.md §2.1): GET /v1/me and the MCP tool whoami.
import type { IApiKey, IOrganization } from '../db/entities/index.ts';
import { monthPeriod, PLAN_LIMITS } from '../lib/plans.ts';
import type { Scope } from '../lib/scopes.ts';
import type { Principal } from '../domain/access.ts';

/** What authentication found out about a request (api/auth.ts Auth has these fields). */
export interface Caller {
  key: Pick<IApiKey, 'id' | 'name' | 'prefix' | 'scopes' | 'expiresAt'>;
  organization: Pick<IOrganization, 'id' | 'name' | 'plan'>;
  channels: 'all' | string[];
  usedThisMonth: number;
  now: Date;
  /** The key as a principal (domain/access.ts), its maker read on first use (services/api-keys.ts keyPrincipal). */
  principal: () => Promise<Principal>;
}

export function accountView(auth: Caller) {
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
}
