// LinkedIn's published request and answer shapes (LinkedIn publishes no typed SDK, so
// platforms/contracts/linkedin.ts holds them, written from the documentation pages) as the
// connector and the fake hold to them: the type-level checks below fail `tsc` when the contract's
// types stop refusing what LinkedIn refuses, or stop naming an answer's fields as LinkedIn does;
// the runtime tests show the fake refusing a post, upload or comment body that breaks them as
// LinkedIn refuses it, 422 with the Rest.li field path and code, the bodies the connector sends
// (text, visibility, single media, multi-image, document, video, comment) passing, and the fake's
// answers to those flows holding to the answer schemas.
import { describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  AccessTokenAnswer,
  Comment,
  type CommentBody,
  CommentsList,
  Document,
  Image,
  InitializeDocumentUploadAnswer,
  InitializeImageUploadAnswer,
  InitializeVideoUploadAnswer,
  type InitializeVideoUploadBody,
  Post,
  type PostBody,
  PostsList,
  RestliError,
  SocialActions,
  Video,
} from '../platforms/contracts/linkedin.ts';
import type { Answer } from '../platforms/json.ts';
import { createLinkedInConnector } from '../platforms/linkedin.ts';
import type { MediaRef } from '../platforms/types.ts';
import { type FakeLinkedIn, startFakeLinkedIn, linkedInRequest } from './fakes/linkedin.ts';
import { perTest } from './harness/per-test.ts';

const fake = perTest(startFakeLinkedIn);

const post: PostBody = {
  author: 'urn:li:person:8675309abc',
  commentary: 'Hello',
  visibility: 'PUBLIC',
  distribution: { feedDistribution: 'MAIN_FEED' },
  lifecycleState: 'PUBLISHED',
};

// The types the connector builds its requests with refuse what LinkedIn does not take.
export const typeChecks: PostBody[] = [
  {
    ...post,
    // @ts-expect-error the Posts API's text is `commentary`; `text` is refused as UNRECOGNIZED_FIELD
    text: 'Hello',
  },
  {
    ...post,
    // @ts-expect-error "FRIENDS" is no visibility (PUBLIC, CONNECTIONS, LOGGED_IN, CONTAINER)
    visibility: 'FRIENDS',
  },
  {
    ...post,
    // @ts-expect-error "LIVE" is no lifecycleState (PUBLISHED, DRAFT)
    lifecycleState: 'LIVE',
  },
  {
    ...post,
    // @ts-expect-error a media's alt text is `altText`, not `alt`
    content: { media: { id: 'urn:li:image:1', alt: 'a red square' } },
  },
];
export const commentChecks: CommentBody[] = [
  {
    actor: 'urn:li:person:8675309abc',
    object: 'urn:li:share:1',
    // @ts-expect-error a comment's text is `message.text`, not a string `message`
    message: 'Nice',
  },
];
export const uploadChecks: InitializeVideoUploadBody[] = [
  {
    initializeUploadRequest: {
      owner: 'urn:li:person:8675309abc',
      fileSizeBytes: 10,
      // @ts-expect-error uploadCaptions is a boolean
      uploadCaptions: 'no',
      uploadThumbnail: false,
    },
  },
];

