// The TikTok fake held to the Content Posting API v2 reference (POST /v2/post/publish/video/init/
// and /v2/post/publish/content/init/): a body with a value the reference does not list is refused
// as TikTok refuses it, 400 invalid_params in TikTok's envelope; what the connector sends passes.
import { afterEach, describe, expect, test } from 'bun:test';
import { createTikTokConnector } from '../platforms/tiktok.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { FAKE_APP, type FakeTikTok, startFakeTikTok } from './fakes/tiktok.ts';

const fakes: FakeTikTok[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeTikTok> {
  const f = await startFakeTikTok();
  fakes.push(f);
  return f;
}

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
