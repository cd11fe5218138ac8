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
//   - the answers the connector reads (the api_type=json answers of submit, the gallery submit,
//     comment and morechildren, the media lease, the account's submissions and comments as
//     Listings, a post's comment tree, /api/info, the account's identity, a subreddit's about
//     page, link flairs and post requirements, an HTTP error's body, the token endpoint), each
//     schema naming where its fields are written down: the API reference, the JSON reference of
//     Reddit's own wiki (https://github.com/reddit-archive/reddit/wiki/JSON), Reddit's
//     open-sourced server (reddit-archive/reddit: r2/r2/controllers/api.py, the JSON templates of
//     r2/r2/lib/jsontemplates.py), its OAuth2 wiki page, or PRAW where no page of Reddit's covers
//     them; a field only other clients' code names says which.
// Reddit publishes no typed SDK, so these TypeBox schemas are the contract: platforms/reddit.ts
// types the fields it sends by their Static types (a form's before it is url-encoded) and reads
// each answer as Answer<its type> (platforms/json.ts), and the local fake (test/fakes/reddit.ts)
// checks what it receives against them at run time, refusing a request that breaks them as Reddit
// does with api_type=json: 200 with `{"json": {"errors": [[code, message, field]]}}`, and builds
// its answers as their types. Every request object is closed: a field the documentation does not
// list is refused. Every answer object is open (Reddit adds fields), and holds only the fields
// its source names, with their types; a field no written source names but Reddit's answers carry
// says so where it is declared.
import { type Static, type TSchema, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
/** An answer: the fields its source names, and whatever else Reddit sends beside them. */
const open = { additionalProperties: true } as const;
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

// ---------------------------------------------------------------------------------------------
// Answers.

/**
 * One of `json.errors`: [code, message, field] (the JsonResponse of Reddit's server,
 * r2/r2/lib/jsonresponse.py, which api_type=json selects; the field is null where no form field
 * is at fault).
 */
export const ApiErrorEntry = Type.Tuple([Type.String(), Type.String(), Type.Union([Type.String(), Type.Null()])]);
export type ApiErrorEntry = Static<typeof ApiErrorEntry>;

/**
 * An api_type=json answer (the same JsonResponse): `json.errors` (empty on success),
 * `json.ratelimit` (seconds until a RATELIMIT lifts, beside that error) and `json.data`, what the
 * endpoint sends back on success.
 */
const jsonAnswer = <T extends TSchema>(data: T) =>
  Type.Object(
    {
      json: Type.Object({ errors: Type.Array(ApiErrorEntry), ratelimit: Type.Optional(Type.Number()), data: Type.Optional(data) }, open),
    },
    open,
  );

/** A refusal with api_type=json: `json.errors` and nothing else of use. */
export const RefusalAnswer = Type.Object(
  { json: Type.Object({ errors: Type.Array(ApiErrorEntry), ratelimit: Type.Optional(Type.Number()) }, open) },
  open,
);
export type RefusalAnswer = Static<typeof RefusalAnswer>;

/**
 * `json.data` of POST /api/submit. A text or link post is made at once: its permalink `url`, `id`
 * (base 36) and fullname `name` (r2's POST_submit sends these three). A media post (kind image,
 * video, videogif) is made once Reddit has processed the media: the answer holds the
 * `websocket_url` that reports it (PRAW's submit_image and submit_video read it) and
 * `user_submitted_page`, the account's submissions page (Reddit's answers carry it; no written
 * source names it). `drafts_count` (the account's drafts) likewise comes with a text post in
 * Reddit's answers and no written source names it.
 */
export const SubmitData = Type.Object(
  {
    url: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Fullname),
    drafts_count: Type.Optional(Type.Integer()),
    user_submitted_page: Type.Optional(Type.String()),
    websocket_url: Type.Optional(Type.String()),
  },
  open,
);
export type SubmitData = Static<typeof SubmitData>;
export const SubmitAnswer = jsonAnswer(SubmitData);
export type SubmitAnswer = Static<typeof SubmitAnswer>;

/**
 * `json.data` of POST /api/submit_gallery_post.json: the gallery's `url` (PRAW's submit_gallery
 * reads it, …/comments/{id}/… or …/gallery/{id}).
 */
export const GalleryData = Type.Object({ url: Type.String() }, open);
export type GalleryData = Static<typeof GalleryData>;
export const GalleryAnswer = jsonAnswer(GalleryData);
export type GalleryAnswer = Static<typeof GalleryAnswer>;

/**
 * A Listing (the JSON wiki's "listing"): a page of things, `after` and `before` the fullnames
 * that page on (null at an end). `dist` (the count on this page) is in Reddit's answers though
 * the wiki, which predates it, does not name it.
 */
