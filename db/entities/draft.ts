import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { Post, type Actor } from './post.ts';

// A draft (domain/posts/drafts.ts): a post's content not yet scheduled, kept as the post-content
// schema takes it (domain/posts/content.ts), with the channels meant for it (maybe none) and a
// time meant for it (maybe none). Never published; scheduled, it records the post it became.
export const Draft = defineEntity({
  name: 'Draft',
  tableName: 'drafts',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    /** The post's content fields as given (ContentEdit): each optional, so a draft may hold anything from nothing to a whole post. */
    content: p.json<Record<string, unknown>>(),
    channelIds: p.json<string[]>(),
    /** The organization's tags (domain/tags.ts), given to the post it becomes. */
    tagIds: p.json<string[]>().default('[]'),
    /** When it is meant to go out; a draft whose time has passed is still a draft. */
    intendedAt: p.datetime().nullable(),
    createdBy: p.json<Actor>(),
    /** The post it became once scheduled (the draft stays, read-only). */
    post: () => p.manyToOne(Post).mapToPk().nullable().deleteRule('set null').fieldName('post_id'),
    scheduledAt: p.datetime().nullable(),
  },
  // The organization's drafts, last changed first.
  indexes: [{ properties: ['organization', 'updatedAt', 'id'] }],
});
export type IDraft = InferEntity<typeof Draft>;
