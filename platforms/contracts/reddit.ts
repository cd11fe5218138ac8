// The request shapes of Reddit's API (unversioned, on oauth.reddit.com) as its documentation
// describes them:
//   - the form of POST /api/submit, https://www.reddit.com/dev/api/#POST_api_submit;
//   - the form of POST /api/comment, https://www.reddit.com/dev/api/#POST_api_comment;
//   - the JSON body of POST /api/submit_gallery_post.json and the form of POST
//     /api/media/asset.json (the media upload lease), which the API reference does not list: their
//     fields are those PRAW (the Python Reddit API Wrapper) sends
//     (https://praw.readthedocs.io/en/stable/code_overview/models/subreddit.html, submit_gallery
//     and the media upload it makes), with submit's meaning and limits for the fields the two
//     share.
// Reddit publishes no typed SDK, so these TypeBox schemas are the contract: platforms/reddit.ts
// types the fields it sends by their Static types (a form's before it is url-encoded), and the
// local fake (test/fakes/reddit.ts) checks what it receives against them at run time and refuses
// a request that breaks them as Reddit does with api_type=json: 200 with
// `{"json": {"errors": [[code, message, field]]}}`. Every object is closed: a field the
// documentation does not list is refused.
import { type Static, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
/** A boolean form field, as a form carries it. */
const Flag = Type.Optional(literals(['true', 'false']));
/** `sr`: a subreddit's name, with or without its r/ prefix. */
const SubredditName = Type.String({ pattern: '^(/?r/)?[A-Za-z0-9][A-Za-z0-9_]{1,20}$' });
/** Reddit's bounds on the fields a post's options carry (platforms/options.ts states them to clients from here). */
export const REDDIT_FIELD_LIMITS = {
  /** A post's title. */
  title: 300,
  /** A link flair template's id: a UUID. */
  flairId: 36,
  flairText: 64,
} as const;
const FlairId = Type.String({ maxLength: REDDIT_FIELD_LIMITS.flairId });
const FlairText = Type.String({ maxLength: REDDIT_FIELD_LIMITS.flairText });
const Title = Type.String({ maxLength: REDDIT_FIELD_LIMITS.title });

/** `kind` of /api/submit. */
export const SUBMIT_KINDS = ['link', 'self', 'image', 'video', 'videogif'] as const;
export const SubmitKind = literals(SUBMIT_KINDS);
export type SubmitKind = Static<typeof SubmitKind>;

/**
 * POST /api/submit's form fields (every value a string, as a form has them). `sr` and `title`
 * are required by Reddit, which reports their absence as SUBREDDIT_REQUIRED and NO_TEXT.
 */
export const SubmitForm = Type.Object(
  {
    api_type: Type.Literal('json'),
    sr: Type.Optional(SubredditName),
    kind: SubmitKind,
    title: Type.Optional(Title),
    text: Type.Optional(Type.String()),
    richtext_json: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    video_poster_url: Type.Optional(Type.String()),
    flair_id: Type.Optional(FlairId),
    flair_text: Type.Optional(FlairText),
    nsfw: Flag,
    spoiler: Flag,
    sendreplies: Flag,
    resubmit: Flag,
    ad: Flag,
    app: Type.Optional(Type.String()),
    collection_id: Type.Optional(Type.String()),
    event_start: Type.Optional(Type.String()),
    event_end: Type.Optional(Type.String()),
    event_tz: Type.Optional(Type.String()),
    extension: Type.Optional(Type.String()),
    'g-recaptcha-response': Type.Optional(Type.String()),
    uh: Type.Optional(Type.String()),
  },
  closed,
);
export type SubmitForm = Static<typeof SubmitForm>;

/** A thing's fullname: its type prefix (t1 a comment, t3 a submission, …) and its base-36 id. */
export const Fullname = Type.String({ pattern: '^t[1-6]_[0-9a-z]+$' });

/**
 * POST /api/comment's form fields: `thing_id` the fullname answered (a submission, a comment or
 * a message), `text` the markdown (Reddit reports an empty one as NO_TEXT).
 */
export const CommentForm = Type.Object(
  {
    api_type: Type.Literal('json'),
    thing_id: Fullname,
    text: Type.Optional(Type.String()),
    richtext_json: Type.Optional(Type.String()),
    return_rtjson: Flag,
    recaptcha_token: Type.Optional(Type.String()),
    uh: Type.Optional(Type.String()),
  },
  closed,
);
export type CommentForm = Static<typeof CommentForm>;

/** One image of a gallery: the asset id of its upload lease, a caption (180 at most), a link. */
export const GalleryItem = Type.Object(
  {
    media_id: Type.String({ minLength: 1 }),
    caption: Type.Optional(Type.String({ maxLength: 180 })),
    outbound_url: Type.Optional(Type.String()),
  },
  closed,
);
export type GalleryItem = Static<typeof GalleryItem>;

/**
 * POST /api/submit_gallery_post.json's JSON body: booleans are JSON booleans here, not form
 * strings. `text` is the post's body, as in /api/submit: PRAW sends none, Reddit's own web
 * client sends a gallery with the submission fields of a text post.
 */
export const GalleryBody = Type.Object(
  {
    api_type: Type.Literal('json'),
    sr: Type.Optional(SubredditName),
    title: Type.Optional(Title),
    items: Type.Array(GalleryItem),
    text: Type.Optional(Type.String()),
    flair_id: Type.Optional(FlairId),
    flair_text: Type.Optional(FlairText),
    nsfw: Type.Optional(Type.Boolean()),
    spoiler: Type.Optional(Type.Boolean()),
    sendreplies: Type.Optional(Type.Boolean()),
    show_error_list: Type.Optional(Type.Boolean()),
    validate_on_submit: Type.Optional(Type.Boolean()),
    collection_id: Type.Optional(Type.String()),
    /** CHAT: a live chat instead of threaded comments. */
    discussion_type: Type.Optional(Type.Literal('CHAT')),
  },
  closed,
);
export type GalleryBody = Static<typeof GalleryBody>;

/** The media types an upload lease is given for. */
export const LEASE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'video/mp4', 'video/quicktime'] as const;
export const LeaseMimeType = literals(LEASE_MIME_TYPES);
export type LeaseMimeType = Static<typeof LeaseMimeType>;

/** POST /api/media/asset.json's form fields: the file's name and its media type. */
export const AssetLeaseForm = Type.Object({ filepath: Type.String({ minLength: 1 }), mimetype: LeaseMimeType }, closed);
export type AssetLeaseForm = Static<typeof AssetLeaseForm>;
