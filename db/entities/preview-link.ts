import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Organization } from './organization.ts';

export const PREVIEW_DECISIONS = ['approve', 'reject'] as const;

/**
 * A preview link shared for a post (domain/posts/preview-links.ts): the token is signed and names
 * this row, which says who shared it, whether it decides, and whether it was revoked or used.
 */
export const PreviewLink = defineEntity({
  name: 'PreviewLink',
  tableName: 'preview_links',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    postId: p.string().index(),
    createdByUserId: p.string(),
    decide: p.boolean(),
    expiresAt: p.datetime(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    /** A link decides once: what, by whom (the name the reviewer gave) and when. */
    decision: p.enum(PREVIEW_DECISIONS).nullable(),
    reviewerName: p.string().length(100).nullable(),
    decidedAt: p.datetime().nullable(),
  },
});
export type IPreviewLink = InferEntity<typeof PreviewLink>;
