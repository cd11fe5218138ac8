import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

/** A person who signs in to the web application; a member of exactly one organization. */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    /** Lower-cased; unique across the service. */
    email: p.string().length(320).unique(),
    /** Argon2id (Bun.password), PHC string with its own salt and parameters. */
    passwordHash: p.text().hidden(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type IUser = InferEntity<typeof User>;
