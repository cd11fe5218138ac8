import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Created } from './base.ts';
import { Organization } from './organization.ts';

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  extends: Created,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade').index(),
    name: p.string(),
    /** SHA-256 of the full key; the key itself is never stored. */
    hash: p.string().length(64).unique(),
    prefix: p.string().length(16),
    scopes: p.array(),
    /** null = all channels; otherwise the channel ids the key is limited to. */
    channelIds: p.json<string[]>().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    /** The member (user id) who made it in the web app; null: made by an operator (the CLI). Revoked when they leave. */
    createdByUserId: p.string().nullable(),
    /** Posts made with this key wait for approval (domain/posts/approval.ts), whatever the organization's setting. */
    requiresApproval: p.boolean().default(false),
  },
});
export type IApiKey = InferEntity<typeof ApiKey>;
