import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

/** Authenticated requests per organization per UTC calendar month (`period` = YYYY-MM). */
export const UsageCounter = defineEntity({
  name: 'UsageCounter',
  tableName: 'usage_counters',
  properties: {
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').primary(),
    period: p.string().length(7).primary(),
    requests: p.integer().default(0),
  },
});
export type IUsageCounter = InferEntity<typeof UsageCounter>;
