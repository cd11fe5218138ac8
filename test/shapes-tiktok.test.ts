// TikTok's published contract (the Content Posting API v2 reference and the Display API and OAuth
// pages, held as TypeBox schemas in platforms/contracts/tiktok.ts): the type-level checks below
// fail `tsc` when the types the connector builds its video/init and content/init bodies with stop
// refusing what TikTok does not take, and when the answer types the connector reads and the fake
// writes stop refusing a field or a value TikTok's answers do not have; the runtime tests show the
// fake refusing a body that breaks the reference as TikTok refuses it, 400 invalid_params in
// TikTok's envelope, what the connector sends passing, and the fake's answers to the connector's
// flows passing the answer schemas.
import { describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  ContentInitAnswer,
  type ContentInitBody,
  CreatorInfoAnswer,
  ErrorAnswer,
  type PostStatus,
  PostStatusAnswer,
  TokenAnswer,
  type Video,
  VideoInitAnswer,
  type VideoInitBody,
  type VideoInitData,
  type VideoListData,
  VideoListAnswer,
  VideoQueryAnswer,
} from '../platforms/contracts/tiktok.ts';
import type { Answer } from '../platforms/json.ts';
import { createTikTokConnector } from '../platforms/tiktok.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { FAKE_APP, type FakeTikTok, startFakeTikTok, tikTokConnector } from './fakes/tiktok.ts';
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

// The answer types the connector reads and the fake writes hold only what TikTok documents.
const statusDone: PostStatus = { status: 'PUBLISH_COMPLETE', publicaly_available_post_id: [7380080137682881], uploaded_bytes: 2000 };
export const answerChecks: { init: VideoInitData[]; status: PostStatus[]; videos: Video[]; list: VideoListData[] } = {
  init: [
    {
      publish_id: 'v_pub_file~v2-1.1',
      upload_url: 'https://open-upload.tiktokapis.com/video/?upload_id=1',
      // @ts-expect-error video/init answers publish_id and upload_url; the video's id comes later, from status/fetch
      video_id: '7380080137682881',
    },
    // @ts-expect-error publish_id is a string ("v_pub_file~v2-1.…"), not a number
    { publish_id: 1, upload_url: 'https://open-upload.tiktokapis.com/video/?upload_id=1' },
  ],
  status: [
    // @ts-expect-error "PUBLISHED" is no status (PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, SEND_TO_USER_INBOX, PUBLISH_COMPLETE, FAILED)
    { ...statusDone, status: 'PUBLISHED' },
    {
      ...statusDone,
      // @ts-expect-error TikTok spells it publicaly_available_post_id
      publically_available_post_id: [7380080137682881],
    },
    // @ts-expect-error the public post ids are int64 numbers, not strings
    { ...statusDone, publicaly_available_post_id: ['7380080137682881'] },
  ],
  videos: [
    // @ts-expect-error a video's caption is video_description (or title); it has no `description`
    { id: '7380080137682881', description: 'A kite' },
    // @ts-expect-error create_time is Unix seconds, a number
    { id: '7380080137682881', create_time: '2026-11-10T12:00:00Z' },
  ],
  list: [
    // @ts-expect-error the next page is asked for with `cursor`; there is no `next_cursor`
    { videos: [], cursor: 1762776000000, has_more: true, next_cursor: 1762776000000 },
    // @ts-expect-error has_more is a boolean
    { videos: [], cursor: 1762776000000, has_more: 'true' },
  ],
};

/** Reading an answer as the connector does: a field TikTok does not send does not compile. */
export function answerReads(init: Answer<VideoInitAnswer>, photo: Answer<ContentInitAnswer>, status: Answer<PostStatusAnswer>) {
  return [
    init.data?.publish_id,
    // @ts-expect-error video/init answers no `id`
    init.data?.id,
    // @ts-expect-error content/init answers publish_id alone: nothing is uploaded to a photo post
    photo.data?.upload_url,
    // @ts-expect-error status/fetch's public ids are publicaly_available_post_id; there is no `post_id`
    status.data?.post_id,
    // @ts-expect-error the envelope's error has code, message and log_id; no `error_code`
    status.error?.error_code,
  ];
}

const fake = perTest(startFakeTikTok);

