// Graph's published create, comment and moderation parameters and answers as the connectors and
// the fake hold to them (Graph publishes no typed SDK, so the schemas in platforms/contracts/meta.ts
// are written from the reference pages of POST /{page-id}/feed, /{page-id}/photos,
// /{page-id}/videos, /{ig-user-id}/media, /{ig-user-id}/media_publish, /{threads-user-id}/threads
// and threads_publish, of the comment edges (/{object-id}/comments, /{ig-media-id}/comments,
// /{ig-comment-id}/replies), of the moderation ones (POST /{comment-id} is_hidden,
// POST /{ig-comment-id} hide, /{threads-reply-id}/manage_reply, DELETE /{id}), of the nodes and
// lists the connectors read, and of Graph's error body): the
// type-level checks below fail `tsc` when the connectors' types stop refusing what Graph lacks; at
// run time a request that breaks the schemas is refused as Graph refuses it, 400 with an
// OAuthException of Graph error code 100, what the connectors send passes, and every answer the
// fake gives the connectors' main flows passes its answer schema.
import { describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type DeleteParams,
  GraphCreated,
  GraphError,
  type GraphList,
  type IgCommentParams,
  type IgCommentUpdateParams,
  IgContainer,
  IgMedia,
  IgMediaList,
  type IgMediaParams,
  MediaPublished,
  PageComment,
  PageCommentList,
  type PageCommentParams,
  type PageCommentUpdateParams,
  type PageFeedAttachedMedia,
  type PageFeedParams,
  PagePhotoCreated,
  type PagePhotoParams,
  PagePost,
  PagePostList,
  type PageVideoParams,
  type PublishParams,
  RefreshedToken,
  ThreadsContainer,
  ThreadsInsights,
  type ThreadsManageReplyParams,
  ThreadsMedia,
  ThreadsMediaList,
  type ThreadsParams,
} from '../platforms/contracts/meta.ts';
import type { Answer } from '../platforms/json.ts';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import { createThreadsConnector } from '../platforms/meta/threads.ts';
import type { CommentTarget, Connector, MediaRef, PostRef, PublishRequest } from '../platforms/types.ts';
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

// … and so do those of the comment, reply and moderation edges.
export const commentTypeChecks: [
  PageCommentParams[],
  PageCommentUpdateParams[],
  IgCommentParams[],
  IgCommentUpdateParams[],
  ThreadsManageReplyParams[],
  DeleteParams[],
] = [
  [
    {
      message: 'Hi',
      // @ts-expect-error the comments edge documents no `link`; an image or GIF at a URL is `attachment_url`
      link: 'https://example.com',
    },
    {
      // @ts-expect-error a Facebook comment's text is `message`; `text` is Threads'
      text: 'Hi',
    },
  ],
  [
    {
      // @ts-expect-error `is_hidden` is the string "true" or "false" Graph reads, not a boolean
      is_hidden: true,
    },
    {
      // @ts-expect-error Facebook hides with `is_hidden`; `hide` is Instagram's and Threads'
      hide: 'true',
    },
  ],
  [
    // @ts-expect-error an Instagram comment or reply needs its `message`
    {},
    {
      message: 'Hi',
      // @ts-expect-error an Instagram comment carries no attachment
      attachment_url: 'https://example.com/a.gif',
    },
  ],
  [
    {
      // @ts-expect-error `hide` is "true" or "false", not a boolean
      hide: true,
    },
    // @ts-expect-error POST /{ig-comment-id} needs `hide`
    {},
    {
      hide: 'true',
      // @ts-expect-error Instagram hides with `hide`; `is_hidden` is Facebook's
      is_hidden: 'true',
    },
  ],
  [
    {
      // @ts-expect-error `hide` is "true" or "false", not "yes"
      hide: 'yes',
    },
    // @ts-expect-error manage_reply needs `hide`
    {},
  ],
  [
    {
      // @ts-expect-error DELETE /{id} takes no parameter beside the token
      hide: 'true',
    },
  ],
];

