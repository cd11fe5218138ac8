// The request shapes of LinkedIn's REST API as its documentation pages describe them, for
// LinkedIn-Version 202609 (API_VERSIONS.LINKEDIN in platforms/api-versions.ts), pages under
// https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/:
//   - posts-api and post-api-schema: the create body of POST /rest/posts;
//   - images-api, videos-api, documents-api: the initializeUpload bodies, and the Videos API's
//     finalizeUpload body;
//   - comments-api: the create body of POST /rest/socialActions/{urn}/comments.
// LinkedIn publishes no typed SDK, so these TypeBox schemas are the contract: platforms/linkedin.ts
// types the bodies it sends by their Static types, and the local fake (test/fakes/linkedin.ts)
// checks what it receives against them at run time and refuses a request that breaks them as
// LinkedIn does (422, the Rest.li input error at the field path). Rest.li refuses a field a
// schema does not have (UNRECOGNIZED_FIELD), so every level is closed.
import { type Static, Type } from '@sinclair/typebox';

const literals = <const T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const closed = { additionalProperties: false } as const;

/** A member or an organization: who posts, comments, or owns an upload. */
export const ActorUrn = Type.String({ pattern: '^urn:li:(person|organization):' });
export type ActorUrn = Static<typeof ActorUrn>;

/** Post visibilities the Posts API documents (CONTAINER: a post inside a group or other container). */
export const VISIBILITIES = ['PUBLIC', 'CONNECTIONS', 'LOGGED_IN', 'CONTAINER'] as const;
export const Visibility = literals(VISIBILITIES);
export type Visibility = Static<typeof Visibility>;

/** The image, video or document of a single-media post (a document needs its title). */
export const MediaContent = Type.Object(
  { id: Type.String(), title: Type.Optional(Type.String()), altText: Type.Optional(Type.String({ maxLength: 4086 })) },
  closed,
);
export type MediaContent = Static<typeof MediaContent>;

/** An article (link) post. */
export const ArticleContent = Type.Object(
  {
    source: Type.String(),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    thumbnail: Type.Optional(Type.String()),
    thumbnailAltText: Type.Optional(Type.String()),
  },
  closed,
);
export type ArticleContent = Static<typeof ArticleContent>;

/** A multi-image post: 2 to 20 images. */
export const MultiImageContent = Type.Object(
  {
    images: Type.Array(Type.Object({ id: Type.String(), altText: Type.Optional(Type.String({ maxLength: 4086 })) }, closed), {
      minItems: 2,
      maxItems: 20,
    }),
  },
  closed,
);
export type MultiImageContent = Static<typeof MultiImageContent>;

/** A post's content: one of media, multiImage or article. */
export const PostContent = Type.Object(
  { media: Type.Optional(MediaContent), multiImage: Type.Optional(MultiImageContent), article: Type.Optional(ArticleContent) },
  closed,
);
export type PostContent = Static<typeof PostContent>;

/** The body of `POST /rest/posts`. */
export const PostBody = Type.Object(
  {
    author: ActorUrn,
    commentary: Type.Optional(Type.String()),
    visibility: Visibility,
    distribution: Type.Object(
      {
        feedDistribution: literals(['MAIN_FEED', 'NONE']),
        targetEntities: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
        thirdPartyDistributionChannels: Type.Optional(Type.Array(Type.String())),
      },
      closed,
    ),
    lifecycleState: literals(['PUBLISHED', 'DRAFT']),
    isReshareDisabledByAuthor: Type.Optional(Type.Boolean()),
    content: Type.Optional(PostContent),
    contentLandingPage: Type.Optional(Type.String()),
    contentCallToActionLabel: Type.Optional(Type.String()),
    adContext: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    reshareContext: Type.Optional(Type.Object({ parent: Type.String(), root: Type.Optional(Type.String()) }, closed)),
    container: Type.Optional(Type.String()),
  },
  closed,
);
export type PostBody = Static<typeof PostBody>;

/** The body of `POST /rest/images?action=initializeUpload`. */
export const InitializeImageUploadBody = Type.Object({ initializeUploadRequest: Type.Object({ owner: ActorUrn }, closed) }, closed);
export type InitializeImageUploadBody = Static<typeof InitializeImageUploadBody>;

/** The body of `POST /rest/documents?action=initializeUpload`. */
export const InitializeDocumentUploadBody = Type.Object({ initializeUploadRequest: Type.Object({ owner: ActorUrn }, closed) }, closed);
export type InitializeDocumentUploadBody = Static<typeof InitializeDocumentUploadBody>;

/** The body of `POST /rest/videos?action=initializeUpload`: the file's size, and whether captions and a thumbnail follow. */
export const InitializeVideoUploadBody = Type.Object(
  {
    initializeUploadRequest: Type.Object(
      {
        owner: ActorUrn,
        fileSizeBytes: Type.Integer({ minimum: 1 }),
        uploadCaptions: Type.Boolean(),
        uploadThumbnail: Type.Boolean(),
      },
      closed,
    ),
  },
  closed,
);
export type InitializeVideoUploadBody = Static<typeof InitializeVideoUploadBody>;

/** The body of `POST /rest/videos?action=finalizeUpload`: each uploaded part's ETag, in order. */
export const FinalizeVideoUploadBody = Type.Object(
  {
    finalizeUploadRequest: Type.Object(
      { video: Type.String({ pattern: '^urn:li:video:' }), uploadToken: Type.String(), uploadedPartIds: Type.Array(Type.String()) },
      closed,
    ),
  },
  closed,
);
export type FinalizeVideoUploadBody = Static<typeof FinalizeVideoUploadBody>;

/**
 * The body of `POST /rest/socialActions/{urn}/comments`: a comment on `object` (the post), or,
 * with `parentComment`, a reply to that comment. The message is text with attributes (mentions),
 * not little text; `content` (media entities) is not checked beyond being a list of objects.
 */
export const CommentBody = Type.Object(
  {
    actor: ActorUrn,
    object: Type.String(),
    message: Type.Object(
      { text: Type.String(), attributes: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))) },
      closed,
    ),
    parentComment: Type.Optional(Type.String({ pattern: '^urn:li:comment:' })),
    content: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  },
  closed,
);
export type CommentBody = Static<typeof CommentBody>;
