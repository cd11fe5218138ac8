// The parameters of Graph's create, comment and moderation edges and the answers the connectors
// read, as Graph's reference pages describe them (each schema names its page): Facebook Pages and
// Instagram at the Graph version platforms/api-versions.ts names (API_VERSIONS.FACEBOOK, which
// Instagram shares), Threads at v1.0 (API_VERSIONS.THREADS). Meta publishes no typed SDK for these
// APIs, so these TypeBox schemas are the contract: the connectors (platforms/meta/facebook.ts,
// instagram.ts, threads.ts, graph.ts) type the parameters they send by their Static types and read
// the answers as `Answer<…>` of them, and the local fake (test/fakes/meta.ts) checks what it
// receives against them at run time, refuses a request that breaks them as Graph does (400, an
// OAuthException with Graph error code 100: "Param … has an invalid value", "The parameter … is
// required"), and builds its answers as their Static types.
// Graph reads every parameter as a string (a form, a query or a JSON body), so each is typed as
// the string it takes: a boolean "true" or "false", an enumeration its documented values, a URL
// absolute, an offset digits. The schemas are open at run time: every request also carries the
// token (access_token), and an upload its file (source) beside them in a multipart body; the fake
// refuses any other parameter that its edge's schema does not name ("Param … is not a valid
// parameter").
import { type Static, type TProperties, type TSchema, Type } from '@sinclair/typebox';

const str = Type.Optional(Type.String());
const bool = Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')]));
const url = Type.Optional(Type.String({ pattern: '^https?://' }));
const oneOf = <const T extends string>(values: readonly T[]) => Type.Optional(Type.Union(values.map((v) => Type.Literal(v))));
const open = { additionalProperties: true } as const;

/** https://developers.facebook.com/docs/graph-api/reference/page/feed#publish (POST /{page-id}/feed). */
export const PageFeedParams = Type.Object({ message: str, link: url, published: bool }, open);
export type PageFeedParams = Static<typeof PageFeedParams>;

/**
 * The photos of a feed post, beside PageFeedParams: attached_media[0], attached_media[1], …, each
 * a JSON object {"media_fbid": "<photo id>"} naming a photo uploaded unpublished to
 * /{page-id}/photos (https://developers.facebook.com/docs/graph-api/photo-uploads).
 */
export const PageFeedAttachedMedia = Type.Record(
  Type.TemplateLiteral([Type.Literal('attached_media['), Type.Number(), Type.Literal(']')]),
  Type.String(),
);
export type PageFeedAttachedMedia = Static<typeof PageFeedAttachedMedia>;

/** https://developers.facebook.com/docs/graph-api/reference/page/photos#publish (POST /{page-id}/photos). */
export const PagePhotoParams = Type.Object({ url, published: bool, message: str, caption: str, no_story: bool, temporary: bool }, open);
export type PagePhotoParams = Static<typeof PagePhotoParams>;

/** https://developers.facebook.com/docs/graph-api/reference/page/videos#publish (POST /{page-id}/videos). */
export const PageVideoParams = Type.Object({ file_url: url, description: str, title: str, published: bool }, open);
export type PageVideoParams = Static<typeof PageVideoParams>;

/** https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media (POST /{ig-user-id}/media). */
export const IgMediaParams = Type.Object(
  {
    image_url: url,
    video_url: url,
    cover_url: url,
    media_type: oneOf(['IMAGE', 'VIDEO', 'REELS', 'STORIES', 'CAROUSEL']),
    is_carousel_item: bool,
    caption: str,
    children: str,
    alt_text: str,
    thumb_offset: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    share_to_feed: bool,
    location_id: str,
    user_tags: str,
    collaborators: str,
  },
  open,
);
export type IgMediaParams = Static<typeof IgMediaParams>;

/** https://developers.facebook.com/docs/threads/reference/publishing (POST /{threads-user-id}/threads). */
export const ThreadsParams = Type.Object(
  {
    media_type: oneOf(['TEXT', 'IMAGE', 'VIDEO', 'CAROUSEL']),
    text: str,
    image_url: url,
    video_url: url,
    is_carousel_item: bool,
    children: str,
    alt_text: str,
    reply_to_id: str,
    reply_control: oneOf(['everyone', 'accounts_you_follow', 'mentioned_only', 'parent_post_author_only', 'followers_only']),
    quote_post_id: str,
    link_attachment: url,
    topic_tag: str,
    location_id: str,
    auto_publish_text: bool,
  },
  open,
);
export type ThreadsParams = Static<typeof ThreadsParams>;