// The answer types refuse what Graph's answers do not have, where the fake builds them …
export const answerTypeChecks: [
  GraphCreated[],
  PagePhotoCreated[],
  IgContainer[],
  ThreadsContainer[],
  MediaPublished[],
  PagePost[],
  IgMedia[],
  ThreadsMedia[],
  GraphList<IgMedia>[],
  GraphError[],
] = [
  [
    {
      id: '1',
      // @ts-expect-error feed, videos, comments and containers answer `id` alone; `post_id` is the photos edge's
      post_id: '1_2',
    },
    {
      // @ts-expect-error Graph sends an id as a numeric string, not a number
      id: 1,
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error the photo's feed post is `post_id`
      postId: '1_2',
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error DONE is no status_code (EXPIRED, ERROR, FINISHED, IN_PROGRESS, PUBLISHED)
      status_code: 'DONE',
    },
    {
      id: '1',
      status_code: 'ERROR',
      // @ts-expect-error an IG container says its error in `status`; `error_message` is Threads'
      error_message: 'Media download has failed',
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error a Threads container's state is `status`; `status_code` is Instagram's
      status_code: 'FINISHED',
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error media_publish and threads_publish answer the media's `id`; there is no `media_id`
      media_id: '1',
    },
  ],
  [
    {
      id: '1_2',
      // @ts-expect-error a Page post's link is `permalink_url`; `permalink` is Instagram's and Threads'
      permalink: 'https://www.facebook.com/1/posts/2',
    },
    {
      id: '1_2',
      // @ts-expect-error `shares` is an object with a count, not a number
      shares: 3,
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error an IG media's text is `caption`; `text` is Threads'
      text: 'Hi',
    },
  ],
  [
    {
      id: '1',
      // @ts-expect-error `replied_to` is the answered post as `{id}`, not its id
      replied_to: '2',
    },
    {
      id: '1',
      // @ts-expect-error SHOWN is no hide_status
      hide_status: 'SHOWN',
    },
  ],
  [
    {
      data: [],
      paging: {
        // @ts-expect-error the cursor is `paging.cursors.after`, not at the top of `paging`
        after: 'QVFI',
      },
    },
  ],
  [
    {
      error: {
        message: 'Error validating access token',
        type: 'OAuthException',
        // @ts-expect-error `code` is a number
        code: '190',
        fbtrace_id: 'A1',
      },
    },
    {
      error: {
        message: 'Error validating access token',
        type: 'OAuthException',
        code: 190,
        // @ts-expect-error the subcode is `error_subcode`
        subcode: 460,
        fbtrace_id: 'A1',
      },
    },
  ],
];

/** … and where the connectors read them: a field the answer lacks, a value it cannot hold. */
export function answerReadChecks(
  published: Answer<MediaPublished>,
  ig: Answer<IgContainer>,
  threads: Answer<ThreadsContainer>,
  error: Answer<GraphError>,
): unknown[] {
  return [
    // @ts-expect-error media_publish answers `id`; there is no `media_id` to read
    published.media_id,
    // @ts-expect-error DONE is no status_code, so the comparison is always false
    ig.status_code === 'DONE',
    // @ts-expect-error Threads has no `status_code`: a container's state is `status`
    threads.status_code,
    // @ts-expect-error the user-facing text is `error_user_msg`
    error.error?.user_message,
  ];
}

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