const listing = <T extends TSchema>(thing: T) =>
  Type.Object(
    {
      kind: Type.Literal('Listing'),
      data: Type.Object(
        {
          after: Type.Union([Type.String(), Type.Null()]),
          before: Type.Union([Type.String(), Type.Null()]),
          dist: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
          modhash: Type.Optional(Type.String()),
          children: Type.Array(thing),
        },
        open,
      ),
    },
    open,
  );

/**
 * A comment (t1) as the JSON wiki's "comment" has it, with the thing's `id` and `name`, and
 * `created_utc` in Unix seconds; `replies` its replies' Listing, or "" when it has none (the
 * Listing's things are left untyped here). `permalink` is in Reddit's answers though the wiki,
 * which predates it, does not name it; the connector reads it. `depth` (its level in a comment
 * tree, 0 at the top) comes with a tree's comments in Reddit's answers; no written source names it.
 */
export const Comment = Type.Object(
  {
    id: Type.String(),
    name: Fullname,
    link_id: Fullname,
    parent_id: Fullname,
    body: Type.String(),
    author: Type.String(),
    subreddit: Type.String(),
    permalink: Type.String(),
    created_utc: Type.Number(),
    score: Type.Integer(),
    depth: Type.Optional(Type.Integer()),
    replies: Type.Union([Type.Literal(''), listing(Type.Unknown())]),
  },
  open,
);
export type Comment = Static<typeof Comment>;
export const CommentThing = Type.Object({ kind: Type.Literal('t1'), data: Comment }, open);
export type CommentThing = Static<typeof CommentThing>;

/**
 * A `more` stub (the JSON wiki's "more"): the ids of comments a tree or a morechildren answer
 * leaves out, under `parent_id`; `count`, `depth`, `id` and `name` are in Reddit's answers though
 * the wiki names only `children`.
 */
export const More = Type.Object(
  {
    children: Type.Array(Type.String()),
    count: Type.Optional(Type.Integer()),
    depth: Type.Optional(Type.Integer()),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    parent_id: Type.Optional(Fullname),
  },
  open,
);
export type More = Static<typeof More>;
export const MoreThing = Type.Object({ kind: Type.Literal('more'), data: More }, open);
export type MoreThing = Static<typeof MoreThing>;

/** `json.data` of POST /api/comment: the new comment, as `things[0]` (r2's POST_comment). */
export const CommentData = Type.Object({ things: Type.Array(CommentThing) }, open);
export type CommentData = Static<typeof CommentData>;
export const CommentAnswer = jsonAnswer(CommentData);
export type CommentAnswer = Static<typeof CommentAnswer>;

/** `json.data` of /api/morechildren: the comments asked for, flat, and a `more` stub for the rest. */
export const MoreChildrenData = Type.Object({ things: Type.Array(Type.Union([CommentThing, MoreThing])) }, open);
export type MoreChildrenData = Static<typeof MoreChildrenData>;
export const MoreChildrenAnswer = jsonAnswer(MoreChildrenData);
export type MoreChildrenAnswer = Static<typeof MoreChildrenAnswer>;

/**
 * A submission (t3) as the JSON wiki's "link" has it, with the thing's `id` and `name`, and
 * `created_utc` in Unix seconds. `subreddit_name_prefixed` and `is_video` are in Reddit's answers
 * though the wiki, which predates them, does not name them.
 */
export const Link = Type.Object(
  {
    id: Type.String(),
    name: Fullname,
    title: Type.String(),
    subreddit: Type.String(),
    subreddit_name_prefixed: Type.Optional(Type.String()),
    author: Type.String(),
    permalink: Type.String(),
    url: Type.String(),
    created_utc: Type.Number(),
    is_self: Type.Boolean(),
    is_video: Type.Optional(Type.Boolean()),
    selftext: Type.String(),
    score: Type.Integer(),
    ups: Type.Integer(),
    num_comments: Type.Integer(),
  },
  open,
);
export type Link = Static<typeof Link>;
export const LinkThing = Type.Object({ kind: Type.Literal('t3'), data: Link }, open);
export type LinkThing = Static<typeof LinkThing>;

/** GET /user/{name}/submitted (https://www.reddit.com/dev/api/#GET_user_{username}_{where}): a Listing of t3s. */
export const LinkListing = listing(LinkThing);
export type LinkListing = Static<typeof LinkListing>;

/** GET /user/{name}/comments (https://www.reddit.com/dev/api/#GET_user_{username}_{where}): a Listing of t1s. */
export const CommentListing = listing(CommentThing);
export type CommentListing = Static<typeof CommentListing>;

/**
 * GET /comments/{article} (https://www.reddit.com/dev/api/#GET_comments_{article}): two Listings,
 * the post (one t3) and its comment tree, whose things are comments (t1, each with its replies)
 * and `more` stubs. The reference describes no answer; the pair is what PRAW's Submission reads
 * (its _fetch takes the submission from the first Listing and the comments from the second).
 */
