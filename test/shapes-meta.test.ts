// Graph's published create parameters as the connectors and the fake hold to them (Graph
// publishes no typed SDK, so the schemas in platforms/contracts/meta.ts are written from the
// reference pages of POST /{page-id}/feed, /{page-id}/photos, /{page-id}/videos,
// /{ig-user-id}/media, /{ig-user-id}/media_publish, /{threads-user-id}/threads and
// threads_publish): the type-level checks below fail `tsc` when the connectors' types stop
// refusing what Graph lacks; at run time a request that breaks the schemas is refused as Graph
// refuses it, 400 with an OAuthException of Graph error code 100, and what the connectors send
// passes.
import { describe, expect, test } from 'bun:test';
import type {
  IgMediaParams,
  PageFeedAttachedMedia,
  PageFeedParams,
  PagePhotoParams,
  PageVideoParams,
  PublishParams,
  ThreadsParams,
} from '../platforms/contracts/meta.ts';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import { createThreadsConnector } from '../platforms/meta/threads.ts';
import type { Connector, MediaRef, PublishRequest } from '../platforms/types.ts';
import { type FakeMeta, startFakeMeta } from './fakes/meta.ts';
import { perTest } from './harness/per-test.ts';

// The types the connectors build their parameters with refuse what Graph does not take.
export const typeChecks: [
  (PageFeedParams & PageFeedAttachedMedia)[],
  PagePhotoParams[],
  PageVideoParams[],
  IgMediaParams[],
  ThreadsParams[],
  PublishParams[],
] = [
  [
    {
      message: 'Hi',
      // @ts-expect-error the Page feed edge documents no `privacy` parameter
      privacy: '{"value":"EVERYONE"}',
    },
    {
      // @ts-expect-error `published` is the string "true" or "false" Graph reads, not a boolean
      published: false,
    },
    {
      // @ts-expect-error the photos are attached_media[0], attached_media[1], …: the index is a number
      'attached_media[first]': '{"media_fbid":"1"}',
    },
  ],
  [
    {
      // @ts-expect-error a photo's address is `url`; `image_url` is Instagram's and Threads'
      image_url: 'https://example.com/a.png',
    },
    {
      // @ts-expect-error `no_story` is "true" or "false", not "yes"
      no_story: 'yes',
    },
  ],
  [
    {
      // @ts-expect-error a video's address is `file_url`, not `video_url`
      video_url: 'https://example.com/a.mp4',
    },
  ],
  [
    {
      // @ts-expect-error PHOTO is no Instagram media_type (IMAGE, VIDEO, REELS, STORIES, CAROUSEL)
      media_type: 'PHOTO',
      image_url: 'https://example.com/a.png',
    },
    {
      image_url: 'https://example.com/a.png',
      // @ts-expect-error an Instagram caption is `caption`; `text` is Threads'
      text: 'Hi',
    },
    {
      media_type: 'REELS',
      video_url: 'https://example.com/a.mp4',
      // @ts-expect-error share_to_feed is "true" or "false", not a boolean
      share_to_feed: true,
    },
  ],
  [
    {
      // @ts-expect-error Threads has no REELS (TEXT, IMAGE, VIDEO, CAROUSEL)
      media_type: 'REELS',
      video_url: 'https://example.com/a.mp4',
    },
    {
      media_type: 'TEXT',
      // @ts-expect-error a Threads post's text is `text`; `caption` is Instagram's
      caption: 'Hi',
    },
    {
      media_type: 'TEXT',
      text: 'Hi',
      // @ts-expect-error "nobody" is no reply_control (everyone, accounts_you_follow, mentioned_only, parent_post_author_only, followers_only)
      reply_control: 'nobody',
    },
  ],
  [
    // @ts-expect-error media_publish and threads_publish need the container's creation_id
    {},
    {
      creation_id: '1',
      // @ts-expect-error the container is `creation_id`; a `container_id` parameter does not exist
      container_id: '1',
    },
  ],
];

const fake = perTest(startFakeMeta);

const TOKENS = { facebook: 'EAAG-page-token', instagram: 'IGAA-user-token', threads: 'THAA-user-token' } as const;
const VERSION = { facebook: 'v26.0', instagram: 'v26.0', threads: 'v1.0' } as const;

const png = new Uint8Array(
  await (await import('sharp'))
    .default({ create: { width: 8, height: 8, channels: 3, background: '#f00' } })
    .png()
    .toBuffer(),
);

function image(id: string, altText: string | null = null): MediaRef {
  return { id, type: 'image', mimeType: 'image/png', fileName: `${id}.png`, altText, read: async () => png };
}