/** A raw request to /{version}/{path} with the token, as a client other than the connector would send it (a DELETE's parameters in the query). */
async function send(
  f: FakeMeta,
  method: 'POST' | 'DELETE',
  path: string,
  params: Record<string, string>,
): Promise<{ status: number; body: unknown }> {
  const all = new URLSearchParams({ ...params, access_token: TOKENS[f.flavor] });
  const url = `${f.url}/${VERSION[f.flavor]}/${path}`;
  const res = method === 'POST' ? await fetch(url, { method, body: all }) : await fetch(`${url}?${all}`, { method });
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

describe('Graph comment and moderation parameters', () => {
  test('the fake refuses a broken comment, reply, hide or delete per edge with 400 and OAuthException code 100', async () => {
    const fb = await fake('facebook');
    const fbPost = fb.seedPost({ text: 'A Page post', ageMs: 0 });
    const fbComment = fb.seedComment({ postId: fbPost.id, text: 'Nice', by: 'other' });
    expect(await send(fb, 'POST', `${fbPost.id}/comments`, { message: 'Hi', attachment_url: 'example.com/a.gif' })).toEqual(
      refused('Param attachment_url has an invalid value: example.com/a.gif'),
    );
    expect(await send(fb, 'POST', `${fbPost.id}/comments`, { message: 'Hi', link: 'https://example.com' })).toEqual(
      refused('Param link is not a valid parameter'),
    );
    expect(await send(fb, 'POST', `${fbComment.id}/comments`, { text: 'Hi' })).toEqual(refused('Param text is not a valid parameter'));
    expect(await send(fb, 'POST', fbComment.id, { is_hidden: 'yes' })).toEqual(refused('Param is_hidden has an invalid value: yes'));
    expect(await send(fb, 'POST', fbComment.id, { hide: 'true' })).toEqual(refused('Param hide is not a valid parameter'));
    expect(await send(fb, 'DELETE', fbComment.id, { is_hidden: 'true' })).toEqual(refused('Param is_hidden is not a valid parameter'));
    expect(fb.comments.map((c) => [c.text, !!c.hidden])).toEqual([['Nice', false]]);

    const ig = await fake('instagram');
    const igPost = ig.seedPost({ text: 'A photo', ageMs: 0 });
    const igComment = ig.seedComment({ postId: igPost.id, text: 'Nice', by: 'other' });
    expect(await send(ig, 'POST', `${igPost.id}/comments`, {})).toEqual(refused('The parameter message is required'));
    expect(await send(ig, 'POST', `${igPost.id}/comments`, { message: 'Hi', attachment_url: 'https://example.com/a.gif' })).toEqual(
      refused('Param attachment_url is not a valid parameter'),
    );
    expect(await send(ig, 'POST', `${igComment.id}/replies`, {})).toEqual(refused('The parameter message is required'));
    expect(await send(ig, 'POST', igComment.id, {})).toEqual(refused('The parameter hide is required'));
    expect(await send(ig, 'POST', igComment.id, { hide: 'yes' })).toEqual(refused('Param hide has an invalid value: yes'));
    expect(await send(ig, 'POST', igComment.id, { is_hidden: 'true' })).toEqual(refused('Param is_hidden is not a valid parameter'));
    expect(await send(ig, 'DELETE', igComment.id, { hide: 'true' })).toEqual(refused('Param hide is not a valid parameter'));
    expect(ig.comments.map((c) => [c.text, !!c.hidden])).toEqual([['Nice', false]]);

    const th = await fake('threads');
    const thPost = th.seedPost({ text: 'A thread', ageMs: 0 });
    const thReply = th.seedReply({ parentId: thPost.id, text: 'Nice', username: 'someone' });
    expect(await send(th, 'POST', `${thReply.id}/manage_reply`, {})).toEqual(refused('The parameter hide is required'));
    expect(await send(th, 'POST', `${thReply.id}/manage_reply`, { hide: 'yes' })).toEqual(refused('Param hide has an invalid value: yes'));
    expect(await send(th, 'POST', `${thReply.id}/manage_reply`, { hide: 'true', is_hidden: 'true' })).toEqual(
      refused('Param is_hidden is not a valid parameter'),
    );
    expect(await send(th, 'DELETE', thPost.id, { hide: 'true' })).toEqual(refused('Param hide is not a valid parameter'));
    expect(
      await send(th, 'POST', `${th.accountId}/threads`, {
        media_type: 'TEXT',
        text: 'Hi',
        reply_to_id: thReply.id,
        reply_control: 'nobody',
      }),
    ).toEqual(refused('Param reply_control has an invalid value: nobody'));
    expect(thReply.hideStatus).toBeUndefined();
    expect(th.posts).toHaveLength(2);
  });

  test('what the connectors send passes the fake’s schemas (comment, reply, hide, unhide, delete)', async () => {
    for (const flavor of ['facebook', 'instagram', 'threads'] as const) {
      const f = await fake(flavor);
      const c = connectorFor(f);
      const creds = request(f).credentials;
      // An Instagram post carries an image.
      const post = await c.publish(request(f, flavor === 'instagram' ? { media: [image('a')] } : {}));
      const root: PostRef = { platformPostId: post.platformPostId, url: post.url };
      // Someone else's comment (a Threads reply) under the account's post.
      const theirs =
        flavor === 'threads'
          ? f.seedReply({ parentId: root.platformPostId, text: 'Nice', username: 'someone' }).id
          : f.seedComment({ postId: root.platformPostId, text: 'Nice', by: 'other' }).id;
      const parent: PostRef = { platformPostId: theirs, url: '' };
      if (flavor !== 'threads') await c.publish(request(f, { text: 'First comment', replyTo: { root, parent: root } }));
      const reply = await c.publish(request(f, { text: 'Thanks', replyTo: { root, parent } }));
      const target = (id: string): CommentTarget => ({ platformCommentId: id, url: null, post: root });
      await c.hideComment!(creds, target(theirs), true);
      const hidden =
        flavor === 'threads' ? f.posts.find((p) => p.id === theirs)?.hideStatus : f.comments.find((x) => x.id === theirs)?.hidden;
      expect(hidden).toBe(flavor === 'threads' ? 'HIDDEN' : true);
      await c.hideComment!(creds, target(theirs), false);
      const shown =
        flavor === 'threads' ? f.posts.find((p) => p.id === theirs)?.hideStatus : f.comments.find((x) => x.id === theirs)?.hidden;
      expect(shown).toBe(flavor === 'threads' ? 'UNHUSHED' : false);
      await c.deletePublished!(creds, target(reply.platformPostId));
      const texts = flavor === 'threads' ? f.posts.map((p) => p.text) : f.comments.map((x) => x.text);
      expect(texts).toEqual(flavor === 'threads' ? ['Hello from the scheduler', 'Nice'] : ['Nice', 'First comment']);
    }
  });
});

/** An answer the fake gave the connector: the request it answered and the parsed body. */
interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  status: number;
  body: unknown;
}

