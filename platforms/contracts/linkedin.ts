// The request and answer shapes of LinkedIn's REST API as its documentation pages describe them,
// for LinkedIn-Version 202609 (API_VERSIONS.LINKEDIN in platforms/api-versions.ts), pages under
// https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/:
//   - posts-api and post-api-schema: the create body of POST /rest/posts, and a post as read back;
//   - images-api, videos-api, documents-api: the initializeUpload bodies and answers, the Videos
//     API's finalizeUpload body, and an upload's state (GET /rest/{images,videos,documents}/{urn});
//   - comments-api: the create body of POST /rest/socialActions/{urn}/comments, a comment, and a
//     list of them; network-update-social-actions: a post's likes and comments summary;
// and, under https://learn.microsoft.com/en-us/linkedin/shared/, the error body, paging and the
// refresh-token answer.
// What each field rests on is said at its schema, in three kinds: "confirmed" names the page whose
// text shows the field (post-api-schema?view=li-lms-2026-05, the opening of images-api,
// api-guide/concepts/error-handling, api-guide/concepts/pagination,
// authentication/programmatic-refresh-tokens); "from clients" means the page section could not be
// read here (only a page's opening is on hand: the videos-api, documents-api and comments-api
// schema tables, the social actions page and the versioning page lie past it) and the field is
// as public clients of these endpoints send or read it; "unconfirmed" means neither.
// LinkedIn publishes no typed SDK, so these TypeBox schemas are the contract: platforms/linkedin.ts
// types the bodies it sends by their Static types and reads each answer as Answer<its type>
// (platforms/json.ts), and the local fake (test/fakes/linkedin.ts) checks what it receives against
// them at run time, refusing a request that breaks them as LinkedIn does (422, the Rest.li input
// error at the field path), and builds its answers as their types. Rest.li refuses a field a
// request schema does not have (UNRECOGNIZED_FIELD), so every request level is closed; answers are
// open.
import { type Static, Type } from '@sinclair/typebox';

const literals = <const T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const closed = { additionalProperties: false } as const;

/**
 * A member or an organization: who posts, comments, or owns an upload. Confirmed for a post's
 * author ("Person or Organization URN", post-api-schema); the same for a comment's actor and an
 * upload's owner from clients.
 */
export const ActorUrn = Type.String({ pattern: '^urn:li:(person|organization):' });
export type ActorUrn = Static<typeof ActorUrn>;

/**
 * Post visibilities (CONTAINER: a post inside a group or other container). Unconfirmed: the
 * visibility row of post-api-schema lies past the part read here.
 */
export const VISIBILITIES = ['PUBLIC', 'CONNECTIONS', 'LOGGED_IN', 'CONTAINER'] as const;
export const Visibility = literals(VISIBILITIES);
export type Visibility = Static<typeof Visibility>;

/**
 * The image, video or document of a single-media post (a document needs its title): `id`, `title`,
 * `altText` and its 4086-character limit are unconfirmed (post-api-schema's content rows lie past
 * the part read here; clients send `id`, `title` and `altText`).
 */
export const MediaContent = Type.Object(
  { id: Type.String(), title: Type.Optional(Type.String()), altText: Type.Optional(Type.String({ maxLength: 4086 })) },
  closed,
);
export type MediaContent = Static<typeof MediaContent>;

/** An article (link) post: `source`, `title`, `description`, `thumbnail`, `thumbnailAltText`, unconfirmed. */
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

/**
 * A multi-image post: 2 to 20 images. The content type is confirmed (posts-api's table of content
 * types lists MultiImage, organic only); `images[].id`, `altText` and the 2-to-20 bounds are from
 * clients.
 */
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

/** A post's content: one of media, multiImage or article (post-api-schema: `content` is optional; its members unconfirmed). */
export const PostContent = Type.Object(
  { media: Type.Optional(MediaContent), multiImage: Type.Optional(MultiImageContent), article: Type.Optional(ArticleContent) },
  closed,
);
export type PostContent = Static<typeof PostContent>;

/** A post's `distribution`: where it is shown (the feed, or nowhere for a dark post) and to whom. */
const DISTRIBUTION = {
  feedDistribution: literals(['MAIN_FEED', 'NONE']),
  targetEntities: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
  thirdPartyDistributionChannels: Type.Optional(Type.Array(Type.String())),
};

