// The media library and the three-step upload.
import { t } from 'elysia';
import { MEDIA_STATUSES, MEDIA_TYPES } from '../../db/entities/media-item.ts';
import { strict, DateTime, NullableString, NullableInteger, oneOf } from './primitives.ts';

export const MediaItemSchema = t.Object(
  {
    id: t.String({ description: 'Used in `mediaIds` when creating a post.' }),
    type: oneOf(MEDIA_TYPES),
    status: oneOf(MEDIA_STATUSES, 'pending until completed, then ready, or failed (see `error`).'),
    fileName: t.String(),
    mimeType: t.String(),
    sizeBytes: t.Integer(),
    url: NullableString('Signed link valid for one hour; null until ready.'),
    thumbnailUrl: NullableString('Signed link to a WebP thumbnail (images, GIFs, videos); null until ready.'),
    width: NullableInteger('Pixels; null where it does not apply.'),
    height: NullableInteger('Pixels; null where it does not apply.'),
    durationSeconds: NullableInteger('Null where it does not apply.'),
    altText: NullableString('Alternative text given at upload.'),
    description: NullableString('What the file shows, from the automatic vision pass; null until that pass has run.'),
    error: NullableString('Why the item failed; null unless status is failed (an addition to SPEC.md §2.4).'),
    createdAt: DateTime(),
  },
  strict,
);

export const UploadInstructionsSchema = t.Object(
  {
    method: t.Literal('PUT'),
    url: t.String({ description: 'Address to PUT the file bytes to.' }),
    headers: t.Record(t.String(), t.String(), { description: 'Exactly the headers the PUT must carry (at least Content-Type).' }),
    expiresAt: DateTime('The PUT and the completion must happen before this (15 minutes).'),
  },
  strict,
);

export const UploadResponseSchema = t.Object(
  {
    media: MediaItemSchema,
    upload: UploadInstructionsSchema,
    next: t.String({ description: 'The follow-up step, in words.' }),
  },
  strict,
);