/**
 * POST /{ig-user-id}/media_publish
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media_publish)
 * and POST /{threads-user-id}/threads_publish (https://developers.facebook.com/docs/threads/reference/publishing):
 * the container to publish.
 */
export const PublishParams = Type.Object({ creation_id: Type.String({ minLength: 1 }) }, open);
export type PublishParams = Static<typeof PublishParams>;

/**
 * POST /{object-id}/comments, a comment under a Page post or a reply under a comment
 * (https://developers.facebook.com/docs/graph-api/reference/object/comments#publish): its text
 * (`message`) or an attachment (`attachment_id`, a photo uploaded unpublished;
 * `attachment_url`, an image or GIF at a URL; `attachment_share_url`, a GIF's share URL), at
 * least one of them.
 */
export const PageCommentParams = Type.Object({ message: str, attachment_id: str, attachment_url: url, attachment_share_url: url }, open);
export type PageCommentParams = Static<typeof PageCommentParams>;

/**
 * POST /{comment-id} (https://developers.facebook.com/docs/graph-api/reference/comment#updating):
 * `is_hidden` "true" hides the comment from everyone but its author and the Page's admins, "false"
 * shows it again; `message` and the attachments (as PageCommentParams') edit a comment of the
 * token's own.
 */
export const PageCommentUpdateParams = Type.Object(
  { is_hidden: bool, message: str, attachment_id: str, attachment_url: url, attachment_share_url: url },
  open,
);
export type PageCommentUpdateParams = Static<typeof PageCommentUpdateParams>;

/**
 * POST /{ig-media-id}/comments
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media/comments#creating)
 * and POST /{ig-comment-id}/replies (…/reference/ig-comment/replies#creating): the comment's
 * text, required.
 */
export const IgCommentParams = Type.Object({ message: Type.String() }, open);
export type IgCommentParams = Static<typeof IgCommentParams>;

const requiredBool = Type.Union([Type.Literal('true'), Type.Literal('false')]);

/**
 * POST /{ig-comment-id}
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-comment#updating):
 * `hide`, required: "true" hides the comment from everyone but its author, "false" shows it again.
 */
export const IgCommentUpdateParams = Type.Object({ hide: requiredBool }, open);
export type IgCommentUpdateParams = Static<typeof IgCommentUpdateParams>;

/**
 * POST /{threads-reply-id}/manage_reply (https://developers.facebook.com/docs/threads/reference/reply-management,
 * https://developers.facebook.com/docs/threads/reply-management): `hide`, required: "true" hides
 * a top-level reply (and the replies under it), "false" shows it again. A reply itself is a
 * container with ThreadsParams' `reply_to_id`.
 */
export const ThreadsManageReplyParams = Type.Object({ hide: requiredBool }, open);
export type ThreadsManageReplyParams = Static<typeof ThreadsManageReplyParams>;

/**
 * DELETE /{comment-id} (https://developers.facebook.com/docs/graph-api/reference/comment#deleting),
 * DELETE /{ig-comment-id}
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-comment#deleting)
 * and DELETE /{threads-media-id} (https://developers.facebook.com/docs/threads/posts/delete-posts):
 * no parameter beside the token. The type takes none (a Static of an empty object would take
 * any object).
 */
export const DeleteParams = Type.Object({}, open);
export type DeleteParams = Static<typeof DeleteParams> & Record<string, never>;

// ---- Answers ------------------------------------------------------------------------------
// The bodies Graph answers with, as the same reference pages describe them: only the fields the
// connectors read (and those the fake sends beside them), each with its documented type. Graph
// sends an id as a numeric string, a time as ISO 8601 with a +0000 offset. The objects are open:
// Graph adds fields, and a `fields` list picks among them, so a read answer holds those asked for
// and the id. The connectors read them as `Answer<…>` (platforms/json.ts): any part may be
// missing or null, and each value is still checked before use.

const id = Type.String();
const optional = <T extends TSchema>(schema: T) => Type.Optional(schema);
const literals = <const T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const ref = Type.Object({ id }, open);