/**
 * The body of `POST /rest/posts`. Confirmed from post-api-schema (li-lms-2026-05): `author`
 * (required on create), `commentary` (little text, required), and the optional `adContext`,
 * `container` (URN), `content`, `contentLandingPage` (URL) and `contentCallToActionLabel` (an enum
 * the page lists, APPLY, DOWNLOAD, VIEW_QUOTE and more past the part read here, so a string here).
 * Unconfirmed, being past that part: `visibility`, `distribution` and its three fields,
 * `lifecycleState`, `isReshareDisabledByAuthor`, `reshareContext`.
 */
export const PostBody = Type.Object(
  {
    author: ActorUrn,
    commentary: Type.String(),
    visibility: Visibility,
    distribution: Type.Object(DISTRIBUTION, closed),
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

/**
 * The body of `POST /rest/images?action=initializeUpload`: the owner, and, to file the image in an
 * ad account's media library, `mediaLibraryMetadata` (the sponsored account and the asset's name).
 * From clients: the images-api section that lists them lies past the part read here.
 */
export const InitializeImageUploadBody = Type.Object(
  {
    initializeUploadRequest: Type.Object(
      {
        owner: ActorUrn,
        mediaLibraryMetadata: Type.Optional(
          Type.Object({ associatedAccount: Type.String({ pattern: '^urn:li:sponsoredAccount:' }), assetName: Type.String() }, closed),
        ),
      },
      closed,
    ),
  },
  closed,
);
export type InitializeImageUploadBody = Static<typeof InitializeImageUploadBody>;

/** The body of `POST /rest/documents?action=initializeUpload`: the owner, from clients (documents-api's request table was not read here). */
export const InitializeDocumentUploadBody = Type.Object({ initializeUploadRequest: Type.Object({ owner: ActorUrn }, closed) }, closed);
export type InitializeDocumentUploadBody = Static<typeof InitializeDocumentUploadBody>;

/**
 * The body of `POST /rest/videos?action=initializeUpload`: the owner, the file's size, and whether
 * captions and a thumbnail follow. From clients (videos-api's request table was not read here);
 * whether the page also takes a media-library field here is unconfirmed.
 */
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

/** The body of `POST /rest/videos?action=finalizeUpload`: the video, the upload token, each uploaded part's ETag in order. From clients. */
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
 * From clients: `actor`, `message` (text, with attributes), `content` (a list of media entities)
 * and `parentComment` as a client quoting the create-comment section of
 * network-update-social-actions lists them, and `object` as clients send it; comments-api's own
 * table lies past the part read here.
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

// ---------------------------------------------------------------------------------------------
// Answers: what LinkedIn sends back, as the same pages (and the shared API guide's pages) describe
// it. The connector reads each as Answer<its type> (platforms/json.ts) and still checks every
// value; the fake builds its answers as these types. Answers are open: LinkedIn adds fields (and
// decorations) beyond those listed, so only the documented fields are named, with their types.

/** An answer object: the documented fields, and whatever else LinkedIn sends beside them. */
const open = { additionalProperties: true } as const;
/** LinkedIn's times: milliseconds since the epoch (a Rest.li `long`). */
const Millis = Type.Integer();

/**
 * The error body of every REST call. Confirmed: `status`, `message` and `serviceErrorCode`
 * (https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling, its sample
 * response and field list). Unconfirmed: `code`, the symbolic code (NONEXISTENT_VERSION,
 * VERSION_MISSING) the versioning page's errors carry, past the part read here; and
 * `errorDetailType` and `errorDetails.inputErrors` (a validation failure's field path, description
 * and code, e.g. DUPLICATE_POST, UNRECOGNIZED_FIELD), which are as the connector reads LinkedIn's
 * 422 answers and which no page found lists.
 */
export const RestliError = Type.Object(
  {
    status: Type.Integer(),
    message: Type.String(),
    code: Type.Optional(Type.String()),
    serviceErrorCode: Type.Optional(Type.Integer()),
    errorDetailType: Type.Optional(Type.String()),
    errorDetails: Type.Optional(
      Type.Object(
        {
          inputErrors: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  description: Type.Optional(Type.String()),
                  input: Type.Optional(Type.Object({ inputPath: Type.Optional(Type.Object({ fieldPath: Type.String() }, open)) }, open)),
                  code: Type.String(),
                },
                open,
              ),
            ),
          ),
        },
        open,
      ),
    ),
  },
  open,
);
export type RestliError = Static<typeof RestliError>;

