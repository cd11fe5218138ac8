import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/** From most to least: what each may do is domain/access.ts. */
export const ROLES = ['owner', 'admin', 'editor', 'contributor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** A person's place in an organization: one role each (domain/access.ts states what a role may do). */
export const Membership = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    user: () => p.manyToOne(User).mapToPk().deleteRule('cascade').index(),
    role: p.enum(ROLES),
  },
  uniques: [{ properties: ['organization', 'user'] }],
});
export type IMembership = InferEntity<typeof Membership>;