// The answer types name LinkedIn's fields with their types: reading or writing one it does not send fails.
export function answerReads(
  post: Answer<Post>,
  video: Answer<InitializeVideoUploadAnswer>,
  image: Answer<InitializeImageUploadAnswer>,
  comment: Answer<Comment>,
  error: Answer<RestliError>,
) {
  return [
    // @ts-expect-error a post's URN is its `id`; the answer has no `urn`
    post.urn,
    // @ts-expect-error the video's URN is `value.video`, not `value.videoUrn`
    video.value?.videoUrn,
    // @ts-expect-error an image upload's URL is `value.uploadUrl`; `uploadInstructions` are the Videos API's
    image.value?.uploadInstructions,
    // @ts-expect-error a comment's text is `message.text`, not `text`
    comment.text,
    // @ts-expect-error the validation failures are under `errorDetails.inputErrors`, not `errors`
    error.errors,
  ];
}
const created = { actor: 'urn:li:person:8675309abc', time: 1 };
export const commentAnswers: Comment[] = [
  {
    id: '1',
    commentUrn: 'urn:li:comment:(urn:li:share:1,1)',
    actor: 'urn:li:person:8675309abc',
    object: 'urn:li:share:1',
    message: { text: 'Nice' },
    // @ts-expect-error `created` is an AuditStamp (actor, time in epoch milliseconds), not a date string
    created: '2026-11-29T00:00:00Z',
    lastModified: created,
  },
];
export const uploadAnswers: InitializeVideoUploadAnswer[] = [
  {
    value: {
      uploadUrlsExpireAt: 1,
      video: 'urn:li:video:1',
      // @ts-expect-error firstByte and lastByte are numbers
      uploadInstructions: [{ uploadUrl: 'https://example.com/0', firstByte: '0', lastByte: '9' }],
      uploadToken: '',
    },
  },
];
export const errorAnswers: RestliError[] = [
  // @ts-expect-error serviceErrorCode is a number
  { status: 401, message: 'Invalid access token', serviceErrorCode: '65600' },
];

const connector = (f: FakeLinkedIn) =>
  createLinkedInConnector({ baseUrl: f.url, authBaseUrl: f.url, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 2_000 });

const request = linkedInRequest;

function file(id: string, type: 'image' | 'document' | 'video', mimeType: string, altText: string | null = null): MediaRef {
  const bytes = new TextEncoder().encode(`${id} bytes`);
  const ext = { image: 'png', document: 'pdf', video: 'mp4' }[type];
  return { id, type, mimeType, fileName: `${id}.${ext}`, altText, read: async () => bytes };
}

/** A raw POST /rest/posts, as a client other than the connector would send it. */
const createPost = (f: FakeLinkedIn, body: unknown) => send(f, '/rest/posts', body);

/** A raw POST to the versioned REST API, as a client other than the connector would send it. */
async function send(f: FakeLinkedIn, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer good-token',
      'Content-Type': 'application/json',
      'X-Restli-Protocol-Version': '2.0.0',
      'LinkedIn-Version': '202609',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** LinkedIn's 422 for a body that breaks the schema (Rest.li's input error). */
function unprocessable(fieldPath: string, description: string, code: string) {
  return {
    errorDetailType: 'com.linkedin.common.error.BadRequest',
    message: `ERROR :: ${fieldPath} :: ${description}`,
    errorDetails: { inputErrors: [{ description, input: { inputPath: { fieldPath } }, code }] },
    status: 422,
  };
}

