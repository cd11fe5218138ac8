// A post's content, stated once: what its maker writes, as one TypeBox schema. Everything that
// carries a post's content is derived from it:
// - the create body (POST /v1/posts, /validate, /bulk rows, the MCP create_post tool): CREATE_FIELDS;
// - the edit (PATCH /v1/posts/{id}, update_post): EDIT_FIELDS, each field optional, a nullable one removed by null;
// - a series' template: the fields it names, picked from the schema (t.Pick);
// - the stored row: one column per field, named as the field in snake_case (a text field a text
//   column, any other jsonb); the entity declares each (db/entities/post.ts) and StoredContent
//   fails to compile while one is missing;
// - the view (GET /v1/posts/{id}, webhook bodies): every field as stored, `mediaIds` shown as `media`;
// - the CSV columns (domain/posts/csv.ts): every text field is a column of its name.
//
// Rules:
// - `content` is required on create; every other field may be left out (or, where it may be null,
//   given as null), and the post then stores its empty value: null for a field that may be null,
//   [] for a list, {} for an object or a map.
// - A field whose stored value a rule module decides has that module named beside it (its checks
//   beyond its shape); a field with none is stored and shown as given.
//
// Beside the content, a post's tags (TagIds, domain/tags.ts): no part of what is published, so no
// field of the schema and no column of posts, but given in the same bodies (CREATE_FIELDS,
// EDIT_FIELDS) and shown with the post.
import { t } from 'elysia';
import type { Static, TSchema } from '@sinclair/typebox';
import { BodyId, Chars } from '../../lib/chars.ts';
import { PLATFORMS } from '../../platforms/catalog.ts';
import { PostOptions } from '../../platforms/options.ts';
import type { IPost } from '../../db/entities/index.ts';
import { POST_LIMITS } from './limits.ts';
import { TAG_LIMITS } from '../tags.ts';
import { LinkChoiceSchema } from '../links/choice.ts';

/** A post's text (and each per-platform text, thread item, comment): no NUL, no unpaired surrogate; lengths in characters. */
export const Text = Chars(POST_LIMITS.textChars);
const PlatformKey = t.String({ pattern: `^(${PLATFORMS.join('|')})$` });

/** A post's target channels: not content (a series and a feed name them too), bounded as its create body takes them. */
export const ChannelIds = t.Array(BodyId(), { minItems: 1, maxItems: POST_LIMITS.channels, uniqueItems: true });

/** A post's tags (a series' and a feed's too, for the posts they make): ids of the organization's tags (domain/tags.ts). */
export const TagIds = t.Array(BodyId(), {
  maxItems: TAG_LIMITS.perPost,
  uniqueItems: true,
  description: `Tags of the organization (ids from GET /tags), no repeats, at most ${TAG_LIMITS.perPost}; one that is not the organization's is \`422\` at \`tagIds\`. Not published: tags sort and count posts (GET /posts?tagId=, GET /analytics?tagId=). Shown in id order.`,
});

const Reddit = t.Object(
  { subreddit: Chars(POST_LIMITS.subredditChars, { min: 1 }), title: Chars(POST_LIMITS.redditTitleChars, { min: 1 }) },
  { additionalProperties: false },
);