/**
 * A collection's paging. Confirmed: `start` and `count`
 * (https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/pagination, its sample
 * responses). Unconfirmed: `total` (where the finder counts) and `links`, which that page does not show.
 */
export const Paging = Type.Object(
  {
    start: Type.Integer({ minimum: 0 }),
    count: Type.Integer({ minimum: 0 }),
    total: Type.Optional(Type.Integer({ minimum: 0 })),
    links: Type.Optional(Type.Array(Type.Object({ rel: Type.String(), href: Type.String(), type: Type.String() }, open))),
  },
  open,
);
export type Paging = Static<typeof Paging>;

/**
 * An uploaded image's, video's or document's state: a post may reference it once AVAILABLE. The
 * four values are from clients (an image's status as a connector for these APIs documents it;
 * video clients poll WAITING_UPLOAD, PROCESSING, AVAILABLE, PROCESSING_FAILED); the pages' status
 * rows lie past the part read here.
 */
export const ASSET_STATUSES = ['WAITING_UPLOAD', 'PROCESSING', 'AVAILABLE', 'PROCESSING_FAILED'] as const;
export const AssetStatus = literals(ASSET_STATUSES);
export type AssetStatus = Static<typeof AssetStatus>;

/** The answer of `POST /rest/images?action=initializeUpload` (images-api): where to PUT the file, until when, and the image's URN. From clients. */
export const InitializeImageUploadAnswer = Type.Object(
  {
    value: Type.Object({ uploadUrlExpiresAt: Millis, uploadUrl: Type.String(), image: Type.String({ pattern: '^urn:li:image:' }) }, open),
  },
  open,
);
export type InitializeImageUploadAnswer = Static<typeof InitializeImageUploadAnswer>;

/** The answer of `POST /rest/documents?action=initializeUpload` (documents-api): where to PUT the file, until when, and the document's URN. From clients. */
export const InitializeDocumentUploadAnswer = Type.Object(
  {
    value: Type.Object(
      { uploadUrlExpiresAt: Millis, uploadUrl: Type.String(), document: Type.String({ pattern: '^urn:li:document:' }) },
      open,
    ),
  },
  open,
);
export type InitializeDocumentUploadAnswer = Static<typeof InitializeDocumentUploadAnswer>;

/**
 * The answer of `POST /rest/videos?action=initializeUpload` (videos-api): the video's URN, one
 * upload URL per byte range (firstByte to lastByte, inclusive), the token finalizeUpload takes
 * back, and the captions and thumbnail upload URLs when those were asked for. From clients, every
 * field (`uploadUrlsExpireAt` plural, once for all the URLs).
 */
export const InitializeVideoUploadAnswer = Type.Object(
  {
    value: Type.Object(
      {
        uploadUrlsExpireAt: Millis,
        video: Type.String({ pattern: '^urn:li:video:' }),
        uploadInstructions: Type.Array(
          Type.Object({ uploadUrl: Type.String(), firstByte: Type.Integer({ minimum: 0 }), lastByte: Type.Integer({ minimum: 0 }) }, open),
        ),
        uploadToken: Type.String(),
        captionsUploadUrl: Type.Optional(Type.String()),
        thumbnailUploadUrl: Type.Optional(Type.String()),
      },
      open,
    ),
  },
  open,
);
export type InitializeVideoUploadAnswer = Static<typeof InitializeVideoUploadAnswer>;

/** The fields an image, a video or a document shares once uploaded: its URN, owner, state and download address. */
const assetOf = (kind: 'image' | 'video' | 'document') => ({
  id: Type.String({ pattern: `^urn:li:${kind}:` }),
  owner: Type.String(),
  status: AssetStatus,
  downloadUrl: Type.Optional(Type.String()),
  downloadUrlExpiresAt: Type.Optional(Millis),
});

/**
 * `GET /rest/images/{urn}` (images-api): the image's owner and state, and where to fetch it once
 * AVAILABLE. Confirmed from the schema table at the opening of images-api: `aspectRatioHeight`
 * and `aspectRatioWidth` (floats, both present or both absent, absent until the image is
 * available), `downloadUrl` (absent until available) and `downloadUrlExpiresAt` (epoch
 * milliseconds). From clients: `id`, `owner`, `status`.
 */
