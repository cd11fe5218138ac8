// The parameters of Graph's create edges as Graph's reference pages describe them (each schema
// names its page): Facebook Pages and Instagram at the Graph version platforms/api-versions.ts
// names (API_VERSIONS.FACEBOOK, which Instagram shares), Threads at v1.0 (API_VERSIONS.THREADS).
// Meta publishes no typed SDK for these APIs, so these TypeBox schemas are the contract: the
// connectors (platforms/meta/facebook.ts, instagram.ts, threads.ts) type the parameters they send
// by their Static types, and the local fake (test/fakes/meta.ts) checks what it receives against
// them at run time and refuses a request that breaks them as Graph does: 400, an OAuthException
// with Graph error code 100 ("Param … has an invalid value", "The parameter … is required").
// Graph reads every parameter as a string (a form, a query or a JSON body), so each is typed as
// the string it takes: a boolean "true" or "false", an enumeration its documented values, a URL
// absolute, an offset digits. The schemas are open at run time: every request also carries the
// token (access_token), and an upload its file (source) beside them in a multipart body; the fake
// refuses any other parameter that its edge's schema does not name ("Param … is not a valid
// parameter").
import { type Static, Type } from '@sinclair/typebox';

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