/** A fetch for the connector that keeps each of the fake's answers (JSON ones: media downloads aside). */
function recording(): { fetch: typeof fetch; answers: Recorded[] } {
  const answers: Recorded[] = [];
  const record = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (res.headers.get('content-type')?.includes('application/json')) {
      answers.push({ method, path: url.pathname, query: url.searchParams, status: res.status, body: await res.clone().json() });
    }
    return res;
  };
  return { fetch: record as typeof fetch, answers };
}

/** A recorded answer's route without the version and the id: `POST :id/feed 200`. */
const route = (a: Recorded) => `${a.method} ${[':id', ...a.path.split('/').filter(Boolean).slice(2)].join('/')} ${a.status}`;

/**
 * The answer schema of a request of the connector's, by its route: an error is GraphError; a read
 * of one node is told by the fields it asks.
 */
function schemaOf(f: FakeMeta, a: Recorded): TSchema {
  if (a.status >= 400) return GraphError;
  const [, id, edge] = a.path.split('/').filter(Boolean) as [string, string, string | undefined];
  const fields = a.query.get('fields') ?? '';
  if (a.path === '/refresh_access_token') return RefreshedToken;
  if (a.method === 'POST') {
    if (edge === 'photos') return PagePhotoCreated;
    if (edge === 'media_publish' || edge === 'threads_publish') return MediaPublished;
    if (edge && ['feed', 'videos', 'comments', 'replies', 'media', 'threads'].includes(edge)) return GraphCreated;
  }
  if (a.method === 'GET' && edge) {
    if (edge === 'insights') return ThreadsInsights;
    if (f.flavor === 'facebook') return edge === 'comments' ? PageCommentList : PagePostList;
    if (f.flavor === 'instagram' && (edge === 'media' || edge === 'stories')) return IgMediaList;
    if (f.flavor === 'threads') return ThreadsMediaList;
  }
  if (a.method === 'GET' && id) {
    if (fields.startsWith('status_code')) return IgContainer;
    if (fields.startsWith('status')) return ThreadsContainer;
    if (f.flavor === 'facebook') return fields.startsWith('permalink_url') || fields === 'from' ? PageComment : PagePost;
    return f.flavor === 'instagram' ? IgMedia : ThreadsMedia;
  }
  throw new Error(`no answer schema for ${a.method} ${a.path}`);
}

/** Each recorded answer passes its schema (the schema's errors, by route, where one does not). */
function misfits(f: FakeMeta, answers: Recorded[]): string[] {
  return answers.flatMap((a) => {
    const schema = schemaOf(f, a);
    return Value.Check(schema, a.body)
      ? []
      : [`${a.method} ${a.path}: ${[...Value.Errors(schema, a.body)].map((e) => `${e.path} ${e.message}`).join('; ')}`];
  });
}

