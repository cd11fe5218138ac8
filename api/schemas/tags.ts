// Tags (docs/api.md "Tags"): an organization's labels for posts, series and feeds.
import { t } from 'elysia';
import { strict, DateTime } from './primitives.ts';

export const TagSchema = t.Object(
  {
    id: t.String({ description: 'Used in `tagIds` of posts, series, feeds and drafts, and as `tagId` of the lists and the analytics.' }),
    name: t.String({ description: 'Unique in the organization, whatever its letter case.' }),
    colour: t.String({ description: '`#rrggbb`, lower case.' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  strict,
);

export const TagListSchema = t.Object({ data: t.Array(TagSchema, { description: 'By name (any letter case).' }) }, strict);