export const Image = Type.Object(
  {
    ...assetOf('image'),
    aspectRatioHeight: Type.Optional(Type.Number()),
    aspectRatioWidth: Type.Optional(Type.Number()),
  },
  open,
);
export type Image = Static<typeof Image>;

/**
 * `GET /rest/documents/{urn}` (documents-api): the document's owner and state, and where to fetch
 * it once AVAILABLE. `id`, `owner`, `status` from clients; `downloadUrl` and
 * `downloadUrlExpiresAt` unconfirmed for documents (named as images-api names them).
 */
export const Document = Type.Object(assetOf('document'), open);
export type Document = Static<typeof Document>;

/**
 * `GET /rest/videos/{urn}` (videos-api): the video's owner and state, its length and shape once
 * processed, and why processing failed (processingFailureReason, a free text). From clients:
 * `id`, `owner`, `status`, and `processingFailureReason` (one client reads it on
 * PROCESSING_FAILED). Unconfirmed: `downloadUrl`, `downloadUrlExpiresAt`, `duration`,
 * `aspectRatioHeight`, `aspectRatioWidth`, `thumbnail`; the videos-api schema table lies past the
 * part read here.
 */
export const Video = Type.Object(
  {
    ...assetOf('video'),
    processingFailureReason: Type.Optional(Type.String()),
    duration: Type.Optional(Millis),
    aspectRatioHeight: Type.Optional(Type.Number()),
    aspectRatioWidth: Type.Optional(Type.Number()),
    thumbnail: Type.Optional(Type.String()),
  },
  open,
);
export type Video = Static<typeof Video>;

/** A post's lifecycle (a post read back may be in any of them). Unconfirmed: post-api-schema's lifecycleState row lies past the part read here. */
export const LifecycleState = literals(['PUBLISHED', 'DRAFT', 'PUBLISH_REQUESTED', 'PUBLISH_FAILED']);
export type LifecycleState = Static<typeof LifecycleState>;

/**
 * A post as `GET /rest/posts/{urn}` and the author finder (`GET /rest/posts?q=author`) return it
 * (posts-api, post-api-schema): the fields sent, its id (urn:li:share:… or urn:li:ugcPost:…) and
 * its times. `POST /rest/posts` answers 201 with the new post's URN in the `x-restli-id` header
 * and no body; the connector reads a body's `id`, should one come, as this type's. Confirmed as
 * for PostBody: `author`, `commentary` (required). Unconfirmed: `id`, `visibility`,
 * `distribution`, `lifecycleState`, `isReshareDisabledByAuthor`, the content members,
 * `createdAt`, `publishedAt`, `lastModifiedAt`.
 */
export const Post = Type.Object(
  {
    id: Type.String(),
    author: ActorUrn,
    commentary: Type.String(),
    visibility: Visibility,
    distribution: Type.Object(DISTRIBUTION, open),
    lifecycleState: LifecycleState,
    isReshareDisabledByAuthor: Type.Optional(Type.Boolean()),
    content: Type.Optional(
      Type.Object(
        {
          media: Type.Optional(
            Type.Object({ id: Type.String(), title: Type.Optional(Type.String()), altText: Type.Optional(Type.String()) }, open),
          ),
          multiImage: Type.Optional(
            Type.Object({ images: Type.Array(Type.Object({ id: Type.String(), altText: Type.Optional(Type.String()) }, open)) }, open),
          ),
          article: Type.Optional(
            Type.Object(
              {
                source: Type.String(),
                title: Type.Optional(Type.String()),
                description: Type.Optional(Type.String()),
                thumbnail: Type.Optional(Type.String()),
              },
              open,
            ),
          ),
        },
        open,
      ),
    ),
    createdAt: Millis,
    publishedAt: Type.Optional(Millis),
    lastModifiedAt: Millis,
  },
  open,
);
export type Post = Static<typeof Post>;

/** The answer of the author finder, `GET /rest/posts?q=author` (posts-api): the author's posts, newest first, as a collection (paging, elements). */
export const PostsList = Type.Object({ paging: Paging, elements: Type.Array(Post) }, open);
export type PostsList = Static<typeof PostsList>;

/**
 * Who did something, and when (a Rest.li AuditStamp: `created`, `lastModified`). `actor` and `time`
 * (epoch milliseconds) confirmed as a comment carries them in the socialActions/comments activity
 * of https://learn.microsoft.com/en-us/linkedin/compliance/integrations/compliance-events/resource-references/socialactions;
 * `impersonator` unconfirmed.
 */
