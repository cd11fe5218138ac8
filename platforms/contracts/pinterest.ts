// The request and answer shapes of Pinterest API v5 (API_VERSIONS.PINTEREST in
// platforms/api-versions.ts) as its reference describes them:
//   - the body of POST /v5/pins, https://developers.pinterest.com/docs/api/v5/pins-create, with
//     media_source as the page lists its variants, keyed by source_type;
//   - the body of POST /v5/media (registering a video upload),
//     https://developers.pinterest.com/docs/api/v5/media-create;
//   - the answers the connector reads (a Pin, a board's Pins, the boards, a media registration and
//     its state, a Pin's analytics, the refresh-token answer, the error body), each schema naming
//     its page.
// Pinterest publishes no typed SDK, so these TypeBox schemas are the contract: platforms/pinterest.ts
// types the bodies it sends by their Static types and reads each answer as Answer<its type>
// (platforms/json.ts), and the local fake (test/fakes/pinterest.ts) checks what it receives
// against them at run time, refusing a request that breaks them as Pinterest does, 400 with
// `{"code": 1, "message": "..."}`, and builds its answers as their types. Every request object is
// closed: a field the reference does not list is refused. Answer objects are open.
import { type Static, type TSchema, Type } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
const Digits = Type.String({ pattern: '^\\d+$' });
const Text = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));
const IsStandard = Type.Optional(Type.Boolean());

/** The image types Pinterest takes inline (image_base64, a video's cover_image_data). */
export const ImageContentType = Type.Union([Type.Literal('image/jpeg'), Type.Literal('image/png')]);
export type ImageContentType = Static<typeof ImageContentType>;

/** An image sent inline, base64-encoded. */
export const ImageBase64Source = Type.Object(
  { source_type: Type.Literal('image_base64'), content_type: ImageContentType, data: Type.String(), is_standard: IsStandard },
  closed,
);
export type ImageBase64Source = Static<typeof ImageBase64Source>;

/** An image Pinterest fetches from a URL. */
export const ImageUrlSource = Type.Object({ source_type: Type.Literal('image_url'), url: Type.String(), is_standard: IsStandard }, closed);
export type ImageUrlSource = Static<typeof ImageUrlSource>;

/** A video registered and uploaded through POST /v5/media, with its cover (a URL, inline data or a key frame, in seconds). */
export const VideoIdSource = Type.Object(
  {
    source_type: Type.Literal('video_id'),
    media_id: Digits,
    cover_image_url: Type.Optional(Type.String()),
    cover_image_content_type: Type.Optional(ImageContentType),
    cover_image_data: Type.Optional(Type.String()),
    cover_image_key_frame_time: Type.Optional(Type.Number({ minimum: 0 })),
    is_standard: IsStandard,
  },
  closed,
);
export type VideoIdSource = Static<typeof VideoIdSource>;

/** A carousel of 2 to 5 images fetched from URLs. */
export const MultipleImageUrlsSource = Type.Object(
  {
    source_type: Type.Literal('multiple_image_urls'),
    items: Type.Array(Type.Object({ url: Type.String(), title: Text(100), description: Text(800), link: Text(2048) }, closed), {
      minItems: 2,
      maxItems: 5,
    }),
    index: Type.Optional(Type.Integer({ minimum: 0 })),
    is_standard: IsStandard,
  },
  closed,
);
export type MultipleImageUrlsSource = Static<typeof MultipleImageUrlsSource>;

/** media_source, by source_type. */
export const MediaSource = Type.Union([ImageBase64Source, ImageUrlSource, VideoIdSource, MultipleImageUrlsSource]);
export type MediaSource = Static<typeof MediaSource>;

