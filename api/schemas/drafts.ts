// Drafts (docs/api.md "Drafts"): a post's content not yet scheduled.
import { t } from 'elysia';
import { EDIT_FIELDS } from '../../domain/posts/content.ts';
import { strict, DateTime, NullableDateTime, NullableString, oneOf } from './primitives.ts';
import { ActorSchema } from './posts.ts';

export const DraftSchema = t.Object(
  {
    id: t.String({ description: 'Draft id (`drf_…`).' }),
    ...EDIT_FIELDS,
    channelIds: t.Array(t.String(), { description: 'The channels it is meant for; may be empty.' }),
    tagIds: t.Array(t.String(), {
      description: 'The organization’s tags (GET /tags), in id order, given to the post it becomes; `[]`: none.',
    }),
    intendedAt: NullableDateTime('When it is meant to go out; a draft whose time has passed is still a draft.'),
    status: oneOf(['draft', 'scheduled'] as const, '`draft`; `scheduled` once it became a post (`postId`).'),
    postId: NullableString('The post it became once scheduled.'),
    scheduledAt: NullableDateTime('When it was scheduled.'),
    createdBy: ActorSchema,
    createdAt: DateTime('When it was made.'),
    updatedAt: DateTime('When it last changed.'),
  },
  { ...strict, description: 'The content fields as given (any may be absent), as the body of Schedule a post names them.' },
);

export const DraftListSchema = t.Object(
  {
    data: t.Array(DraftSchema, { description: 'Last changed first.' }),
    nextCursor: t.Union([t.String(), t.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  strict,
);