export const AuditStamp = Type.Object({ actor: Type.String(), time: Millis, impersonator: Type.Optional(Type.String()) }, open);
export type AuditStamp = Static<typeof AuditStamp>;

/** Likes on a post or comment (comments-api, network-update-social-actions). Unconfirmed, every field: those tables lie past the part read here. */
export const LikesSummary = Type.Object(
  {
    totalLikes: Type.Integer({ minimum: 0 }),
    likedByCurrentUser: Type.Boolean(),
    aggregatedTotalLikes: Type.Optional(Type.Integer({ minimum: 0 })),
    selectedLikes: Type.Optional(Type.Array(Type.String())),
  },
  open,
);
export type LikesSummary = Static<typeof LikesSummary>;

/** Comments on a post or comment: the first-level ones, and all of them with their replies. Unconfirmed, every field. */
export const CommentsSummary = Type.Object(
  {
    totalFirstLevelComments: Type.Integer({ minimum: 0 }),
    aggregatedTotalComments: Type.Integer({ minimum: 0 }),
    selectedComments: Type.Optional(Type.Array(Type.String())),
  },
  open,
);
export type CommentsSummary = Static<typeof CommentsSummary>;

/** `GET /rest/socialActions/{urn}` (network-update-social-actions): the post's likes and comments. Unconfirmed, every field. */
export const SocialActions = Type.Object(
  { target: Type.Optional(Type.String()), likesSummary: LikesSummary, commentsSummary: CommentsSummary },
  open,
);
export type SocialActions = Static<typeof SocialActions>;

/**
 * A comment (comments-api): its id and URN (urn:li:comment:({thread},{id})), who wrote it, on what
 * (`object`, the post; `parentComment` for a reply), its message and media, when, and its likes
 * and replies. `POST /rest/socialActions/{urn}/comments` answers 201 with the comment's id in the
 * `x-restli-id` header and the comment in the body. Confirmed by the socialActions/comments
 * activity the compliance events page shows (a comment as stored: `id`, `actor`, `object`,
 * `message` with `text` and `attributes`, `created`, `lastModified`). From clients: `content`,
 * `parentComment` as in CommentBody. Unconfirmed: `commentUrn`, `agent`, `likesSummary`,
 * `commentsSummary` (comments-api's table lies past the part read here).
 */
export const Comment = Type.Object(
  {
    id: Type.String(),
    commentUrn: Type.String({ pattern: '^urn:li:comment:' }),
    actor: ActorUrn,
    agent: Type.Optional(Type.String()),
    object: Type.String(),
    parentComment: Type.Optional(Type.String({ pattern: '^urn:li:comment:' })),
    message: Type.Object({ text: Type.String(), attributes: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))) }, open),
    content: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    created: AuditStamp,
    lastModified: AuditStamp,
    likesSummary: Type.Optional(LikesSummary),
    commentsSummary: Type.Optional(CommentsSummary),
  },
  open,
);
export type Comment = Static<typeof Comment>;

/** `GET /rest/socialActions/{urn}/comments?start&count` (comments-api): a post's comments, or a comment's replies. */
export const CommentsList = Type.Object({ paging: Paging, elements: Type.Array(Comment) }, open);
export type CommentsList = Static<typeof CommentsList>;

/**
 * The answer of `POST https://www.linkedin.com/oauth/v2/accessToken` with grant_type=refresh_token
 * (https://learn.microsoft.com/en-us/linkedin/shared/authentication/programmatic-refresh-tokens):
 * the new access token and its lifetime in seconds, the refresh token (not rotated) with what is
 * left of its lifetime, and the granted scopes. Confirmed from that page: `access_token`,
 * `refresh_token` and `refresh_token_expires_in` (seconds left, the refresh token keeping its
 * first lifetime). Unconfirmed there: `expires_in` and `scope`, the rest of its sample response.
 */
export const AccessTokenAnswer = Type.Object(
  {
    access_token: Type.String(),
    expires_in: Type.Integer(),
    refresh_token: Type.Optional(Type.String()),
    refresh_token_expires_in: Type.Optional(Type.Integer()),
    scope: Type.Optional(Type.String()),
  },
  open,
);
export type AccessTokenAnswer = Static<typeof AccessTokenAnswer>;