/** The body of POST /v5/pins (Create Pin). */
export const CreatePinBody = Type.Object(
  {
    link: Text(2048),
    title: Text(100),
    description: Text(800),
    dominant_color: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    alt_text: Text(500),
    board_id: Digits,
    board_section_id: Type.Optional(Type.Union([Digits, Type.Null()])),
    media_source: MediaSource,
    parent_pin_id: Type.Optional(Type.Union([Digits, Type.Null()])),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  closed,
);
export type CreatePinBody = Static<typeof CreatePinBody>;

/** The body of POST /v5/media (Register media upload): video is the only media type it takes. */
export const RegisterMediaBody = Type.Object({ media_type: Type.Literal('video') }, closed);
export type RegisterMediaBody = Static<typeof RegisterMediaBody>;

// ---------------------------------------------------------------------------------------------
// Answers: what Pinterest sends back, as the API v5 reference describes it (its OpenAPI
// description, github.com/pinterest/api-description, v5/openapi.json, holds the same schemas). The
// connector reads each as Answer<its type> (platforms/json.ts) and still checks every value; the
// fake builds its answers as these types. Answers are open (Pinterest adds fields): only the
// documented fields are named, with their documented types, required where the reference says so.

/** An answer object: the documented fields, and whatever else Pinterest sends beside them. */
const open = { additionalProperties: true } as const;
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/**
 * The error body of every failed call (the reference's Error): a numeric code (1 an invalid
 * parameter, 2 authentication failed, 283 an invalid authorization grant, …) and the reason.
 */
export const ErrorAnswer = Type.Object({ code: Type.Integer(), message: Type.String() }, open);
export type ErrorAnswer = Static<typeof ErrorAnswer>;

/** One rendition of a Pin's image: its URL and size in pixels. */
export const ImageDetails = Type.Object({ url: Type.String(), width: Nullable(Type.Integer()), height: Nullable(Type.Integer()) }, open);
export type ImageDetails = Static<typeof ImageDetails>;

/** A Pin's image renditions, by size. */
export const ImageSize = Type.Object(
  {
    '150x150': Type.Optional(ImageDetails),
    '400x300': Type.Optional(ImageDetails),
    '600x': Type.Optional(ImageDetails),
    '1200x': Type.Optional(ImageDetails),
  },
  open,
);
export type ImageSize = Static<typeof ImageSize>;

/** `media` of a Pin, by media_type: one image, one video, or several (a carousel's items). */
export const PinMedia = Type.Union([
  Type.Object({ media_type: Type.Literal('image'), images: Type.Optional(ImageSize) }, open),
  Type.Object(
    {
      media_type: Type.Literal('video'),
      images: Type.Optional(ImageSize),
      cover_image_url: Type.Optional(Type.String()),
      video_url: Type.Optional(Nullable(Type.String())),
      /** Milliseconds; null while the video is processed (as are width and height). */
      duration: Type.Optional(Nullable(Type.Number())),
      width: Type.Optional(Nullable(Type.Integer())),
      height: Type.Optional(Nullable(Type.Integer())),
    },
    open,
  ),
  Type.Object(
    {
      media_type: Type.Union([Type.Literal('multiple_images'), Type.Literal('multiple_videos'), Type.Literal('multiple_mixed')]),
      items: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
    },
    open,
  ),
]);
export type PinMedia = Static<typeof PinMedia>;

/**
 * A Pin, as POST /v5/pins answers (201, https://developers.pinterest.com/docs/api/v5/pins-create)
 * and GET /v5/boards/{board_id}/pins lists it: its id and creation time, the fields sent, and what
 * Pinterest adds (owner, media renditions, creative type). `note` is on the reference page beside
 * the request's `note`; the OpenAPI description (5.23.0) does not list it.
 */
export const Pin = Type.Object(
  {
    id: Digits,
    created_at: Type.Optional(Type.String()),
    link: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    title: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 800 }))),
    dominant_color: Type.Optional(Nullable(Type.String())),
    alt_text: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    creative_type: Type.Optional(Nullable(Type.String())),
    board_id: Type.Optional(Digits),
    board_section_id: Type.Optional(Nullable(Digits)),
    board_owner: Type.Optional(Type.Object({ username: Type.Optional(Type.String()) }, open)),
    is_owner: Type.Optional(Type.Boolean()),
    media: Type.Optional(PinMedia),
    parent_pin_id: Type.Optional(Nullable(Digits)),
    is_standard: Type.Optional(Type.Boolean()),
    has_been_promoted: Type.Optional(Type.Boolean()),
    note: Type.Optional(Nullable(Type.String())),
    pin_metrics: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown()))),
  },
  open,
);
export type Pin = Static<typeof Pin>;

/** GET /v5/boards/{board_id}/pins (https://developers.pinterest.com/docs/api/v5/boards-list_pins): a page of Pins, and the bookmark of the next (null on the last). */
export const BoardPinsList = Type.Object({ items: Type.Array(Pin), bookmark: Type.Optional(Nullable(Type.String())) }, open);
export type BoardPinsList = Static<typeof BoardPinsList>;

/** Board privacy as the reference lists it. */
export const BoardPrivacy = Type.Union([Type.Literal('PUBLIC'), Type.Literal('PROTECTED'), Type.Literal('SECRET')]);
export type BoardPrivacy = Static<typeof BoardPrivacy>;

