// The generate scope (services/generate.ts): drafts of a post per channel, and alt text for a
// media item. Nothing is created.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { GENERATE_LIMITS, generateAltText, generatePostDrafts } from '../../services/generate.ts';
import { POST_LIMITS } from '../../domain/posts/limits.ts';
import { authPlugin } from '../auth.ts';
import { OPERATIONS } from '../openapi/operations.ts';
import { BodyId, Chars, GeneratedAltTextSchema, GeneratedDraftsSchema } from '../schemas.ts';

const GenerateBody = t.Object(
  {
    prompt: Chars(GENERATE_LIMITS.promptChars, { min: 1 }),
    tone: t.Optional(Chars(GENERATE_LIMITS.toneChars, { min: 1 })),
    channelIds: t.Array(BodyId(), { minItems: 1, maxItems: POST_LIMITS.channels, uniqueItems: true }),
    mediaIds: t.Optional(t.Array(BodyId(), { maxItems: POST_LIMITS.mediaItems, uniqueItems: true })),
  },
  { additionalProperties: false },
);

const AltTextBody = t.Object({ mediaId: BodyId() }, { additionalProperties: false });

const viewerOf = (auth: { key: { id: string }; channels: 'all' | string[] }) => ({ apiKeyId: auth.key.id, channels: auth.channels });

export function generateRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .post(
      '/generate/post',
      ({ auth, body }) =>
        generatePostDrafts(deps.orm.em.fork(), deps.generate, {
          organizationId: auth.organization.id,
          key: viewerOf(auth),
          prompt: body.prompt,
          tone: body.tone,
          channelIds: body.channelIds,
          mediaIds: body.mediaIds ?? [],
        }),
      {
        body: GenerateBody,
        transform: refuseUnstorableBody,
        response: { 200: GeneratedDraftsSchema },
        operation: OPERATIONS.generatePost,
      },
    )
    .post(
      '/generate/alt-text',
      ({ auth, body }) =>
        generateAltText(deps.orm.em.fork(), deps.storage, deps.vision, {
          organizationId: auth.organization.id,
          key: viewerOf(auth),
          mediaId: body.mediaId,
        }),
      {
        body: AltTextBody,
        transform: refuseUnstorableBody,
        response: { 200: GeneratedAltTextSchema },
        operation: OPERATIONS.generateAltText,
      },
    );
}
