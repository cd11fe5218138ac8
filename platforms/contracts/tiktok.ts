// The request and answer shapes of TikTok's Content Posting API v2 (API_VERSIONS.TIKTOK in
// platforms/api-versions.ts) and of the Display API and OAuth endpoints the connector calls, as
// TikTok's reference describes them:
//   - the body of POST /v2/post/publish/video/init/ (Direct Post of a video),
//     https://developers.tiktok.com/doc/content-posting-api-reference-direct-post;
//   - the body of POST /v2/post/publish/content/init/ (a photo post),
//     https://developers.tiktok.com/doc/content-posting-api-reference-photo-post;
//   - the answers the connector reads (creator_info/query, video/init, content/init, status/fetch,
//     video/list, video/query, the token endpoint), each schema naming its page.
// TikTok publishes no typed SDK, so these TypeBox schemas are the contract: platforms/tiktok.ts
// types the bodies it sends by their Static types and reads each answer as Answer<its type>
// (platforms/json.ts), and the local fake (test/fakes/tiktok.ts) checks what it receives against
// them at run time, refusing a request that breaks them as TikTok does, 400 with error code
// invalid_params in TikTok's envelope, and builds its answers as their types. Every request
// object is closed: a field the reference does not list is refused. Every answer object is open
// (TikTok adds fields), and holds only the fields its page documents, with their types.
import { type Static, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
/** An answer: the fields its page documents, and whatever else TikTok sends beside them. */
const open = { additionalProperties: true } as const;
const Count = Type.Integer({ minimum: 0 });

/** post_info.privacy_level as the reference lists it (the creator's creator_info offers some of them). */
export const PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;
export const PrivacyLevel = Type.Union(PRIVACY_LEVELS.map((v) => Type.Literal(v)));
export type PrivacyLevel = Static<typeof PrivacyLevel>;

/** A video's caption (post_info.title) at most: TikTok's limit on a post's text (platforms/catalog.ts states it to clients from here). */
export const VIDEO_TITLE_MAX = 2200;

/** post_info of a video: the caption (title, at most VIDEO_TITLE_MAX UTF-16 units), who sees it, what viewers may do. */
export const VideoPostInfo = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: VIDEO_TITLE_MAX })),
    privacy_level: PrivacyLevel,
    disable_duet: Type.Optional(Type.Boolean()),
    disable_comment: Type.Optional(Type.Boolean()),
    disable_stitch: Type.Optional(Type.Boolean()),
    video_cover_timestamp_ms: Type.Optional(Count),
    brand_content_toggle: Type.Boolean(),
    brand_organic_toggle: Type.Optional(Type.Boolean()),
    is_aigc: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type VideoPostInfo = Static<typeof VideoPostInfo>;

/** source_info of a video sent in chunks to the upload_url video/init answers with. */
export const FileUploadSource = Type.Object(
  { source: Type.Literal('FILE_UPLOAD'), video_size: Count, chunk_size: Count, total_chunk_count: Count },
  closed,
);
export type FileUploadSource = Static<typeof FileUploadSource>;

/** source_info of a video TikTok pulls from a URL under a prefix verified for the app. */
export const PullFromUrlSource = Type.Object({ source: Type.Literal('PULL_FROM_URL'), video_url: Type.String() }, closed);
export type PullFromUrlSource = Static<typeof PullFromUrlSource>;

/** POST /v2/post/publish/video/init/. */
export const VideoInitBody = Type.Object(
  { post_info: VideoPostInfo, source_info: Type.Union([FileUploadSource, PullFromUrlSource]) },
  closed,
);
export type VideoInitBody = Static<typeof VideoInitBody>;

/** post_info of a photo post: no duet, stitch, cover timestamp or AI label; title at most 90, description 4000. */
export const PhotoPostInfo = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 90 })),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    privacy_level: PrivacyLevel,
    disable_comment: Type.Optional(Type.Boolean()),
    auto_add_music: Type.Optional(Type.Boolean()),
    brand_content_toggle: Type.Boolean(),
    brand_organic_toggle: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type PhotoPostInfo = Static<typeof PhotoPostInfo>;