/**
 * The answer of a create edge that names only what it made: POST /{page-id}/feed
 * (https://developers.facebook.com/docs/graph-api/reference/page/feed#publish, the post's id
 * `{page-id}_{post-id}`), POST /{page-id}/videos (…/page/videos#publish), POST /{object-id}/comments
 * (https://developers.facebook.com/docs/graph-api/reference/object/comments#publish), the IG
 * container POST /{ig-user-id}/media (…/ig-user/media#creating), POST /{ig-media-id}/comments and
 * /{ig-comment-id}/replies, and the Threads container POST /{threads-user-id}/threads
 * (https://developers.facebook.com/docs/threads/reference/publishing).
 */
export const GraphCreated = Type.Object({ id }, open);
export type GraphCreated = Static<typeof GraphCreated>;

/**
 * POST /{page-id}/photos (https://developers.facebook.com/docs/graph-api/reference/page/photos#publish):
 * the photo's id, and the feed post's (`post_id`) for a published photo; an unpublished upload
 * (published=false, to attach to a feed post) has no post, and the answer carries its id alone.
 */
export const PagePhotoCreated = Type.Object({ id, post_id: optional(Type.String()) }, open);
export type PagePhotoCreated = Static<typeof PagePhotoCreated>;

/**
 * POST /{ig-user-id}/media_publish
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media_publish)
 * and POST /{threads-user-id}/threads_publish (https://developers.facebook.com/docs/threads/reference/publishing):
 * the published media's id.
 */
export const MediaPublished = Type.Object({ id }, open);
export type MediaPublished = Static<typeof MediaPublished>;

/** What a container's status reads as, on Instagram (`status_code`) and Threads (`status`). */
const CONTAINER_STATUS = ['EXPIRED', 'ERROR', 'FINISHED', 'IN_PROGRESS', 'PUBLISHED'] as const;

/**
 * GET /{ig-container-id}?fields=status_code,status
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container):
 * `status_code` one of CONTAINER_STATUS; `status` the publishing status in words, the error
 * subcode's text when `status_code` is ERROR.
 */
export const IgContainer = Type.Object({ id, status_code: optional(literals(CONTAINER_STATUS)), status: optional(Type.String()) }, open);
export type IgContainer = Static<typeof IgContainer>;

/**
 * GET /{threads-container-id}?fields=status,error_message
 * (https://developers.facebook.com/docs/threads/troubleshooting):
 * `status` one of CONTAINER_STATUS; `error_message` on ERROR, one of FAILED_DOWNLOADING_VIDEO,
 * FAILED_PROCESSING_AUDIO, FAILED_PROCESSING_VIDEO, INVALID_ASPEC_RATIO (sic), INVALID_BIT_RATE,
 * INVALID_DURATION, INVALID_FRAME_RATE, INVALID_AUDIO_CHANNELS, INVALID_AUDIO_CHANNEL_LAYOUT,
 * UNKNOWN (a string here: the list is Meta's and grows).
 */
export const ThreadsContainer = Type.Object(
  { id, status: optional(literals(CONTAINER_STATUS)), error_message: optional(Type.String()) },
  open,
);
export type ThreadsContainer = Static<typeof ThreadsContainer>;

/** An edge read with its `summary` (the reactions and comments edges of a Page post): the count, and `more` of the summary's fields. */
const countSummary = <M extends TProperties>(more: M) =>
  optional(
    Type.Object(
      { data: optional(Type.Array(Type.Unknown())), summary: optional(Type.Object({ total_count: Type.Number(), ...more }, open)) },
      open,
    ),
  );

/**
 * A Page post as GET /{post-id} and GET /{page-id}/posts give it
 * (https://developers.facebook.com/docs/graph-api/reference/post): `status_type` one of
 * mobile_status_update, added_photos, added_video, shared_story, … (a string: the list is long);
 * `shares.count`; the `reactions` and `comments` edges read with summary(total_count)
 * (https://developers.facebook.com/docs/graph-api/reference/object/reactions,
 * https://developers.facebook.com/docs/graph-api/reference/object/comments).
 */
export const PagePost = Type.Object(
  {
    id,
    message: optional(Type.String()),
    created_time: optional(Type.String()),
    permalink_url: optional(Type.String()),
    status_type: optional(Type.String()),
    shares: optional(Type.Object({ count: Type.Number() }, open)),
    reactions: countSummary({ viewer_reaction: optional(Type.String()) }),
    comments: countSummary({ order: optional(Type.String()), can_comment: optional(Type.Boolean()) }),
  },
  open,
);
export type PagePost = Static<typeof PagePost>;

