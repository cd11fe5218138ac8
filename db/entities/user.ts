import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';

/** A person who signs in to the web application; a member of exactly one organization. */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    /** Lower-cased; unique across the service. */
    email: p.string().length(320).unique(),
    /** Argon2id (Bun.password), PHC string with its own salt and parameters. */
    passwordHash: p.text().hidden(),
    /** IANA zone the web app shows and takes times in; null until the first sign-in sets the browser's. */
    timeZone: p.string().length(64).nullable(),
  },
});
export type IUser = InferEntity<typeof User>;
