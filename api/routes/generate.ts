// The generate scope (services/generate.ts): drafts of a post per channel, and alt text for a
// media item. Nothing is created.
import { t } from 'elysia';
import { refuseUnstorableBody, router } from '../../http/router.ts';
import type { AppDeps } from '../../http/deps.ts';
import { GENERATE_LIMITS, generateAltText, generatePostDrafts } from '../../services/generate.ts';
import { POST_LIMITS } from '../../domain/posts/limits.ts';
import { ALT_TEXT_CHARS } from '../../domain/media.ts';
import { authPlugin } from '../auth.ts';
import { doc } from '../openapi/operation.ts';
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

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const GENERATE_OPERATIONS = {
  generatePost: doc({
    operationId: 'generatePost',
    // Not an event: drafts: nothing is created or changed.
    audit: null,
    tag: 'Generate',
    action: 'posts.generate',
    summary: 'Draft a post for each channel',
    description:
      'From a brief, a draft per channel that fits the channel’s rules: its text at most `rules.maxChars` counted as create counts (as its platform counts), and a title where the platform requires one (REDDIT). A draft the model makes too long gets one correction round; one still too long is cut at a character (grapheme) boundary and marked `truncated`. Channels that count alike share one draft. Nothing is created: pass a draft to Schedule a post. The drafts come from the operator’s OpenAI-compatible model endpoint.',
    errors: ['forbidden_scope', 'validation_failed'],
    errorNotes: {
      forbidden_scope:
        'the key lacks the `generate` scope (`details.requiredScope`), or is limited to channels and names another (`details.channelIds`)',
      validation_failed:
        'invalid body (`details.fields: [{path, message}]`): a value outside its schema, unknown channels, media that is not ready',
    },
    success: { description: 'A draft per channel, with its length as the platform counts it.' },
    generator: { settings: ['GENERATE_API_URL', 'GENERATE_MODEL', 'GENERATE_API_KEY'] },
    body: {
      name: 'GeneratePostRequest',
      fields: {
        prompt: 'What the post is about: the brief the drafts are written from.',
        tone: 'How it should sound (e.g. “friendly”, “formal”, “playful”).',
        channelIds:
          'Channels to draft for: ids of channels of the organization (from GET /channels), 1 to 50, no repeats. An unknown channel is `422`, one outside a channel-limited key’s list `403`.',
        mediaIds:
          '`ready` media items of the organization the post will carry: their descriptions (from the vision pass) and alt texts inform the drafts.',
      },
    },
  }),

  generateAltText: doc({
    operationId: 'generateAltText',
    // Not an event: alt text: nothing is created or changed.
    audit: null,
    tag: 'Generate',
    action: 'posts.generate',
    summary: 'Suggest alt text for a media item',
    description: `Runs the media library’s vision pass on a \`ready\` image (a video: its thumbnail) and returns its description as alt text, at most ${ALT_TEXT_CHARS} characters. A suggestion: the media item is not changed. The operator’s vision endpoint (an OpenAI-compatible model that reads images) answers it.`,
    errors: ['not_found', 'conflict', 'validation_failed'],
    errorNotes: {
      not_found: 'no media item of the organization (that this key may see) has this id',
      conflict: 'the media item is not `ready` (pending or failed)',
      validation_failed: 'invalid body, or the item is not an image or a video with a thumbnail (`details.fields`)',
    },
    success: { description: 'The suggested alt text.' },
    generator: { settings: ['VISION_API_URL', 'VISION_MODEL', 'VISION_API_KEY'] },
    body: {
      name: 'GenerateAltTextRequest',
      fields: { mediaId: 'Media item id (`med_…`) of a ready image or video.' },
    },
  }),
};

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
        operation: GENERATE_OPERATIONS.generatePost,
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
        operation: GENERATE_OPERATIONS.generateAltText,
      },
    );
}
