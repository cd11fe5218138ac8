import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { PLANS } from '../../lib/plans.ts';

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    plan: p.enum(PLANS),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type IOrganization = InferEntity<typeof Organization>;