const ThreadItem = t.Object(
  {
    content: Text,
    mediaIds: t.Optional(t.Array(BodyId(), { maxItems: POST_LIMITS.threadItemMedia, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export const Thread = t.Array(ThreadItem, { maxItems: POST_LIMITS.threadItems });

const FirstComment = t.Object({ content: Text }, { additionalProperties: false });

const nullable = <S extends TSchema>(schema: S, description: string) => t.Union([schema, t.Null()], { description });

/** The schema: each field with its bounds and what it means; its rule module, if any, beside it. */
export const PostContent = t.Object(
  {
    // Rule: each channel's text fits its platform (domain/posts/checks.ts channelTexts).
    content: Chars(POST_LIMITS.textChars, {
      description:
        'Default text, used on every channel without its own text in `contentByPlatform`. On each channel the text must fit the channel’s `rules.maxChars`, counted as its platform counts (GET /channels); an empty text needs media.',
    }),
    // Rule: domain/posts/checks.ts loadPostMedia, mediaProblems (ready, the platforms' media limits).
    mediaIds: t.Optional(
      t.Array(BodyId(), {
        maxItems: POST_LIMITS.mediaItems,
        uniqueItems: true,
        description:
          '`ready` media items of the organization to attach, in order (ids from the media library). Each target platform’s media limits apply: how many, which types, a video alone; a channel with `rules.requiresMedia` needs an image or a video.',
      }),
    ),
    // Rule: domain/posts/checks.ts channelTexts (a key must be the platform of a target channel).
    contentByPlatform: t.Optional(
      t.Record(PlatformKey, Text, {
        maxProperties: PLATFORMS.length,
        additionalProperties: false,
        description:
          'Text per platform (upper-case platform name → text), instead of `content` on that platform’s channels. Each key must be the platform of a target channel.',
      }),
    ),
    // Rule: domain/posts/options.ts redditFromOptions; required on a REDDIT channel (checks.ts).
    reddit: t.Optional(nullable(Reddit, 'Subreddit and title; required when a REDDIT channel is targeted. null: none.')),
    // Rule: domain/posts/thread.ts.
    thread: t.Optional(
      nullable(
        Thread,
        'Replies published after the post, in order, each a reply to the item before (X, Bluesky, Mastodon, Threads). Each is checked as a post of its platform; a platform without threads refuses it. null: none.',
      ),
    ),
    threadByPlatform: t.Optional(
      t.Record(PlatformKey, Thread, {
        maxProperties: PLATFORMS.length,
        additionalProperties: false,
        description:
          'A thread per platform (upper-case platform name → items), instead of `thread` there; `[]` publishes the post alone on that platform.',
      }),
    ),
    firstComment: t.Optional(
      nullable(
        FirstComment,
        'A comment under the post on Facebook, Instagram, LinkedIn, YouTube and Reddit; the first reply (before `thread`) on X, Bluesky, Mastodon and Threads. null: none.',
      ),
    ),
    // Rule: domain/posts/options.ts.
    options: t.Optional(PostOptions),
    // Rule: domain/links/choice.ts (absent on create: the organization's default, stored with the post).
    links: t.Optional(LinkChoiceSchema),
  },
  { additionalProperties: false },
);

/** The fields of a post's content, by name. */
export type ContentField = keyof Static<typeof PostContent>;
export const CONTENT_FIELDS = Object.keys(PostContent.properties) as ContentField[];

/** A post's content as given (each field optional but `content`). */
export type ContentBody = Static<typeof PostContent>;
/** A post's content as its row stores it: every field, typed as its column (db/entities/post.ts). */
export type StoredContent = { [K in ContentField]-?: Exclude<IPost[K], undefined> };

type Props = Record<string, TSchema>;
const props = PostContent.properties as unknown as Props;

/** The content fields of a create body: `content` required, the others optional (a nullable one's null: none); and its tags. */
export const CREATE_FIELDS = { ...PostContent.properties, tagIds: t.Optional(TagIds) };
/** An edit of a post's content: each field optional; a nullable field's null removes it. */
export const ContentEdit = t.Partial(PostContent);
/** The content fields of an edit, and its tags (they replace the post's). */
export const EDIT_FIELDS = { ...ContentEdit.properties, tagIds: t.Optional(TagIds) };

/** What a field stores when a post leaves it out: null where it may be null, else an empty list, map or text. */
function emptyOf(schema: TSchema): unknown {
  if ((schema.anyOf as TSchema[] | undefined)?.some((b) => b.type === 'null')) return null;
  if (schema.type === 'array') return [];
  if (schema.type === 'string') return '';
  return {};
}

/** Every field at its empty value: a post's content before its fields are given. */
export const emptyContent = (): StoredContent =>
  Object.fromEntries(CONTENT_FIELDS.map((name) => [name, emptyOf(props[name]!)])) as StoredContent;

/** The content fields given in a body (or an edit), as given: absent ones stay absent. */
export function contentOf(body: object): Partial<StoredContent> {
  const given = body as Record<string, unknown>;
  return Object.fromEntries(CONTENT_FIELDS.filter((f) => given[f] !== undefined).map((f) => [f, given[f]])) as Partial<StoredContent>;
}

/** A text field (or a text that may be null): a text column, a CSV column. */
const isText = (s: TSchema) => s.type === 'string' || (s.anyOf as TSchema[] | undefined)?.some((b) => b.type === 'string') === true;

/** The fields of a post's content that are text (`content` and any other): the CSV columns of a post. */
export const TEXT_FIELDS = CONTENT_FIELDS.filter((f) => isText(props[f]!));

/** A content field's column (the ORM's naming: snake_case). */
const columnOf = (field: ContentField) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The columns of a post's content, each with its SQL placeholder (a text column's plain, any other's jsonb), and its value of a row. */
export const CONTENT_COLUMNS = CONTENT_FIELDS.map((field) => {
  const text = isText(props[field]!);
  const empty = emptyOf(props[field]!);
  return {
    field,
    column: columnOf(field),
    placeholder: text ? '?' : '?::jsonb',
    param: (value: unknown) => (text || value === null ? value : JSON.stringify(value)),
    /** The field's empty value, a new list or object each time (the caller's to change). */
    empty: (): unknown => (Array.isArray(empty) ? [] : empty !== null && typeof empty === 'object' ? {} : empty),
  };
});

/** A row's content as post_page answers it (columns by name, JSON already parsed); every post of a page goes through it. */
export function contentOfRow(row: Record<string, unknown>): StoredContent {
  const out: Record<string, unknown> = {};
  for (const c of CONTENT_COLUMNS) out[c.field] = row[c.column] ?? c.empty();
  return out as StoredContent;
}

/** The schema of the view: each field as stored (present, null where it may be null), but `mediaIds` (shown as `media`). */
export const VIEW_FIELDS = t.Required(t.Omit(PostContent, ['mediaIds'])).properties;

/** The view of a row's content: every field, an absent one at its empty value; `mediaIds` left to the view's `media`. */
export function contentView(post: Partial<StoredContent>): Omit<StoredContent, 'mediaIds'> {
  const out: Record<string, unknown> = {};
  for (const c of CONTENT_COLUMNS) if (c.field !== 'mediaIds') out[c.field] = post[c.field] ?? c.empty();
  return out as Omit<StoredContent, 'mediaIds'>;
}