export const TreeListing = listing(Type.Union([CommentThing, MoreThing]));
export type TreeListing = Static<typeof TreeListing>;
export const CommentTree = Type.Tuple([LinkListing, TreeListing]);
export type CommentTree = Static<typeof CommentTree>;

/**
 * GET /api/info (https://www.reddit.com/dev/api/#GET_api_info): a Listing of the things named by
 * fullname that Reddit has (links, comments and subreddits; one it does not have is left out). The
 * connector names submissions (t3) and comments (t1) only, so those are the things typed here.
 */
export const InfoListing = listing(Type.Union([LinkThing, CommentThing]));
export type InfoListing = Static<typeof InfoListing>;

/**
 * GET /api/v1/me (https://www.reddit.com/dev/api/#GET_api_v1_me, "the identity of the user"): the
 * account's fields, unwrapped (no kind/data), as r2's IdentityJsonTemplate writes them: `name` the
 * username, `id` (base 36; t2_ + id is its fullname), `created_utc`, the karma counts, and, for the
 * account itself, `is_suspended`. The JSON wiki's "account" names all of them but is_suspended.
 */
export const IdentityAnswer = Type.Object(
  {
    name: Type.String(),
    id: Type.String(),
    created_utc: Type.Optional(Type.Number()),
    link_karma: Type.Optional(Type.Integer()),
    comment_karma: Type.Optional(Type.Integer()),
    has_verified_email: Type.Optional(Type.Boolean()),
    is_gold: Type.Optional(Type.Boolean()),
    is_mod: Type.Optional(Type.Boolean()),
    is_suspended: Type.Optional(Type.Boolean()),
  },
  open,
);
export type IdentityAnswer = Static<typeof IdentityAnswer>;

/** A subreddit's `submission_type` (the JSON wiki's "subreddit"): the kinds of post it takes. */
export const SUBMISSION_TYPES = ['any', 'link', 'self'] as const;

/**
 * A subreddit (t5) as GET /r/{sr}/about (https://www.reddit.com/dev/api/#GET_r_{subreddit}_about)
 * sends it: the JSON wiki's "subreddit" and r2's SubredditJsonTemplate name `display_name` (its
 * name without r/), `url` (/r/{name}/), `subreddit_type` (public, private, restricted, …),
 * `submission_type` (any, link or self), `over18` and `user_is_banned`, `user_is_contributor`,
 * `user_is_moderator` (null where the user may not see the subreddit), with the thing's `id` and
 * `name` (t5_…). `display_name_prefixed`, `allow_images`, `allow_videos`, `allow_galleries`,
 * `link_flair_enabled` and `can_assign_link_flair` are in Reddit's answers and named only by
 * other clients' code (snuze's API reference, compiled from Reddit's answers, and the subreddit
 * types of JavaScript and Rust clients).
 */
export const Subreddit = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    display_name: Type.String(),
    display_name_prefixed: Type.Optional(Type.String()),
    url: Type.String(),
    subreddit_type: Type.String(),
    submission_type: literals(SUBMISSION_TYPES),
    over18: Type.Boolean(),
    allow_images: Type.Optional(Type.Boolean()),
    allow_videos: Type.Optional(Type.Boolean()),
    allow_galleries: Type.Optional(Type.Boolean()),
    link_flair_enabled: Type.Optional(Type.Boolean()),
    can_assign_link_flair: Type.Optional(Type.Boolean()),
    user_is_banned: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    user_is_contributor: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    user_is_moderator: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  open,
);
export type Subreddit = Static<typeof Subreddit>;
export const SubredditThing = Type.Object({ kind: Type.Literal('t5'), data: Subreddit }, open);
export type SubredditThing = Static<typeof SubredditThing>;

/**
 * One link flair template of GET /r/{sr}/api/link_flair_v2
 * (https://www.reddit.com/dev/api/#GET_api_link_flair_v2, "a list of available link
 * flair": the reference describes no fields). Its fields are named only by other clients' code:
 * `id` (the template id /api/submit takes as flair_id), `text`, `type` (text or richtext),
 * `text_editable`, `mod_only`, `richtext` (its parts, left untyped here), `text_color`,
 * `background_color` (Reddit.NET's FlairV2); `allowable_content`, `max_emojis` and `css_class`
 * (Devvit's FlairTemplate and other clients' flair types).
 */
export const LinkFlair = Type.Object(
  {
    id: Type.String(),
    text: Type.String(),
    type: Type.String(),
    text_editable: Type.Boolean(),
    mod_only: Type.Boolean(),
    richtext: Type.Array(Type.Object({}, open)),
    text_color: Type.String(),
    background_color: Type.String(),
    allowable_content: Type.Optional(Type.String()),
    max_emojis: Type.Optional(Type.Integer()),
    css_class: Type.Optional(Type.String()),
  },
  open,
);
export type LinkFlair = Static<typeof LinkFlair>;
export const LinkFlairList = Type.Array(LinkFlair);
export type LinkFlairList = Static<typeof LinkFlairList>;