function request(f: FakeMeta, over: Partial<PublishRequest> = {}): PublishRequest {
  const key = f.flavor === 'facebook' ? 'pageId' : f.flavor === 'instagram' ? 'igUserId' : 'threadsUserId';
  return {
    text: 'Hello from the scheduler',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: TOKENS[f.flavor], [key]: f.accountId },
    ...over,
  };
}

function connectorFor(f: FakeMeta): Connector {
  const common = { baseUrl: f.url, timeoutMs: 2_000 };
  const poll = {
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
    mediaUrl: async (item: MediaRef) => f.hostMedia(await item.read(), item.mimeType),
  };
  if (f.flavor === 'facebook') return createFacebookConnector(common);
  if (f.flavor === 'instagram') return createInstagramConnector({ ...common, ...poll });
  return createThreadsConnector({ ...common, ...poll });
}

/** A raw form POST /{version}/{account}/{edge}, as a client other than the connector would send it. */
async function post(f: FakeMeta, edge: string, params: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/${VERSION[f.flavor]}/${f.accountId}/${edge}`, {
    method: 'POST',
    body: new URLSearchParams({ ...params, access_token: TOKENS[f.flavor] }),
  });
  return { status: res.status, body: await res.json() };
}

/** Graph's error code for an invalid parameter. */
const INVALID_PARAMETER = 100;

/** Graph's 400 for a parameter it refuses, its message prefixed with the code (https://developers.facebook.com/docs/graph-api/guides/error-handling). */
const refused = (message: string) => ({
  status: 400,
  body: {
    error: {
      message: `(#${INVALID_PARAMETER}) ${message}`,
      type: 'OAuthException',
      code: INVALID_PARAMETER,
      fbtrace_id: expect.any(String),
    },
  },
});

describe('Graph published shapes', () => {
  test('the fake refuses parameters that break the create edges’ shapes with 400 and OAuthException code 100', async () => {
    const fb = await fake('facebook');
    expect(await post(fb, 'feed', { message: 'Hi', published: 'maybe' })).toEqual(refused('Param published has an invalid value: maybe'));
    expect(await post(fb, 'feed', { message: 'Hi', link: 'example.com' })).toEqual(refused('Param link has an invalid value: example.com'));
    expect(await post(fb, 'feed', { message: 'Hi', privacy: 'EVERYONE' })).toEqual(refused('Param privacy is not a valid parameter'));
    expect(await post(fb, 'photos', { url: 'https://example.com/a.png', no_story: 'yes' })).toEqual(
      refused('Param no_story has an invalid value: yes'),
    );
    expect(fb.posts).toHaveLength(0);

    const ig = await fake('instagram');
    expect(await post(ig, 'media', { media_type: 'GIF', image_url: 'https://example.com/a.gif' })).toEqual(
      refused('Param media_type has an invalid value: GIF'),
    );
    expect(await post(ig, 'media', { media_type: 'REELS', video_url: 'https://example.com/a.mp4', thumb_offset: '1.5s' })).toEqual(
      refused('Param thumb_offset has an invalid value: 1.5s'),
    );
    expect(await post(ig, 'media_publish', {})).toEqual(refused('The parameter creation_id is required'));
    expect(ig.containers).toHaveLength(0);

    const th = await fake('threads');
    expect(await post(th, 'threads', { media_type: 'TEXT', text: 'Hi', reply_control: 'nobody' })).toEqual(
      refused('Param reply_control has an invalid value: nobody'),
    );
    expect(await post(th, 'threads', { media_type: 'REELS', text: 'Hi' })).toEqual(refused('Param media_type has an invalid value: REELS'));
    expect(th.containers).toHaveLength(0);
  });

  test('what the connectors send passes the fake’s schemas (Page text and photos, Instagram image and carousel, Threads text and image)', async () => {
    const fb = await fake('facebook');
    await connectorFor(fb).publish(request(fb));
    await connectorFor(fb).publish(request(fb, { text: 'Two photos', media: [image('a'), image('b')] }));
    expect(fb.posts.map((p) => p.text)).toEqual(['Hello from the scheduler', 'Two photos']);

    const ig = await fake('instagram');
    await connectorFor(ig).publish(request(ig, { media: [image('a', 'A red square')] }));
    await connectorFor(ig).publish(request(ig, { text: 'A carousel', media: [image('b'), image('c')] }));
    expect(ig.posts.map((p) => p.text)).toEqual(['Hello from the scheduler', 'A carousel']);

    const th = await fake('threads');
    await connectorFor(th).publish(request(th));
    await connectorFor(th).publish(request(th, { text: 'With an image', media: [image('a')] }));
    expect(th.posts.map((p) => p.text)).toEqual(['Hello from the scheduler', 'With an image']);
  });
});
