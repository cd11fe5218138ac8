// The generate scope's answers: drafts and alt text.
import { t } from 'elysia';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { ALT_TEXT_CHARS } from '../../domain/media.ts';
import { strict, oneOf } from './primitives.ts';

/** POST /v1/generate/post (services/generate.ts): a draft per channel; nothing is created. */
export const GeneratedDraftsSchema = t.Object(
  {
    data: t.Array(
      t.Object(
        {
          channelId: t.String(),
          platform: oneOf(PLATFORMS),
          content: t.String({
            description: 'The draft text for this channel: use it as `content` (or `contentByPlatform[platform]`) when creating the post.',
          }),
          characters: t.Integer({ description: 'Its length as the platform counts it, as create counts it; never over `maxChars`.' }),
          maxChars: t.Integer({ description: 'The channel’s `rules.maxChars`.' }),
          reddit: t.Union(
            [
              t.Object(
                {
                  title: t.String({ description: 'A title for the post; the subreddit is yours to choose.' }),
                  characters: t.Integer(),
                  maxChars: t.Integer(),
                },
                strict,
              ),
              t.Null(),
            ],
            { description: 'REDDIT channels: the generated title (Reddit requires one); null elsewhere.' },
          ),
          truncated: t.Boolean({
            description:
              'True when the model’s text was still over a limit after one correction round and was cut at a character (grapheme) boundary to fit.',
          }),
          missingFields: t.Array(t.String(), {
            description:
              'Fields create needs for this channel that a draft cannot choose: `reddit.subreddit`, `mediaIds` (the channel requires media and none was given).',
          }),
        },
        strict,
      ),
      { description: 'One per channel, in the order of `channelIds`.' },
    ),
  },
  strict,
);

/** POST /v1/generate/alt-text: a suggestion from the vision pass; the media item is not changed. */
export const GeneratedAltTextSchema = t.Object(
  {
    mediaId: t.String(),
    altText: t.String({ description: `Suggested alt text (at most ${ALT_TEXT_CHARS} characters, what an upload’s \`altText\` takes).` }),
    characters: t.Integer(),
    truncated: t.Boolean({ description: 'True when the description was longer and was cut at a character boundary.' }),
  },
  strict,
);