/** post_requirements' `body_restriction_policy`: a text post's body required, not allowed, or optional. */
export const BODY_RESTRICTION_POLICIES = ['required', 'notAllowed', 'none'] as const;
/** A number a subreddit may set, null where it sets none. */
const Bound = Type.Union([Type.Integer(), Type.Null()]);
const Strings = Type.Array(Type.String());

/**
 * GET /api/v1/{sr}/post_requirements
 * (https://www.reddit.com/dev/api/#GET_api_v1_{subreddit}_post_requirements): the rules a
 * subreddit's moderators set for a post. The reference lists `body_blacklisted_strings`,
 * `body_restriction_policy` (required, notAllowed or none), `domain_blacklist`,
 * `domain_whitelist`, `is_flair_required`, `title_blacklisted_strings`,
 * `title_required_strings`, `title_text_max_length` and `title_text_min_length` (null where the
 * subreddit sets no bound, in Reddit's answers), calling its list non-exhaustive; the others are
 * in Reddit's answers and named only by other clients' code (snoots' PostRequirements).
 */
export const PostRequirements = Type.Object(
  {
    body_blacklisted_strings: Strings,
    body_restriction_policy: literals(BODY_RESTRICTION_POLICIES),
    domain_blacklist: Strings,
    domain_whitelist: Strings,
    is_flair_required: Type.Boolean(),
    title_blacklisted_strings: Strings,
    title_required_strings: Strings,
    title_text_max_length: Bound,
    title_text_min_length: Bound,
    body_regexes: Type.Optional(Strings),
    body_required_strings: Type.Optional(Strings),
    body_text_max_length: Type.Optional(Bound),
    body_text_min_length: Type.Optional(Bound),
    title_regexes: Type.Optional(Strings),
    gallery_captions_requirement: Type.Optional(Type.String()),
    gallery_max_items: Type.Optional(Bound),
    gallery_min_items: Type.Optional(Bound),
    gallery_urls_requirement: Type.Optional(Type.String()),
    guidelines_display_policy: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    guidelines_text: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    link_repost_age: Type.Optional(Bound),
    link_restriction_policy: Type.Optional(Type.String()),
  },
  open,
);
export type PostRequirements = Static<typeof PostRequirements>;

/**
 * The body of an HTTP error (r2's ErrorController, r2/r2/controllers/error.py): `error` the HTTP
 * status and `message` its text; a refusal Reddit names (r2/r2/lib/errors.py, reddit_http_error)
 * adds `reason`, its code, and `explanation`. Reddit's refusal of a subreddit's about page
 * carries such a `reason` (e.g. private); which codes it sends there no written source lists.
 */
export const HttpErrorAnswer = Type.Object(
  {
    error: Type.Integer(),
    message: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    explanation: Type.Optional(Type.String()),
  },
  open,
);
export type HttpErrorAnswer = Static<typeof HttpErrorAnswer>;

/**
 * POST /api/media/asset.json's answer, the upload lease (the reference does not list it; PRAW's
 * media upload reads `args.action`, scheme-relative, `args.fields` as name/value pairs to POST
 * before the file, `asset.asset_id` and `asset.websocket_url`). `processing_state` and `payload`
 * are in Reddit's answers; no written source names them.
 */
export const LeaseAnswer = Type.Object(
  {
    args: Type.Object(
      { action: Type.String(), fields: Type.Array(Type.Object({ name: Type.String(), value: Type.String() }, open)) },
      open,
    ),
    asset: Type.Object(
      {
        asset_id: Type.String(),
        websocket_url: Type.String(),
        processing_state: Type.Optional(Type.String()),
        payload: Type.Optional(Type.Object({ filepath: Type.String() }, open)),
      },
      open,
    ),
  },
  open,
);
export type LeaseAnswer = Static<typeof LeaseAnswer>;

/**
 * POST /api/v1/access_token's answer (https://github.com/reddit-archive/reddit/wiki/OAuth2): the
 * access token, token_type bearer, its life in seconds and the granted scopes (space-separated);
 * a refresh_token only where Reddit issues a new one.
 */
export const TokenAnswer = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.String(),
    expires_in: Type.Integer(),
    scope: Type.String(),
    refresh_token: Type.Optional(Type.String()),
  },
  open,
);
export type TokenAnswer = Static<typeof TokenAnswer>;

/** The token endpoint's refusal of a grant (the OAuth2 wiki page): `error`, e.g. invalid_grant, with 200 or 400. */
export const TokenRefusal = Type.Object({ error: Type.String() }, open);
export type TokenRefusal = Static<typeof TokenRefusal>;