/** source_info of a photo post: 1 to 35 image URLs TikTok pulls, and which of them is the cover. */
export const PhotoSource = Type.Object(
  {
    source: Type.Literal('PULL_FROM_URL'),
    photo_images: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 35 }),
    photo_cover_index: Count,
  },
  closed,
);
export type PhotoSource = Static<typeof PhotoSource>;

/** POST /v2/post/publish/content/init/ (media_type PHOTO is the only one the reference lists). */
export const ContentInitBody = Type.Object(
  {
    post_info: PhotoPostInfo,
    source_info: PhotoSource,
    post_mode: Type.Union([Type.Literal('DIRECT_POST'), Type.Literal('MEDIA_UPLOAD')]),
    media_type: Type.Literal('PHOTO'),
  },
  closed,
);
export type ContentInitBody = Static<typeof ContentInitBody>;

// ---------------------------------------------------------------------------------------------
// Answers. TikTok's API answers in one envelope, `{data, error: {code, message, log_id}}`, with
// error.code "ok" on success (also on 200 answers that carry a failure, whose code says so).

/**
 * The error object of every answer (https://developers.tiktok.com/doc/tiktok-api-v2-error-handling):
 * `code` "ok" or the failure's code, `message` its text, `log_id` the request's trace id.
 */
export const ApiError = Type.Object({ code: Type.String(), message: Type.String(), log_id: Type.String() }, open);
export type ApiError = Static<typeof ApiError>;

/** A refusal: empty `data`, the failure in `error` (the same error-handling page). */
export const ErrorAnswer = Type.Object({ data: Type.Object({}, open), error: ApiError }, open);
export type ErrorAnswer = Static<typeof ErrorAnswer>;

/**
 * `data` of POST /v2/post/publish/creator_info/query/
 * (https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info): who the
 * creator is, the privacy levels they may post with, their own interaction settings (true: turned
 * off in the app) and the longest video they may post.
 */
export const CreatorInfo = Type.Object(
  {
    creator_avatar_url: Type.String(),
    creator_username: Type.String(),
    creator_nickname: Type.String(),
    privacy_level_options: Type.Array(Type.String()),
    comment_disabled: Type.Boolean(),
    duet_disabled: Type.Boolean(),
    stitch_disabled: Type.Boolean(),
    max_video_post_duration_sec: Type.Integer(),
  },
  open,
);
export type CreatorInfo = Static<typeof CreatorInfo>;
export const CreatorInfoAnswer = Type.Object({ data: CreatorInfo, error: ApiError }, open);
export type CreatorInfoAnswer = Static<typeof CreatorInfoAnswer>;

/**
 * `data` of POST /v2/post/publish/video/init/ (Direct Post page): the post's publish_id, and with
 * FILE_UPLOAD the upload_url the chunks are PUT to.
 */
export const VideoInitData = Type.Object({ publish_id: Type.String(), upload_url: Type.Optional(Type.String()) }, open);
export type VideoInitData = Static<typeof VideoInitData>;
export const VideoInitAnswer = Type.Object({ data: VideoInitData, error: ApiError }, open);
export type VideoInitAnswer = Static<typeof VideoInitAnswer>;

/** `data` of POST /v2/post/publish/content/init/ (Photo Post page): the post's publish_id. */
export const ContentInitData = Type.Object({ publish_id: Type.String() }, open);
export type ContentInitData = Static<typeof ContentInitData>;
export const ContentInitAnswer = Type.Object({ data: ContentInitData, error: ApiError }, open);
export type ContentInitAnswer = Static<typeof ContentInitAnswer>;

/** status/fetch's `status` values (Get Post Status page). */
export const POST_STATUSES = ['PROCESSING_UPLOAD', 'PROCESSING_DOWNLOAD', 'SEND_TO_USER_INBOX', 'PUBLISH_COMPLETE', 'FAILED'] as const;
export const PostStatusValue = Type.Union(POST_STATUSES.map((v) => Type.Literal(v)));
export type PostStatusValue = Static<typeof PostStatusValue>;

