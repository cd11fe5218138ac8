// TikTok's published contract (the Content Posting API v2 reference, held as TypeBox schemas in
// platforms/contracts/tiktok.ts): the type-level checks below fail `tsc` when the types the
// connector builds its video/init and content/init bodies with stop refusing what TikTok does not
// take; the runtime tests show the fake refusing a body that breaks the reference as TikTok
// refuses it, 400 invalid_params in TikTok's envelope, and what the connector sends passing.
import { describe, expect, test } from 'bun:test';
import type { ContentInitBody, VideoInitBody } from '../platforms/contracts/tiktok.ts';
import { createTikTokConnector } from '../platforms/tiktok.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { FAKE_APP, type FakeTikTok, startFakeTikTok } from './fakes/tiktok.ts';
import { perTest } from './harness/per-test.ts';

const upload = { source: 'FILE_UPLOAD', video_size: 2000, chunk_size: 2000, total_chunk_count: 1 } as const;
const pulled: ContentInitBody['source_info'] = {
  source: 'PULL_FROM_URL',
  photo_images: ['https://media.example/1.jpeg'],
  photo_cover_index: 0,
};

// The types the connector builds its requests with refuse what TikTok does not take.
export const typeChecks: { videoInit: VideoInitBody[]; contentInit: ContentInitBody[] } = {
  videoInit: [
    {
      post_info: {
        privacy_level: 'SELF_ONLY',
        brand_content_toggle: false,
        // @ts-expect-error a video's caption is `title`; `description` belongs to photo posts
        description: 'A kite',
      },
      source_info: upload,
    },
    {
      // @ts-expect-error "PRIVATE" is no privacy_level (PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, FOLLOWER_OF_CREATOR, SELF_ONLY)
      post_info: { privacy_level: 'PRIVATE', brand_content_toggle: false },
      source_info: upload,
    },
    {
      // @ts-expect-error brand_content_toggle is required: TikTok asks every post to say whether it is paid
      post_info: { privacy_level: 'SELF_ONLY' },
      source_info: upload,
    },
    {
      post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
      // @ts-expect-error a FILE_UPLOAD source has no `video_url` (PULL_FROM_URL's has)
      source_info: { ...upload, video_url: 'https://media.example/v.mp4' },
    },
  ],
  contentInit: [
    {
      post_info: {
        privacy_level: 'SELF_ONLY',
        brand_content_toggle: false,
        // @ts-expect-error duets belong to videos: a photo post's post_info has no `disable_duet`
        disable_duet: true,
      },
      source_info: pulled,
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    },
    {
      post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
      source_info: pulled,
      // @ts-expect-error post_mode is DIRECT_POST or MEDIA_UPLOAD ("DIRECT POST", with a space as the page writes it in prose, is neither)
      post_mode: 'DIRECT POST',
      media_type: 'PHOTO',
    },
    {
      post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
      source_info: pulled,
      post_mode: 'DIRECT_POST',
      // @ts-expect-error content/init takes PHOTO only; videos go through video/init
      media_type: 'VIDEO',
    },
  ],
};

const fake = perTest(startFakeTikTok);

const connector = (f: FakeTikTok) =>
  createTikTokConnector({
    baseUrl: f.url,
    oauth: FAKE_APP,
    timeoutMs: 2_000,
    uploadTimeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
  });

const clip: MediaRef = {
  id: 'clip-1',
  type: 'video',
  mimeType: 'video/mp4',
  fileName: 'clip-1.mp4',
  read: async () => new Uint8Array(2000).map((_, i) => i & 0xff),
};

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Our new kite in a storm #kites',
    media: [clip],
    idempotencyKey: 'post-1:channel-tt',
    credentials: { accessToken: 'good-token', refreshToken: 'good-refresh' },
    attempt: 1,
    ...over,
  };
}

/** A raw create request, as a client other than the connector would send it. */
async function post(
  f: FakeTikTok,
  path: string,
  body: unknown,
): Promise<{ status: number; code: string; message: string; logId: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json; charset=UTF-8' },
    body: JSON.stringify(body),
  });
  const b = (await res.json()) as { data: unknown; error: { code: string; message: string; log_id: unknown } };
  expect(b.data).toEqual({});
  return { status: res.status, code: b.error.code, message: b.error.message, logId: typeof b.error.log_id };
}

const video = {
  post_info: { privacy_level: 'SELF_ONLY', brand_content_toggle: false },
  source_info: { source: 'FILE_UPLOAD', video_size: 2000, chunk_size: 2000, total_chunk_count: 1 },
};

describe('TikTok published shapes', () => {
  test('video/init refuses a body that breaks the reference with 400 invalid_params', async () => {
    const f = await fake();
    const cases: [unknown, string][] = [
      [{ ...video, post_info: { ...video.post_info, privacy_level: 'EVERYONE' } }, 'post_info.privacy_level'],
      [{ ...video, post_info: { ...video.post_info, video_cover_timestamp_ms: 1.5 } }, 'post_info.video_cover_timestamp_ms'],
      [{ ...video, source_info: { ...video.source_info, video_size: '2000' } }, 'source_info'],
    ];
    for (const [body, field] of cases) {
      const got = await post(f, '/v2/post/publish/video/init/', body);
      expect([got.status, got.code, got.message.startsWith(`${field}:`), got.logId]).toEqual([400, 'invalid_params', true, 'string']);
    }
    expect(f.publishes).toHaveLength(0);
  });

  test('content/init refuses an unknown privacy_level with 400 invalid_params', async () => {
    const f = await fake();
    const jpeg = f.hostMedia(new Uint8Array([1]), 'image/jpeg');
    const got = await post(f, '/v2/post/publish/content/init/', {
      media_type: 'PHOTO',
      post_mode: 'DIRECT_POST',
      post_info: { privacy_level: 'FRIENDS', brand_content_toggle: false },
      source_info: { source: 'PULL_FROM_URL', photo_images: [jpeg], photo_cover_index: 0 },
    });
    expect([got.status, got.code, got.message.startsWith('post_info.privacy_level:')]).toEqual([400, 'invalid_params', true]);
    expect(f.publishes).toHaveLength(0);
  });

  test('what the connector sends passes the fake’s schemas (a video, and photos)', async () => {
    const f = await fake();
    await connector(f).publish(request());
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0]);
    const photo: MediaRef = {
      id: 'p1',
      type: 'image',
      mimeType: 'image/jpeg',
      fileName: 'p1.jpeg',
      read: async () => bytes,
      url: async () => f.hostMedia(bytes, 'image/jpeg'),
    };
    await connector(f).publish(request({ media: [photo], idempotencyKey: 'post-2:channel-tt' }));
    expect(f.publishes.map((p) => p.kind)).toEqual(['video', 'photo']);
  });
});