describe('Graph answers', () => {
  test('the fake’s answers to Facebook’s flows pass their schemas (feed, photos, video, comment, lookup, metrics, an error)', async () => {
    const fb = await fake('facebook');
    const rec = recording();
    const c = createFacebookConnector({ baseUrl: fb.url, timeoutMs: 2_000, fetch: rec.fetch });
    const post = await c.publish(request(fb));
    await c.publish(request(fb, { text: 'Two photos', media: [image('a'), image('b')] }));
    const video: MediaRef = { id: 'v', type: 'video', mimeType: 'video/mp4', fileName: 'v.mp4', altText: null, read: async () => png };
    await c.publish(request(fb, { text: 'A video', media: [video] }));
    expect(await c.findPublished!(request(fb))).toMatchObject({ platformPostId: post.platformPostId });
    const ref = { platformPostId: post.platformPostId, url: post.url };
    await c.publish(request(fb, { text: 'First comment', replyTo: { root: ref, parent: ref } }));
    await c.readMetrics!(request(fb).credentials, [post.platformPostId]);
    // The same text again, straight after: Graph's 506 duplicate, an error answer.
    await expect(c.publish(request(fb, { text: 'Two photos' }))).resolves.toBeDefined();
    await expect(c.publish(request(fb, { text: 'Two photos' }))).rejects.toThrow('Duplicate');

    const routes = rec.answers.map(route);
    for (const r of [
      'POST :id/feed 200',
      'POST :id/photos 200',
      'POST :id/videos 200',
      'GET :id/posts 200',
      'POST :id/comments 200',
      'GET :id 200',
    ]) {
      expect(routes).toContain(r);
    }
    expect(routes).toContain('POST :id/feed 400');
    expect(misfits(fb, rec.answers)).toEqual([]);
  });

  test('the fake’s answers to Instagram’s flows pass their schemas (containers, status, media_publish, permalink, lookup, an error)', async () => {
    const ig = await fake('instagram');
    const rec = recording();
    const c = createInstagramConnector({
      baseUrl: ig.url,
      timeoutMs: 2_000,
      fetch: rec.fetch,
      pollIntervalMs: 5,
      pollTimeoutMs: 2_000,
      mediaUrl: async (item) => ig.hostMedia(await item.read(), item.mimeType),
    });
    const post = await c.publish(request(ig, { media: [image('a', 'A red square')] }));
    await c.publish(request(ig, { text: 'A carousel', media: [image('b'), image('c')] }));
    expect(await c.findPublished!(request(ig, { media: [image('a')] }))).toMatchObject({ platformPostId: post.platformPostId });
    await c.readMetrics!(request(ig).credentials, [post.platformPostId]);
    // A caption over 2,200 characters: Graph's 400, an error answer.
    await expect(c.publish(request(ig, { text: 'x'.repeat(2_201), media: [image('d')] }))).rejects.toThrow('caption');

    const routes = rec.answers.map(route);
    for (const r of ['POST :id/media 200', 'GET :id 200', 'POST :id/media_publish 200', 'GET :id/media 200', 'POST :id/media 400']) {
      expect(routes).toContain(r);
    }
    expect(rec.answers.some((a) => a.query.get('fields') === 'status_code,status')).toBe(true);
    expect(misfits(ig, rec.answers)).toEqual([]);
  });

  test('the fake’s answers to Threads’ flows pass their schemas (containers, status, threads_publish, permalink, lookup, insights, refresh, an error)', async () => {
    const th = await fake('threads');
    const rec = recording();
    const c = createThreadsConnector({
      baseUrl: th.url,
      timeoutMs: 2_000,
      fetch: rec.fetch,
      pollIntervalMs: 5,
      pollTimeoutMs: 2_000,
      mediaUrl: async (item) => th.hostMedia(await item.read(), item.mimeType),
    });
    const post = await c.publish(request(th));
    await c.publish(request(th, { text: 'With an image', media: [image('a')] }));
    expect(await c.findPublished!(request(th))).toMatchObject({ platformPostId: post.platformPostId });
    const ref = { platformPostId: post.platformPostId, url: post.url };
    const reply = await c.publish(request(th, { text: 'A reply', replyTo: { root: ref, parent: ref } }));
    expect(await c.findPublished!(request(th, { text: 'A reply', replyTo: { root: ref, parent: ref } }))).toMatchObject({
      platformPostId: reply.platformPostId,
    });
    await c.readMetrics!(request(th).credentials, [post.platformPostId]);
    await c.refreshCredentials!(request(th).credentials);
    // Text over 500 characters: Graph's 400, an error answer.
    await expect(c.publish(request(th, { text: 'x'.repeat(501) }))).rejects.toThrow('500');

    expect(rec.answers.some((a) => a.query.get('fields') === 'status,error_message')).toBe(true);
    expect(rec.answers.some((a) => a.path.endsWith('/threads_publish') && a.status === 200)).toBe(true);
    expect(rec.answers.some((a) => a.path.endsWith('/insights') && a.status === 200)).toBe(true);
    expect(rec.answers.some((a) => a.path === '/refresh_access_token' && a.status === 200)).toBe(true);
    expect(rec.answers.some((a) => a.status === 400)).toBe(true);
    expect(misfits(th, rec.answers)).toEqual([]);
  });

  test('the fake’s refusals are Graph error bodies', async () => {
    const fb = await fake('facebook');
    const { body } = await post(fb, 'feed', { message: 'Hi', privacy: 'EVERYONE' });
    expect(Value.Check(GraphError, body)).toBe(true);
    expect(Value.Check(GraphError, { error: { message: 'x', type: 'OAuthException', code: '100', fbtrace_id: 'A' } })).toBe(false);
  });
});