/**
 * `data` of POST /v2/post/publish/status/fetch/
 * (https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status): the stage,
 * fail_reason when it FAILED, the public post ids (int64s, given once moderation passed, and only
 * for public posts; spelt `publicaly_available_post_id` as TikTok spells it) and the bytes TikTok
 * holds (uploaded_bytes for FILE_UPLOAD, downloaded_bytes for PULL_FROM_URL).
 */
export const PostStatus = Type.Object(
  {
    status: PostStatusValue,
    fail_reason: Type.Optional(Type.String()),
    publicaly_available_post_id: Type.Array(Type.Integer()),
    uploaded_bytes: Type.Optional(Type.Integer()),
    downloaded_bytes: Type.Optional(Type.Integer()),
  },
  open,
);
export type PostStatus = Static<typeof PostStatus>;
export const PostStatusAnswer = Type.Object({ data: PostStatus, error: ApiError }, open);
export type PostStatusAnswer = Static<typeof PostStatusAnswer>;

/**
 * A Video Object (https://developers.tiktok.com/doc/tiktok-api-v2-video-object) as video/list and
 * video/query give it: only the fields asked for in the `fields` query parameter are present.
 * create_time is in Unix seconds; title and video_description hold at most 150 characters.
 */
export const Video = Type.Object(
  {
    id: Type.Optional(Type.String()),
    create_time: Type.Optional(Type.Integer()),
    cover_image_url: Type.Optional(Type.String()),
    share_url: Type.Optional(Type.String()),
    video_description: Type.Optional(Type.String()),
    duration: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    width: Type.Optional(Type.Integer()),
    title: Type.Optional(Type.String()),
    embed_html: Type.Optional(Type.String()),
    embed_link: Type.Optional(Type.String()),
    like_count: Type.Optional(Type.Integer()),
    comment_count: Type.Optional(Type.Integer()),
    share_count: Type.Optional(Type.Integer()),
    view_count: Type.Optional(Type.Integer()),
  },
  open,
);
export type Video = Static<typeof Video>;

/**
 * `data` of POST /v2/video/list/ (https://developers.tiktok.com/doc/tiktok-api-v2-video-list): a
 * page of the creator's public videos, newest first; `cursor` (a Unix time in milliseconds) asks
 * for the next page while `has_more` is true.
 */
export const VideoListData = Type.Object({ videos: Type.Array(Video), cursor: Type.Integer(), has_more: Type.Boolean() }, open);
export type VideoListData = Static<typeof VideoListData>;
export const VideoListAnswer = Type.Object({ data: VideoListData, error: ApiError }, open);
export type VideoListAnswer = Static<typeof VideoListAnswer>;

/**
 * `data` of POST /v2/video/query/ (https://developers.tiktok.com/doc/tiktok-api-v2-video-query):
 * those of the asked video ids that are the creator's own public videos.
 */
export const VideoQueryData = Type.Object({ videos: Type.Array(Video) }, open);
export type VideoQueryData = Static<typeof VideoQueryData>;
export const VideoQueryAnswer = Type.Object({ data: VideoQueryData, error: ApiError }, open);
export type VideoQueryAnswer = Static<typeof VideoQueryAnswer>;

/**
 * POST /v2/oauth/token/'s answer (https://developers.tiktok.com/doc/oauth-user-access-token-management;
 * no envelope): the new access token and its life in seconds, the refresh token (TikTok rotates
 * it) and its life, the user's open_id, the granted scopes (comma-separated) and token_type Bearer.
 */
export const TokenAnswer = Type.Object(
  {
    open_id: Type.String(),
    scope: Type.String(),
    access_token: Type.String(),
    expires_in: Type.Integer(),
    refresh_token: Type.String(),
    refresh_expires_in: Type.Integer(),
    token_type: Type.String(),
  },
  open,
);
export type TokenAnswer = Static<typeof TokenAnswer>;
