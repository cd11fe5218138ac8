// LinkedIn's published request shapes (LinkedIn publishes no typed SDK, so platforms/contracts/linkedin.ts
// holds them, written from the documentation pages) as the connector and the fake hold to them:
// the type-level checks below fail `tsc` when the contract's types stop refusing what LinkedIn
// refuses; the runtime tests show the fake refusing a post, upload or comment body that breaks
// them as LinkedIn refuses it, 422 with the Rest.li field path and code, and the bodies the
// connector sends (text, visibility, single media, multi-image, document, video, comment) pass.
import { describe, expect, test } from 'bun:test';
import type { CommentBody, InitializeVideoUploadBody, PostBody } from '../platforms/contracts/linkedin.ts';
import { createLinkedInConnector } from '../platforms/linkedin.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { type FakeLinkedIn, startFakeLinkedIn } from './fakes/linkedin.ts';
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

const connector = (f: FakeLinkedIn) =>
  createLinkedInConnector({ baseUrl: f.url, authBaseUrl: f.url, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 2_000 });

function request(f: FakeLinkedIn, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello LinkedIn',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token', authorUrn: f.member },
    ...over,
  };
}

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
    const required = 'field is required but not found and has no default value';
    const cases: [unknown, ReturnType<typeof unprocessable>][] = [
      [
        { ...base, visibility: 'FRIENDS' },
        unprocessable('/visibility', '"FRIENDS" is not one of PUBLIC, CONNECTIONS, LOGGED_IN, CONTAINER', 'INVALID_VALUE'),
      ],
      [noAuthor, unprocessable('/author', required, 'FIELD_REQUIRED')],
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
});