describe('LinkedIn published shapes', () => {
  test('the fake refuses a body that breaks the Posts API shape with 422 and the field path', async () => {
    const f = await fake();
    const base = {
      author: f.member,
      commentary: 'Hello',
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
      lifecycleState: 'PUBLISHED',
    };
    const { author: _author, ...noAuthor } = base;
    const { commentary: _commentary, ...noCommentary } = base;
    const required = 'field is required but not found and has no default value';
    const cases: [unknown, ReturnType<typeof unprocessable>][] = [
      [
        { ...base, visibility: 'FRIENDS' },
        unprocessable('/visibility', '"FRIENDS" is not one of PUBLIC, CONNECTIONS, LOGGED_IN, CONTAINER', 'INVALID_VALUE'),
      ],
      [noAuthor, unprocessable('/author', required, 'FIELD_REQUIRED')],
      // post-api-schema: commentary is required, with content or without.
      [{ ...noCommentary, content: { media: { id: 'urn:li:image:1' } } }, unprocessable('/commentary', required, 'FIELD_REQUIRED')],
      [{ ...base, distribution: {} }, unprocessable('/distribution/feedDistribution', required, 'FIELD_REQUIRED')],
      [{ ...base, lifecycleState: 'LIVE' }, unprocessable('/lifecycleState', '"LIVE" is not one of PUBLISHED, DRAFT', 'INVALID_VALUE')],
      [{ ...base, text: 'Hello' }, unprocessable('/text', 'unrecognized field found but not allowed', 'UNRECOGNIZED_FIELD')],
      [
        { ...base, content: { media: { id: 'urn:li:image:1', alt: 'x' } } },
        unprocessable('/content/media/alt', 'unrecognized field found but not allowed', 'UNRECOGNIZED_FIELD'),
      ],
      [{ ...base, isReshareDisabledByAuthor: 'no' }, unprocessable('/isReshareDisabledByAuthor', 'Expected boolean', 'INVALID_VALUE')],
    ];
    for (const [body, error] of cases) expect(await createPost(f, body)).toEqual({ status: 422, body: error });
    expect(f.posts).toHaveLength(0);
  });

  test('what the connector sends passes the fake’s schemas (text, visibility, image, multi-image, document, video, comment)', async () => {
    const f = await fake();
    const c = connector(f);
    await c.publish(request(f, { options: { visibility: 'CONNECTIONS' } }));
    await c.publish(request(f, { text: 'One image', media: [file('a', 'image', 'image/png', 'A red square')] }));
    await c.publish(request(f, { text: 'Two images', media: [file('b', 'image', 'image/png'), file('c', 'image', 'image/png', 'C')] }));
    await c.publish(request(f, { text: 'A report', media: [file('d', 'document', 'application/pdf')] }));
    const clip = await c.publish(request(f, { text: 'A clip', media: [file('e', 'video', 'video/mp4')] }));
    await c.publish(request(f, { text: 'First!', replyTo: { root: clip, parent: clip } }));
    expect(f.posts.map((p) => [p.rendered, p.visibility, Object.keys(p.content ?? {})])).toEqual([
      ['Hello LinkedIn', 'CONNECTIONS', []],
      ['One image', 'PUBLIC', ['media']],
      ['Two images', 'PUBLIC', ['multiImage']],
      ['A report', 'PUBLIC', ['media']],
      ['A clip', 'PUBLIC', ['media']],
    ]);
    expect(f.comments.map((x) => [x.object, x.text])).toEqual([[clip.platformPostId, 'First!']]);
    expect(f.assets.map((a) => [a.kind, a.status])).toEqual([
      ['images', 'AVAILABLE'],
      ['images', 'AVAILABLE'],
      ['images', 'AVAILABLE'],
      ['documents', 'AVAILABLE'],
      ['videos', 'AVAILABLE'],
    ]);
  });

  test('the fake refuses an upload or comment body that breaks its documented shape with 422 and the field path', async () => {
    const f = await fake();
    const target = f.addPost(f.member, 'Something to comment on');
    const required = 'field is required but not found and has no default value';
    const unrecognized = 'unrecognized field found but not allowed';
    const video = { owner: f.member, fileSizeBytes: 10, uploadCaptions: false, uploadThumbnail: false };
    const comment = { actor: f.member, object: target.urn, message: { text: 'Nice' } };
    const commentsOf = `/rest/socialActions/${encodeURIComponent(target.urn)}/comments`;
    const cases: [string, unknown, ReturnType<typeof unprocessable>][] = [
      [
        '/rest/images?action=initializeUpload',
        { initializeUploadRequest: { owner: f.member, fileSizeBytes: 10 } },
        unprocessable('/initializeUploadRequest/fileSizeBytes', unrecognized, 'UNRECOGNIZED_FIELD'),
      ],
      [
        '/rest/images?action=initializeUpload',
        { initializeUploadRequest: { owner: f.member, mediaLibraryMetadata: { associatedAccount: 'urn:li:sponsoredAccount:1' } } },
        unprocessable('/initializeUploadRequest/mediaLibraryMetadata/assetName', required, 'FIELD_REQUIRED'),
      ],
      [
        '/rest/documents?action=initializeUpload',
        { initializeUploadRequest: {} },
        unprocessable('/initializeUploadRequest/owner', required, 'FIELD_REQUIRED'),
      ],
      [
        '/rest/videos?action=initializeUpload',
        { initializeUploadRequest: { ...video, fileSizeBytes: undefined } },
        unprocessable('/initializeUploadRequest/fileSizeBytes', required, 'FIELD_REQUIRED'),
      ],
      [
        '/rest/videos?action=initializeUpload',
        { initializeUploadRequest: { ...video, uploadCaptions: 'no' } },
        unprocessable('/initializeUploadRequest/uploadCaptions', 'Expected boolean', 'INVALID_VALUE'),
      ],
      [
        '/rest/videos?action=finalizeUpload',
        { finalizeUploadRequest: { video: 'urn:li:video:1', uploadedPartIds: [] } },
        unprocessable('/finalizeUploadRequest/uploadToken', required, 'FIELD_REQUIRED'),
      ],
      [commentsOf, { ...comment, text: 'Nice' }, unprocessable('/text', unrecognized, 'UNRECOGNIZED_FIELD')],
      [commentsOf, { ...comment, message: 'Nice' }, unprocessable('/message', 'Expected object', 'INVALID_VALUE')],
      [
        commentsOf,
        { ...comment, message: { text: 'Nice', format: 'MARKDOWN' } },
        unprocessable('/message/format', unrecognized, 'UNRECOGNIZED_FIELD'),
      ],
      [commentsOf, { ...comment, actor: undefined }, unprocessable('/actor', required, 'FIELD_REQUIRED')],
    ];
    for (const [path, body, error] of cases) expect([path, await send(f, path, body)]).toEqual([path, { status: 422, body: error }]);
    expect([f.assets, f.comments]).toEqual([[], []]);
  });

  test('the fake’s answers to the connector’s flows hold to the answer schemas (uploads, states, posts, comments, errors, tokens)', async () => {
    const f = await fake();
    const c = connector(f);
    const org = { accessToken: 'org-token', authorUrn: f.organization };
    await c.publish(request(f, { credentials: org, text: 'One image', media: [file('a', 'image', 'image/png')] }));
    await c.publish(request(f, { credentials: org, text: 'A report', media: [file('d', 'document', 'application/pdf')] }));
    await c.publish(request(f, { credentials: org, text: 'A clip', media: [file('e', 'video', 'video/mp4')] }));
    const bad: string[] = [];
    const holds = (what: string, schema: TSchema, body: unknown) => {
      if (!Value.Check(schema, body)) bad.push(`${what}: ${JSON.stringify([...Value.Errors(schema, body)].map((e) => e.path))}`);
    };

    // initializeUpload, each kind, and the states the connector polls.
    const owner = { initializeUploadRequest: { owner: f.organization } };
    holds('images init', InitializeImageUploadAnswer, (await call(f, 'POST', '/rest/images?action=initializeUpload', owner)).body);
    // An image filed in an ad account's media library: the optional mediaLibraryMetadata is taken.
    const library = { associatedAccount: 'urn:li:sponsoredAccount:1', assetName: 'Launch' };
    const filed = await call(f, 'POST', '/rest/images?action=initializeUpload', {
      initializeUploadRequest: { owner: f.organization, mediaLibraryMetadata: library },
    });
    expect(filed.status).toBe(200);
    holds('images init (media library)', InitializeImageUploadAnswer, filed.body);
    holds('documents init', InitializeDocumentUploadAnswer, (await call(f, 'POST', '/rest/documents?action=initializeUpload', owner)).body);
    const video = { initializeUploadRequest: { owner: f.organization, fileSizeBytes: 10, uploadCaptions: false, uploadThumbnail: false } };
    holds('videos init', InitializeVideoUploadAnswer, (await call(f, 'POST', '/rest/videos?action=initializeUpload', video)).body);
    const states = { images: Image, documents: Document, videos: Video };
    for (const a of f.assets)
      holds(`${a.kind} ${a.status}`, states[a.kind], (await call(f, 'GET', `/rest/${a.kind}/${encodeURIComponent(a.urn)}`)).body);

    // The post create answer: 201, the URN in x-restli-id, no body; the post read back, the finder, the social actions.
    const sent = await call(f, 'POST', '/rest/posts', {
      author: f.organization,
      commentary: 'Read back',
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED' },
      lifecycleState: 'PUBLISHED',
    });
    const urn = sent.headers.get('x-restli-id') ?? '';
    expect([sent.status, urn.startsWith('urn:li:share:'), sent.text]).toEqual([201, true, '']);
    holds('post', Post, (await call(f, 'GET', `/rest/posts/${encodeURIComponent(urn)}`)).body);
    const q = new URLSearchParams({ author: f.organization, q: 'author', count: '20', sortBy: 'LAST_MODIFIED' });
    const finder = await call(f, 'GET', `/rest/posts?${q}`);
    expect((finder.body as PostsList).elements.length).toBe(4);
    holds('posts finder', PostsList, finder.body);
    holds('social actions', SocialActions, (await call(f, 'GET', `/rest/socialActions/${encodeURIComponent(urn)}`)).body);

    // A comment and a reply: 201 with the id in x-restli-id and the comment in the body; the lists.
    const commentsOf = (on: string) => `/rest/socialActions/${encodeURIComponent(on)}/comments`;
    const made = await call(f, 'POST', commentsOf(urn), { actor: f.organization, object: urn, message: { text: 'First' } });
    expect([made.status, made.headers.get('x-restli-id')]).toEqual([201, (made.body as Comment).id]);
    holds('comment create', Comment, made.body);
    const parent = (made.body as Comment).commentUrn;
    const reply = await call(f, 'POST', commentsOf(parent), {
      actor: f.organization,
      object: urn,
      parentComment: parent,
      message: { text: 'Re' },
    });
    holds('reply create', Comment, reply.body);
    holds('comments', CommentsList, (await call(f, 'GET', `${commentsOf(urn)}?start=0&count=100`)).body);
    holds('replies', CommentsList, (await call(f, 'GET', `${commentsOf(parent)}?start=0&count=100`)).body);

    // Errors: a validation failure, a duplicate, a missing token, a post LinkedIn does not have.
    const again = await call(f, 'POST', '/rest/posts', {
      author: f.organization,
      commentary: 'Read back',
      visibility: 'PUBLIC',
      distribution: { feedDistribution: 'MAIN_FEED' },
      lifecycleState: 'PUBLISHED',
    });
    expect((again.body as RestliError).errorDetails?.inputErrors?.[0]?.code).toBe('DUPLICATE_POST');
    holds('duplicate', RestliError, again.body);
    holds('422', RestliError, (await call(f, 'POST', '/rest/posts', { author: f.organization })).body);
    holds('401', RestliError, (await call(f, 'GET', `/rest/posts/${encodeURIComponent(urn)}`, undefined, 'no-such-token')).body);
    holds('404', RestliError, (await call(f, 'GET', '/rest/posts/urn%3Ali%3Ashare%3A1')).body);

    // The refresh-token answer.
    const token = await fetch(`${f.url}/oauth/v2/accessToken`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'li-refresh-1',
        client_id: f.clientId,
        client_secret: f.clientSecret,
      }),
    });
    holds('token', AccessTokenAnswer, await token.json());
    expect(bad).toEqual([]);
  });
});

/** A raw call to the versioned REST API, as the connector makes it (org-token unless told). */
async function call(
  f: FakeLinkedIn,
  method: string,
  path: string,
  body?: unknown,
  token = 'org-token',
): Promise<{ status: number; headers: Headers; text: string; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      'X-Restli-Protocol-Version': '2.0.0',
      'LinkedIn-Version': '202609',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}
