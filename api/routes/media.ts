import { t } from 'elysia';
import { completeUpload, createUpload, getMediaItem, mediaView } from '../../services/media.ts';
import { refuseUnstorableBody, router } from '../router.ts';
import { authPlugin } from '../auth.ts';
import { idempotent } from '../../services/idempotency.ts';
import type { AppDeps } from '../context.ts';
import { MediaItemSchema, UploadResponseSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

const UploadBody = t.Object(
  {
    fileName: t.String({ minLength: 1, maxLength: 255 }),
    mimeType: t.String({ minLength: 1, maxLength: 100 }),
    fileSize: t.Integer({ minimum: 1 }),
    altText: t.Optional(t.String({ maxLength: 1500, pattern: '^[^\\u0000]*$' })),
  },
  { additionalProperties: false },
);

const IdParams = t.Object({ id: t.String({ maxLength: 64 }) });

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
          { organizationId: auth.organization.id, endpoint: 'POST /v1/media/uploads', key: headers['idempotency-key'], body, now: auth.now },
          async () => {
        const { item, upload } = await createUpload(em, storage, temporal, {
          organizationId: auth.organization.id,
          fileName: body.fileName,
          mimeType: body.mimeType,
          fileSize: body.fileSize,
          altText: body.altText ?? null,
          now: auth.now,
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
        set.status = result.status;
        if (result.location) set.headers.location = result.location;
        if (result.replayed) set.headers['idempotent-replayed'] = 'true';
        return result.body;
      },
      { scope: 'publish', body: UploadBody, transform: refuseUnstorableBody, response: { 201: UploadResponseSchema }, detail: OPERATIONS.createUpload },
    )
    .post(
      '/media/:id/complete',
      async ({ auth, params }) => {
        const { storage, temporal } = need();
        const item = await completeUpload(deps.orm.em.fork(), temporal, auth.organization.id, params.id);
        return mediaView(item, storage);
      },
      { scope: 'publish', params: IdParams, response: { 200: MediaItemSchema }, detail: OPERATIONS.completeUpload },
    )
    .get(
      '/media/:id',
      async ({ auth, params }) => mediaView(await getMediaItem(deps.orm.em.fork(), auth.organization.id, params.id), need().storage),
      { scope: 'read', params: IdParams, response: { 200: MediaItemSchema }, detail: OPERATIONS.getMedia },
    );
}
