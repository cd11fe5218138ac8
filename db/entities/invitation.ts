import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { ROLES } from './membership.ts';

/**
 * An invitation to join an organization with a role (domain/invitations.ts). The link carries a
 * random token; only its SHA-256 is stored.
 */
export const Invitation = defineEntity({
  name: 'Invitation',
  tableName: 'invitations',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    /** Lower-cased. */
    email: p.string().length(320),
    role: p.enum(ROLES),
    tokenHash: p.string().length(64).unique(),
    invitedByUserId: p.string(),
    expiresAt: p.datetime(),
    acceptedAt: p.datetime().nullable(),
    declinedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});
export type IInvitation = InferEntity<typeof Invitation>;