/** A board, as GET /v5/boards lists it (https://developers.pinterest.com/docs/api/v5/boards-list). */
export const Board = Type.Object(
  {
    id: Digits,
    name: Type.String(),
    description: Type.Optional(Nullable(Type.String())),
    privacy: Type.Optional(BoardPrivacy),
    created_at: Type.Optional(Type.String()),
    board_pins_modified_at: Type.Optional(Type.String()),
    collaborator_count: Type.Optional(Type.Integer({ minimum: 0 })),
    pin_count: Type.Optional(Type.Integer({ minimum: 0 })),
    follower_count: Type.Optional(Type.Integer({ minimum: 0 })),
    is_ads_only: Type.Optional(Type.Boolean()),
    media: Type.Optional(
      Type.Object(
        { image_cover_url: Type.Optional(Nullable(Type.String())), pin_thumbnail_urls: Type.Optional(Type.Array(Type.String())) },
        open,
      ),
    ),
    owner: Type.Optional(Type.Object({ username: Type.Optional(Type.String()) }, open)),
  },
  open,
);
export type Board = Static<typeof Board>;

/** GET /v5/boards: a page of the account's boards, and the bookmark of the next (null on the last). */
export const BoardsList = Type.Object({ items: Type.Array(Board), bookmark: Type.Optional(Nullable(Type.String())) }, open);
export type BoardsList = Static<typeof BoardsList>;

/**
 * The answer of POST /v5/media (Register media upload, https://developers.pinterest.com/docs/api/v5/media-create):
 * the upload's id, the S3 form to POST the file to, and the form fields that go with it.
 */
export const MediaUpload = Type.Object(
  {
    media_id: Digits,
    media_type: Type.Literal('video'),
    upload_url: Type.Optional(Type.String()),
    upload_parameters: Type.Optional(
      Type.Object(
        {
          'x-amz-date': Type.Optional(Type.String()),
          'x-amz-signature': Type.Optional(Type.String()),
          'x-amz-security-token': Type.Optional(Type.String()),
          'x-amz-algorithm': Type.Optional(Type.String()),
          key: Type.Optional(Type.String()),
          policy: Type.Optional(Type.String()),
          'x-amz-credential': Type.Optional(Type.String()),
          'Content-Type': Type.Optional(Type.String()),
        },
        open,
      ),
    ),
  },
  open,
);
export type MediaUpload = Static<typeof MediaUpload>;

/** An upload's processing state: a Pin may use it once `succeeded`. */
export const MediaUploadStatus = Type.Union([
  Type.Literal('registered'),
  Type.Literal('processing'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
]);
export type MediaUploadStatus = Static<typeof MediaUploadStatus>;

/** GET /v5/media/{media_id} (Get media upload details, https://developers.pinterest.com/docs/api/v5/media-get). */
export const Media = Type.Object({ media_id: Digits, media_type: Type.Literal('video'), status: Type.Optional(MediaUploadStatus) }, open);
export type Media = Static<typeof Media>;

/** One app type's figures of a Pin (daily, over the range asked for, and lifetime), by metric name. */
export const PinAnalyticsMetrics = Type.Object(
  {
    daily_metrics: Type.Optional(
      Type.Array(
        Type.Object(
          {
            data_status: Type.Optional(Type.String()),
            date: Type.Optional(Type.String()),
            metrics: Type.Optional(Type.Record(Type.String(), Type.Number())),
          },
          open,
        ),
      ),
    ),
    summary_metrics: Type.Optional(Type.Record(Type.String(), Type.Number())),
    lifetime_metrics: Type.Optional(Type.Record(Type.String(), Type.Integer())),
  },
  open,
);
export type PinAnalyticsMetrics = Static<typeof PinAnalyticsMetrics>;

/** GET /v5/pins/{pin_id}/analytics (https://developers.pinterest.com/docs/api/v5/pins-analytics): the figures by app type (`all` for every app). */
export const PinAnalytics = Type.Record(Type.String(), PinAnalyticsMetrics);
export type PinAnalytics = Static<typeof PinAnalytics>;

/**
 * POST /v5/oauth/token with grant_type=refresh_token (https://developers.pinterest.com/docs/api/v5/oauth-token):
 * the new access token, and (continuous refresh) a new refresh token with its lifetime in seconds
 * and its expiry as epoch seconds.
 */
export const RefreshTokenAnswer = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.String(),
    expires_in: Type.Integer(),
    scope: Type.String(),
    response_type: Type.Optional(
      Type.Union([Type.Literal('authorization_code'), Type.Literal('refresh_token'), Type.Literal('client_credentials')]),
    ),
    refresh_token: Type.String(),
    refresh_token_expires_in: Type.Integer(),
    refresh_token_expires_at: Type.Integer(),
  },
  open,
);
export type RefreshTokenAnswer = Static<typeof RefreshTokenAnswer>;