const connector = (f: FakeTikTok) => tikTokConnector(f);

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

/** A JPEG image TikTok pulls from the fake's own host. */
function jpeg(f: FakeTikTok): MediaRef {
  const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0]);
  return {
    id: 'p1',
    type: 'image',
    mimeType: 'image/jpeg',
    fileName: 'p1.jpeg',
    read: async () => bytes,
    url: async () => f.hostMedia(bytes, 'image/jpeg'),
  };
}

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
    const photo = jpeg(f);
    await connector(f).publish(request({ media: [photo], idempotencyKey: 'post-2:channel-tt' }));
    expect(f.publishes.map((p) => p.kind)).toEqual(['video', 'photo']);
  });
});

/** The answer schema of each path the connector reads. */
const ANSWERS: Record<string, TSchema> = {
  '/v2/post/publish/creator_info/query/': CreatorInfoAnswer,
  '/v2/post/publish/video/init/': VideoInitAnswer,
  '/v2/post/publish/content/init/': ContentInitAnswer,
  '/v2/post/publish/status/fetch/': PostStatusAnswer,
  '/v2/video/list/': VideoListAnswer,
  '/v2/video/query/': VideoQueryAnswer,
  '/v2/oauth/token/': TokenAnswer,
};

/** A fetch for the connector that keeps each of the fake's JSON answers, by path (the upload's PUTs answer no body). */
function recording(): { fetch: typeof fetch; answers: { path: string; status: number; body: unknown }[] } {
  const answers: { path: string; status: number; body: unknown }[] = [];
  const record = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    if (res.headers.get('content-type')?.includes('application/json')) {
      answers.push({
        path: new URL(input instanceof Request ? input.url : String(input)).pathname,
        status: res.status,
        body: await res.clone().json(),
      });
    }
    return res;
  };
  return { fetch: record as typeof fetch, answers };
}

describe('TikTok published shapes: answers', () => {
  test('the fake’s answers to the connector’s flows pass the answer schemas (creator_info, video/init, content/init, status/fetch, video/list, video/query, token)', async () => {
    const f = await fake();
    const rec = recording();
    const c = () =>
      createTikTokConnector({
        baseUrl: f.url,
        oauth: FAKE_APP,
        fetch: rec.fetch,
        timeoutMs: 2_000,
        pollIntervalMs: 5,
        pollTimeoutMs: 2_000,
      });
    const clipPost = await c().publish(request());
    const photo = jpeg(f);
    await c().publish(request({ media: [photo], idempotencyKey: 'post-2:channel-tt' }));
    // A fresh connector keeps no publish_id: it looks for the post in video/list.
    expect(await c().findPublished!(request())).not.toBeNull();
    await c().readMetrics!({ accessToken: 'good-token' }, [clipPost.platformPostId]);
    await c().refreshCredentials!({ accessToken: 'good-token', refreshToken: 'good-refresh' });

    expect([...new Set(rec.answers.map((a) => a.path))].sort()).toEqual(Object.keys(ANSWERS).sort());
    const broken = rec.answers.flatMap(({ path, body }) => {
      const e = Value.Errors(ANSWERS[path]!, body).First();
      return e ? [`${path} ${e.path}: ${e.message}`] : [];
    });
    expect(broken).toEqual([]);
  });

  test('a refusal is TikTok’s error envelope, and a FAILED status names its fail_reason', async () => {
    const f = await fake();
    const res = await fetch(`${f.url}/v2/post/publish/video/init/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ ...video, post_info: { ...video.post_info, privacy_level: 'EVERYONE' } }),
    });
    expect([res.status, Value.Check(ErrorAnswer, await res.json())]).toEqual([400, true]);

    f.failPublishNext('file_format_check_failed');
    await expect(connector(f).publish(request())).rejects.toThrow('file_format_check_failed');
    const status = await fetch(`${f.url}/v2/post/publish/status/fetch/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ publish_id: f.publishes[0]!.publishId }),
    });
    const body = (await status.json()) as PostStatusAnswer;
    expect([Value.Check(PostStatusAnswer, body), body.data.status, body.data.fail_reason]).toEqual([
      true,
      'FAILED',
      'file_format_check_failed',
    ]);
  });
});
