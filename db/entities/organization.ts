import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { PLANS } from '../../lib/plans.ts';
import type { LinkChoice } from './tracked-link.ts';

/** Whose posts wait for approval before they are published (domain/posts/approval.ts). */
export const APPROVAL_SETTINGS = ['none', 'contributors', 'everyone'] as const;
export type ApprovalSetting = (typeof APPROVAL_SETTINGS)[number];

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
    approval: p.enum(APPROVAL_SETTINGS).default('contributors'),
    /** Whether a preview link may carry approve/reject buttons for a reviewer without an account. */
    previewDecisions: p.boolean().default(false),
    /** The links choice of posts that give none (domain/links/choice.ts): decided when each post is created. */
    links: p.json<LinkChoice>().defaultRaw(`'{"shorten":false}'`),
  },
});
export type IOrganization = InferEntity<typeof Organization>;