/**
 * A Facebook comment as GET /{comment-id} and GET /{object-id}/comments give it
 * (https://developers.facebook.com/docs/graph-api/reference/comment): `from` its author (id and
 * name), `parent` the comment it answers.
 */
export const PageComment = Type.Object(
  {
    id,
    message: optional(Type.String()),
    created_time: optional(Type.String()),
    from: optional(Type.Object({ id, name: optional(Type.String()) }, open)),
    permalink_url: optional(Type.String()),
    parent: optional(Type.Object({ id, message: optional(Type.String()) }, open)),
    is_hidden: optional(Type.Boolean()),
    can_hide: optional(Type.Boolean()),
    can_remove: optional(Type.Boolean()),
  },
  open,
);
export type PageComment = Static<typeof PageComment>;

/**
 * An Instagram media as GET /{ig-media-id}, GET /{ig-user-id}/media and /{ig-user-id}/stories give
 * it (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media):
 * `media_type` CAROUSEL_ALBUM, IMAGE or VIDEO (a string here: the fake keeps the kind a test
 * seeds); `like_count` left out when the owner hides likes.
 */
export const IgMedia = Type.Object(
  {
    id,
    caption: optional(Type.String()),
    media_type: optional(Type.String()),
    permalink: optional(Type.String()),
    shortcode: optional(Type.String()),
    timestamp: optional(Type.String()),
    username: optional(Type.String()),
    like_count: optional(Type.Number()),
    comments_count: optional(Type.Number()),
  },
  open,
);
export type IgMedia = Static<typeof IgMedia>;

const igCommentFields = {
  id,
  text: optional(Type.String()),
  timestamp: optional(Type.String()),
  username: optional(Type.String()),
  from: optional(Type.Object({ id, username: optional(Type.String()) }, open)),
  media: optional(ref),
  hidden: optional(Type.Boolean()),
  parent_id: optional(Type.String()),
};

/**
 * An Instagram comment as GET /{ig-comment-id}, /{ig-media-id}/comments and
 * /{ig-comment-id}/replies give it
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-comment):
 * `parent_id` on a reply, `replies` (a list of comments) on a top-level comment.
 */
export const IgComment = Type.Object(
  { ...igCommentFields, replies: optional(Type.Object({ data: Type.Array(Type.Object(igCommentFields, open)) }, open)) },
  open,
);
export type IgComment = Static<typeof IgComment>;

/**
 * A Threads media as GET /{threads-media-id}, /{threads-user-id}/threads, /{threads-user-id}/replies
 * and /{threads-media-id}/conversation give it
 * (https://developers.facebook.com/docs/threads/threads-media, https://developers.facebook.com/docs/threads/reply-management):
 * `media_type` TEXT_POST, IMAGE, VIDEO, CAROUSEL_ALBUM, AUDIO or REPOST_FACADE (a string here, as
 * IgMedia's); `replied_to` and `root_post` the posts a reply answers and is under; `hide_status`
 * NOT_HUSHED, UNHUSHED, HIDDEN, COVERED, BLOCKED or RESTRICTED.
 */
export const ThreadsMedia = Type.Object(
  {
    id,
    text: optional(Type.String()),
    media_type: optional(Type.String()),
    permalink: optional(Type.String()),
    shortcode: optional(Type.String()),
    timestamp: optional(Type.String()),
    username: optional(Type.String()),
    is_reply: optional(Type.Boolean()),
    is_reply_owned_by_me: optional(Type.Boolean()),
    replied_to: optional(ref),
    root_post: optional(ref),
    hide_status: optional(literals(['NOT_HUSHED', 'UNHUSHED', 'HIDDEN', 'COVERED', 'BLOCKED', 'RESTRICTED'])),
  },
  open,
);
export type ThreadsMedia = Static<typeof ThreadsMedia>;

/**
 * A page of a list (https://developers.facebook.com/docs/graph-api/results): `cursors` to page
 * by, `next` (and `previous`) the URL of the next page, left out on the last.
 */
export const GraphPaging = Type.Object(
  {
    cursors: optional(Type.Object({ before: Type.String(), after: Type.String() }, open)),
    next: optional(Type.String()),
    previous: optional(Type.String()),
  },
  open,
);
export type GraphPaging = Static<typeof GraphPaging>;

