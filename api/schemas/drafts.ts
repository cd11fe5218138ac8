// Drafts (docs/api.md "Drafts"): a post's content not yet scheduled.
import { t } from 'elysia';
import { EDIT_FIELDS } from '../../domain/posts/content.ts';
import { strict, DateTime, NullableDateTime, NullableString, oneOf } from './primitives.ts';
import { ActorSchema, BulkResultSchema, BulkRowSchema } from './posts.ts';

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

/** POST /v1/posts/import: one row's outcome, a draft among them when the import asks for drafts. */
export const ImportRowSchema = t.Union(
  [
    ...BulkRowSchema.anyOf,
    t.Object(
      { index: t.Integer({ description: 'The row’s place in the file, from 0.' }), status: t.Literal(201), draft: DraftSchema },
      strict,
    ),
  ],
  {
    description:
      'The post created (201), the draft created (201, a row without a time when `drafts=true`), or the error body a single create would have answered, its field paths prefixed with `posts.<index>.`.',
  },
);

export const ImportResultSchema = t.Object(
  {
    ...BulkResultSchema.properties,
    created: t.Integer({ description: 'How many rows were created: posts and drafts.' }),
    drafts: t.Optional(t.Integer({ description: 'How many of them are drafts (given when there are any).' })),
    results: t.Array(ImportRowSchema, { description: 'One per row of the file, in its order.' }),
  },
  strict,
);
