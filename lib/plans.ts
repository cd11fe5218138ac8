// Plans and their limits (DESIGN.md §3). null means unlimited.
export const PLANS = ['FREE', 'PRO', 'TEAM', 'ENTERPRISE'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  apiAccess: boolean;
  requestsPerMinute: number;
  requestsPerMonth: number | null;
  pendingScheduledPosts: number | null;
  /** Webhook endpoints per organization. */
  webhookEndpoints: number | null;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  FREE: { apiAccess: false, requestsPerMinute: 0, requestsPerMonth: 0, pendingScheduledPosts: 0, webhookEndpoints: 0 },
  PRO: { apiAccess: true, requestsPerMinute: 60, requestsPerMonth: 10_000, pendingScheduledPosts: 1_000, webhookEndpoints: 5 },
  TEAM: { apiAccess: true, requestsPerMinute: 300, requestsPerMonth: 100_000, pendingScheduledPosts: 10_000, webhookEndpoints: 20 },
  ENTERPRISE: { apiAccess: true, requestsPerMinute: 1200, requestsPerMonth: null, pendingScheduledPosts: null, webhookEndpoints: null },
};

export function isPlan(v: string): v is Plan {
  return (PLANS as readonly string[]).includes(v);
}

/** Quota periods are calendar months in UTC. */
export function monthPeriod(now: Date): { period: string; resetsAt: Date } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return {
    period: `${y}-${String(m + 1).padStart(2, '0')}`,
    resetsAt: new Date(Date.UTC(y, m + 1, 1)),
  };
}
