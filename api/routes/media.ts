import { t } from 'elysia';
import { completeUpload, createUpload, getMediaItem, mediaView, UploadBody } from '../../domain/media.ts';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import { authPlugin } from '../auth.ts';
import { idempotent } from '../../services/idempotency.ts';
import { answerStored } from '../../http/stored-response.ts';
import type { AppDeps } from '../../http/deps.ts';
import { MediaItemSchema, PathId, UploadResponseSchema } from '../schemas.ts';
import { doc } from '../openapi/operation.ts';
import { formatLimit, MEDIA_RULES } from '../../media/catalog.ts';

// The body is domain/media.ts UploadBody. The type and the size limit per type are checked by
// media/catalog.ts (case-insensitively); the document lists the types and each type's limit from
// the same table (SIZE_BY_TYPE below).

const IdParams = t.Object({ id: PathId() });

/** A channel-limited key sees only some of the organization's media (domain/media.ts). */
const viewerOf = (auth: { key: { id: string }; channels: 'all' | string[] }) => ({ apiKeyId: auth.key.id, channels: auth.channels });

const MEDIA_ID = 'Media item id (`med_…`), from Create upload.';

/** media/catalog.ts's size limit per type, as a rule of the upload body: one branch per limit. */
const SIZE_BY_TYPE = (() => {
  const byLimit = new Map<number, string[]>();
  for (const [mime, rule] of Object.entries(MEDIA_RULES)) byLimit.set(rule.maxBytes, [...(byLimit.get(rule.maxBytes) ?? []), mime]);
  return [...byLimit].map(([max, types]) => ({
    description: `${types.join(', ')}: at most ${max} bytes (${formatLimit(max)})`,
    properties: { mimeType: { enum: types }, fileSize: { maximum: max } },
  }));
})();

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const MEDIA_OPERATIONS = {
  createUpload: doc({
    operationId: 'createUpload',
    audit: { action: 'media.create', resource: 'media', from: 'media' },
    tag: 'Media',
    action: 'media.write',
    summary: 'Start an upload of a local file',
    description:
      'Step 1 of 3: declare the file. Then PUT the bytes to `upload.url` with exactly `upload.headers` within 15 minutes, then call Complete upload. Accepted: JPEG, PNG, WebP, GIF (≤ 20 MB), MP4, QuickTime (≤ 1 GB), PDF (≤ 100 MB), MP3, M4A, WAV (≤ 200 MB).',
    errors: ['conflict', 'validation_failed'],
    errorNotes: {
      conflict: 'an Idempotency-Key reused with another body, or its first request still running',
      validation_failed:
        'invalid body (`details.fields`): a file name with path separators, a type that is not accepted, a size over the type’s limit, an invalid Idempotency-Key',
    },
    success: { status: 201, description: 'The pending media item and the PUT instructions.', location: true },
    idempotent: true,
    temporal: true,
    body: {
      name: 'CreateUploadRequest',
      // The size limit of each type (a body that breaks it is `422`).
      schema: { anyOf: SIZE_BY_TYPE },
      fields: {
        fileName: 'File name: 1–255 characters, without path separators (`/`, `\\`) or control characters; not blank, `.` or `..`.',
        mimeType:
          'The file’s type, one of those listed (the server also takes them in any letter case; `audio/x-wav` and `audio/wave` are WAV).',
        fileSize: `Size in bytes; the PUT must send exactly this many. At most: ${SIZE_BY_TYPE.map((b) => b.description).join('; ')}.`,
        altText: 'Alternative text for the item.',
      },
    },
  }),

  completeUpload: doc({
    operationId: 'completeUpload',
    audit: { action: 'media.complete', resource: 'media' },
    tag: 'Media',
    action: 'media.write',
    summary: 'Complete an upload',
    description:
      'Step 3 of 3: verifies the uploaded file (size, real type from its bytes), measures it and makes a thumbnail, then the item is `ready`, or `failed` with the reason in `error`. Before the PUT: `409 conflict` and the item stays `pending`. Safe to call again: a completed item is returned as it is.',
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: { conflict: 'the file has not been PUT yet (the item stays `pending`), or the 15-minute window has closed' },
    success: { description: 'The media item, `ready` or `failed`.' },
    temporal: true,
    params: { id: MEDIA_ID },
  }),

  getMedia: doc({
    operationId: 'getMedia',
    tag: 'Media',
    action: 'read',
    summary: 'A media item',
    errors: ['not_found', 'validation_failed'],
    success: { description: 'The media item.' },
    params: { id: MEDIA_ID },
  }),
};

export function mediaRoutes(deps: AppDeps) {
  const need = () => {
    if (!deps.storage || !deps.temporal) throw new Error('object storage and Temporal must be configured for media');
    return { storage: deps.storage, temporal: deps.temporal };
  };
  return router()
    .use(authPlugin(deps))
    .post(
      '/media/uploads',
      async ({ auth, body, set, headers }) => {
        const { storage, temporal } = need();
        const em = deps.orm.em.fork();
        const result = await idempotent(
          em,
          {
            organizationId: auth.organization.id,
            apiKeyId: auth.key.id,
            endpoint: 'POST /v1/media/uploads',
            key: headers['idempotency-key'],
            body,
            now: auth.now,
          },
          async () => {
            const { item, upload } = await createUpload(em, storage, temporal, {
              organizationId: auth.organization.id,
              fileName: body.fileName,
              mimeType: body.mimeType,
              fileSize: body.fileSize,
              altText: body.altText ?? null,
              now: auth.now,
              apiKeyId: auth.key.id,
            });
            return {
              status: 201,
              location: `/v1/media/${item.id}`,
              body: {
                media: await mediaView(item, storage),
                upload: { method: upload.method, url: upload.url, headers: upload.headers, expiresAt: upload.expiresAt.toISOString() },
                next: `PUT the file to upload.url with upload.headers before upload.expiresAt, then POST /v1/media/${item.id}/complete`,
              },
            };
          },
        );
        return answerStored(set, result);
      },
      {
        body: UploadBody,
        transform: refuseUnstorableBody,
        response: { 201: UploadResponseSchema },
        operation: MEDIA_OPERATIONS.createUpload,
      },
    )
    .post(
      '/media/:id/complete',
      async ({ auth, params }) => {
        const { storage, temporal } = need();
        const item = await completeUpload(deps.orm.em.fork(), temporal, auth.organization.id, params.id, viewerOf(auth));
        return mediaView(item, storage);
      },
      {
        params: IdParams,
        response: { 200: MediaItemSchema },
        operation: MEDIA_OPERATIONS.completeUpload,
      },
    )
    .get(
      '/media/:id',
      async ({ auth, params }) =>
        mediaView(await getMediaItem(deps.orm.em.fork(), auth.organization.id, params.id, viewerOf(auth)), need().storage),
      { params: IdParams, response: { 200: MediaItemSchema }, operation: MEDIA_OPERATIONS.getMedia },
    );
}
