import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Timestamped } from './base.ts';
import { Organization } from './organization.ts';
import { Post } from './post.ts';

// An organization's tags (domain/tags.ts states the rules): a name, unique in the organization
// whatever its letter case, and a colour. A post's tags are rows of post_tags, so a list and the
// analytics find a tag's posts through an index and a deleted tag leaves its posts by the cascade;
// a series and a feed keep theirs as a list (`tagIds`), as they keep their channels, and give it
// to every post they make.

export const Tag = defineEntity({
  name: 'Tag',
  tableName: 'tags',
  extends: Timestamped,
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).mapToPk().deleteRule('cascade'),
    name: p.text(),
    /** `#rrggbb`, lower case. */
    colour: p.string().length(7),
  },
  indexes: [
    {
      // One name per organization, any letter case; also the organization's list, by name.
      name: 'tags_organization_name_unique',
      expression: 'create unique index "tags_organization_name_unique" on "tags" ("organization_id", lower("name"))',
    },
  ],
});
export type ITag = InferEntity<typeof Tag>;

/** A tag on a post. */
export const PostTag = defineEntity({
  name: 'PostTag',
  tableName: 'post_tags',
  properties: {
    post: () => p.manyToOne(Post).mapToPk().deleteRule('cascade').primary(),
    /** A tag's posts (GET /v1/posts?tagId=, GET /v1/analytics?tagId=). */
    tag: () => p.manyToOne(Tag).mapToPk().deleteRule('cascade').primary().index(),
  },
});
export type IPostTag = InferEntity<typeof PostTag>;
