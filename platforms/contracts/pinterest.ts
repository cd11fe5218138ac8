// The request shapes of Pinterest API v5 (API_VERSIONS.PINTEREST in platforms/api-versions.ts) as
// its reference describes them:
//   - the body of POST /v5/pins, https://developers.pinterest.com/docs/api/v5/pins-create, with
//     media_source as the page lists its variants, keyed by source_type;
//   - the body of POST /v5/media (registering a video upload),
//     https://developers.pinterest.com/docs/api/v5/media-create.
// Pinterest publishes no typed SDK, so these TypeBox schemas are the contract: platforms/pinterest.ts
// types the bodies it sends by their Static types, and the local fake (test/fakes/pinterest.ts)
// checks what it receives against them at run time and refuses a request that breaks them as
// Pinterest does, 400 with `{"code": 1, "message": "..."}`. Every object is closed: a field the
// reference does not list is refused.
import { type Static, Type } from '@sinclair/typebox';

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
