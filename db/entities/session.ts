import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created } from './base.ts';
import { Organization } from './organization.ts';
import { User } from './user.ts';

/**
 * A signed-in browser. The cookie holds an opaque random token; only its SHA-256 is stored (the
 * primary key), so a copy of the table cannot be replayed as cookies.
 */
export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  extends: Created,
  properties: {
    id: p.string().length(64).primary(),
    user: () => p.manyToOne(User).mapToPk().deleteRule('cascade').index(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    /** Per-session CSRF token, sent back in forms (`_csrf`) and fetches (`X-CSRF-Token`). */
    csrfToken: p.string().length(64).hidden(),
    expiresAt: p.datetime().index(),
    lastSeenAt: p.datetime(),
  },
});
export type ISession = InferEntity<typeof Session>;