/** A list answer (https://developers.facebook.com/docs/graph-api/results): `data` and `paging`. */
export type GraphList<T> = { data: T[]; paging?: GraphPaging };
const list = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), paging: optional(GraphPaging) }, open);

/** GET /{page-id}/posts (https://developers.facebook.com/docs/graph-api/reference/page/feed). */
export const PagePostList = list(PagePost);
export type PagePostList = Static<typeof PagePostList>;
/** GET /{object-id}/comments (https://developers.facebook.com/docs/graph-api/reference/object/comments). */
export const PageCommentList = list(PageComment);
export type PageCommentList = Static<typeof PageCommentList>;
/**
 * GET /{ig-user-id}/media and /{ig-user-id}/stories
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reading,
 * …/ig-user/stories).
 */
export const IgMediaList = list(IgMedia);
export type IgMediaList = Static<typeof IgMediaList>;
/** GET /{ig-media-id}/comments and /{ig-comment-id}/replies (…/reference/ig-media/comments, …/ig-comment/replies). */
export const IgCommentList = list(IgComment);
export type IgCommentList = Static<typeof IgCommentList>;
/**
 * GET /{threads-user-id}/threads, /{threads-user-id}/replies and /{threads-media-id}/conversation
 * (https://developers.facebook.com/docs/threads/threads-media, https://developers.facebook.com/docs/threads/reply-management).
 */
export const ThreadsMediaList = list(ThreadsMedia);
export type ThreadsMediaList = Static<typeof ThreadsMediaList>;

/**
 * GET /{threads-media-id}/insights (https://developers.facebook.com/docs/threads/insights): one
 * entry per metric asked, its lifetime count the first of `values`.
 */
export const ThreadsInsights = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          period: optional(Type.String()),
          values: optional(Type.Array(Type.Object({ value: Type.Number() }, open))),
          title: optional(Type.String()),
          description: optional(Type.String()),
          id: optional(Type.String()),
        },
        open,
      ),
    ),
  },
  open,
);
export type ThreadsInsights = Static<typeof ThreadsInsights>;

/**
 * GET /refresh_access_token with grant_type ig_refresh_token
 * (https://developers.facebook.com/docs/instagram-platform/reference/refresh_access_token) or
 * th_refresh_token (https://developers.facebook.com/docs/threads/get-started/long-lived-tokens):
 * the token (the same string or a new one) and its life in seconds.
 */
export const RefreshedToken = Type.Object({ access_token: Type.String(), token_type: Type.String(), expires_in: Type.Number() }, open);
export type RefreshedToken = Static<typeof RefreshedToken>;

/**
 * A write Graph answers with its outcome alone: a node update (POST /{comment-id} is_hidden,
 * https://developers.facebook.com/docs/graph-api/reference/comment#updating; POST /{ig-comment-id}
 * hide), Threads' POST /{threads-reply-id}/manage_reply (https://developers.facebook.com/docs/threads/reply-management),
 * a DELETE /{id} (Threads also names the deleted id, https://developers.facebook.com/docs/threads/posts/delete-posts).
 */
export const GraphSuccess = Type.Object({ success: Type.Boolean(), deleted_id: optional(Type.String()) }, open);
export type GraphSuccess = Static<typeof GraphSuccess>;

/**
 * Graph's error, the `error` of an answer that is not 2xx
 * (https://developers.facebook.com/docs/graph-api/guides/error-handling): `message`, `type`
 * (OAuthException, GraphMethodException, …), `code` and `error_subcode`, the user-facing
 * `error_user_title` and `error_user_msg`, `fbtrace_id`; `is_transient` is in Instagram's
 * sample error
 * (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes).
 */
export const GraphErrorDetail = Type.Object(
  {
    message: Type.String(),
    type: Type.String(),
    code: Type.Number(),
    error_subcode: optional(Type.Number()),
    is_transient: optional(Type.Boolean()),
    error_user_title: optional(Type.String()),
    error_user_msg: optional(Type.String()),
    fbtrace_id: Type.String(),
  },
  open,
);
export type GraphErrorDetail = Static<typeof GraphErrorDetail>;

/** The body of a Graph error answer: `{"error": GraphErrorDetail}`. */
export const GraphError = Type.Object({ error: GraphErrorDetail }, open);
export type GraphError = Static<typeof GraphError>;
