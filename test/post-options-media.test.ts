// Options checked against the post's media (domain/posts/options.ts: YouTube Shorts, Instagram
// alt text), TikTok's media rule (one video, or a photo post of 1 to 35 JPEG or WEBP images), and
// a YouTube Short reaching the upload with `#Shorts` in its title.
import { describe, expect, test } from 'bun:test';
import type { IChannel } from '../db/entities/index.ts';
import { mediaProblems } from '../domain/posts/checks.ts';
import { instagramAltTextProblems, youtubeShortProblems } from '../domain/posts/options.ts';
import { createYouTubeConnector, shortTitle } from '../platforms/youtube.ts';
import type { PublishRequest } from '../platforms/types.ts';
import { FAKE_CLIENT, startFakeYouTube } from './fakes/youtube.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakeYouTube);

const tiktok = { id: 'ch_tt', platform: 'TIKTOK' } as IChannel;
const image = (id: string, mimeType = 'image/jpeg') => ({ id, type: 'image' as const, mimeType });
const video = (id: string, width: number | null, height: number | null, durationSeconds: number | null) => ({
  id,
  type: 'video' as const,
  mimeType: 'video/mp4',
  width,
  height,
  durationSeconds,
});

describe('TikTok media rule', () => {
  test('one video, or 1 to 35 JPEG or WEBP images', () => {
    expect(mediaProblems(tiktok, [video('v', 1080, 1920, 30)])).toEqual([]);
    expect(mediaProblems(tiktok, [image('a'), image('b', 'image/webp')])).toEqual([]);
    expect(
      mediaProblems(
        tiktok,
        Array.from({ length: 35 }, (_, i) => image(`i${i}`)),
      ),
    ).toEqual([]);
  });

  test('refused with a message that says what TikTok takes', () => {
    const messages = (media: Parameters<typeof mediaProblems>[1]) => mediaProblems(tiktok, media).map((p) => `${p.path}: ${p.message}`);
    expect(messages([video('v', 1080, 1920, 30), image('a')])).toEqual([
      'mediaIds: TIKTOK channel ch_tt takes one video, or a photo post of 1 to 35 images, not both',
    ]);
    expect(messages(Array.from({ length: 36 }, (_, i) => image(`i${i}`)))).toEqual([
      'mediaIds: TIKTOK channel ch_tt takes at most 35 attachment(s)',
    ]);
    expect(messages([image('a'), image('shot', 'image/png')])).toEqual([
      'mediaIds: TIKTOK channel ch_tt takes JPEG or WEBP images in a photo post (shot is image/png)',
    ]);
    expect(messages([{ id: 'g', type: 'gif', mimeType: 'image/gif' }])).toEqual([
      'mediaIds: TIKTOK channel ch_tt does not accept gif files',
    ]);
  });
});

describe('youtubeShortProblems', () => {
  const short = { youtube: { short: true } };

  test('a vertical or square video of at most 180 s is a Short; not marked short, nothing is checked', () => {
    expect(youtubeShortProblems(short, [video('v', 1080, 1920, 180)])).toEqual([]);
    expect(youtubeShortProblems(short, [video('v', 1080, 1080, 15)])).toEqual([]);
    expect(youtubeShortProblems({ youtube: { short: false } }, [video('v', 1920, 1080, 600)])).toEqual([]);
    expect(youtubeShortProblems({}, [video('v', 1920, 1080, 600)])).toEqual([]);
  });

  test('a landscape, a longer or an unmeasured video is refused at options.youtube.short', () => {
    expect(youtubeShortProblems(short, [video('v', 1920, 1080, 181)])).toEqual([
      { path: 'options.youtube.short', message: 'video v is 1920×1080: a Short is vertical or square (height at least the width)' },
      { path: 'options.youtube.short', message: 'video v lasts 181 s: a Short lasts at most 180 s' },
    ]);
    expect(youtubeShortProblems(short, [video('v', null, null, null)]).map((p) => p.message)).toEqual([
      'video v has no known size: a Short is vertical or square',
      'video v has no known length: a Short lasts at most 180 s',
    ]);
  });
});

describe('instagramAltTextProblems', () => {
  const media = [image('a'), video('v', 1080, 1920, 10), image('b')];

  test('alt text for the post’s images is taken', () => {
    expect(instagramAltTextProblems({ instagram: { altText: { a: 'A kite', b: '' } } }, media)).toEqual([]);
    expect(instagramAltTextProblems({ instagram: { type: 'carousel' } }, media)).toEqual([]);
  });

  test('a key that is not one of the post’s images is refused at options.instagram.altText.<mediaId>', () => {
    expect(instagramAltTextProblems({ instagram: { altText: { v: 'A video', med_other: 'Elsewhere', a: 'Fine' } } }, media)).toEqual([
      { path: 'options.instagram.altText.v', message: 'is a video: Instagram takes alt text on images only' },
      { path: 'options.instagram.altText.med_other', message: 'is not a media item of this post' },
    ]);
    expect(instagramAltTextProblems({ instagram: { type: 'story', altText: { a: 'A story' } } }, [image('a')])).toEqual([
      { path: 'options.instagram.altText.a', message: 'Instagram takes no alt text on a story' },
    ]);
  });
});

describe('YouTube Shorts at upload', () => {
  test('#Shorts is added to the title when it has none, the title cut to leave it room', () => {
    expect(shortTitle('Launch day')).toBe('Launch day #Shorts');
    expect(shortTitle('Launch day #shorts')).toBe('Launch day #shorts');
    const long = shortTitle('x'.repeat(100));
    expect(Array.from(long)).toHaveLength(100);
    expect(long).toBe(`${'x'.repeat(92)} #Shorts`);
  });

  test('a post marked short goes up with #Shorts in its title; a retry looks for that title', async () => {
    const f = await fake();
    const c = createYouTubeConnector({ baseUrl: f.url, uploadBaseUrl: f.url, authBaseUrl: f.url, oauth: FAKE_CLIENT, timeoutMs: 2_000 });
    const bytes = new Uint8Array(1000).map((_, i) => i & 0xff);
    const req: PublishRequest = {
      text: 'Launch day\nOur new kite in 20 seconds.',
      media: [{ id: 'v', type: 'video', mimeType: 'video/mp4', fileName: 'v.mp4', read: async () => bytes }],
      idempotencyKey: 'post-1:channel-yt',
      credentials: { accessToken: 'good-token', refreshToken: 'good-refresh' },
      options: { short: true, madeForKids: false },
      attempt: 1,
    };
    const result = await c.publish(req);
    expect(f.videos.find((v) => v.id === result.platformPostId)?.title).toBe('Launch day #Shorts');
    // A fresh worker (no session kept) finds the upload by the title it was sent with.
    const restarted = createYouTubeConnector({ baseUrl: f.url, uploadBaseUrl: f.url, authBaseUrl: f.url, oauth: FAKE_CLIENT });
    expect((await restarted.findPublished!({ ...req, attempt: 2 }))?.platformPostId).toBe(result.platformPostId);
    // Not marked short: the title is the text's first line.
    const plain = await c.publish({ ...req, idempotencyKey: 'post-2:channel-yt', text: 'Another day', options: { madeForKids: false } });
    expect(f.videos.find((v) => v.id === plain.platformPostId)?.title).toBe('Another day');
  });
});
