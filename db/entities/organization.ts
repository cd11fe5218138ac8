import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { PLANS } from '../../lib/plans.ts';

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    name: p.string(),
    plan: p.enum(PLANS),
    /** IANA zone for queues and series that name none of their own. */
    timeZone: p.string().length(64).default('UTC'),
  },
});
export type IOrganization = InferEntity<typeof Organization>;
