// The request shapes of TikTok's Content Posting API v2 (API_VERSIONS.TIKTOK in
// platforms/api-versions.ts) as its reference describes them:
//   - the body of POST /v2/post/publish/video/init/ (Direct Post of a video),
//     https://developers.tiktok.com/doc/content-posting-api-reference-direct-post;
//   - the body of POST /v2/post/publish/content/init/ (a photo post),
//     https://developers.tiktok.com/doc/content-posting-api-reference-photo-post.
// TikTok publishes no typed SDK, so these TypeBox schemas are the contract: platforms/tiktok.ts
// types the bodies it sends by their Static types, and the local fake (test/fakes/tiktok.ts)
// checks what it receives against them at run time and refuses a request that breaks them as
// TikTok does, 400 with error code invalid_params in TikTok's envelope. Every object is closed:
// a field the reference does not list is refused.
import { type Static, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
const Count = Type.Integer({ minimum: 0 });

/** post_info.privacy_level as the reference lists it (the creator's creator_info offers some of them). */
export const PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;
export const PrivacyLevel = Type.Union(PRIVACY_LEVELS.map((v) => Type.Literal(v)));
export type PrivacyLevel = Static<typeof PrivacyLevel>;

/** post_info of a video: the caption (title, at most 2200 UTF-16 units), who sees it, what viewers may do. */
export const VideoPostInfo = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 2200 })),
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
