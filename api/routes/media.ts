import { t } from 'elysia';
import { completeUpload, createUpload, getMediaItem, mediaView } from '../../domain/media.ts';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import { authPlugin } from '../auth.ts';
import { idempotent } from '../../services/idempotency.ts';
import { answerStored } from '../../http/stored-response.ts';
import type { AppDeps } from '../../http/deps.ts';
import { Chars, FileName, MediaItemSchema, MimeType, PathId, UploadResponseSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

// The type and the size limit per type are checked by media/catalog.ts (case-insensitively); the
// document lists the types and each type's limit from the same table (api/openapi/operations.ts).
const UploadBody = t.Object(
  {
    fileName: FileName(),
    mimeType: MimeType(),
    fileSize: t.Integer({ minimum: 1 }),
    altText: t.Optional(Chars(1500)),
  },
  { additionalProperties: false },
);

const IdParams = t.Object({ id: PathId() });

/** A channel-limited key sees only some of the organization's media (domain/media.ts). */
const viewerOf = (auth: { key: { id: string }; channels: 'all' | string[] }) => ({ apiKeyId: auth.key.id, channels: auth.channels });

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
        operation: OPERATIONS.createUpload,
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
        operation: OPERATIONS.completeUpload,
      },
    )
    .get(
      '/media/:id',
      async ({ auth, params }) =>
        mediaView(await getMediaItem(deps.orm.em.fork(), auth.organization.id, params.id, viewerOf(auth)), need().storage),
      { params: IdParams, response: { 200: MediaItemSchema }, operation: OPERATIONS.getMedia },
    );
}
