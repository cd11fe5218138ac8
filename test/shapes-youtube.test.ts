// The YouTube connector and its fake held to the published contract (@googleapis/youtube's
// youtube_v3 types, https://developers.google.com/youtube/v3/docs). The `@ts-expect-error` lines
// are the type-level half: `tsc --noEmit -p .` fails if one of them stops being an error, that is
// when a misspelt field or a value outside a documented enumeration would reach YouTube. The
// tests are the runtime half: the fake refuses a body that breaks the published shape with
// Google's error body, and Google's documented error bodies become the right PlatformError.
import { afterEach, describe, expect, test } from 'bun:test';
import type { youtube_v3 } from '@googleapis/youtube';
import { Type as T, type Static } from '@sinclair/typebox';
import { classifyPlatformError } from '../platforms/failure-class.ts';
import type { PlatformError } from '../platforms/types.ts';
import { createYouTubeConnector, type GoogleErrorBody, type VideoInsertResource, youtubeQuery } from '../platforms/youtube.ts';
import {
  type CommentInsertSchema,
  type CommentThreadInsertSchema,
  FAKE_CLIENT,
  startFakeYouTube,
  type FakeYouTube,
  type VideoInsertSchema,
} from './fakes/youtube.ts';
import { failure } from './harness/platform-failure.ts';
import type { ChannelErrorCode } from '../workflows/publish-failure-types.ts';
import type { Within } from './harness/type-checks.ts';

describe('type level: what the connector sends is the published shape', () => {
  test('videos.insert, commentThreads.insert, comments.insert and the query parameters', () => {
    const video: VideoInsertResource = {
      snippet: { title: 'Launch', description: 'Our kite', tags: ['kites'], categoryId: '22' },
      status: { privacyStatus: 'unlisted', selfDeclaredMadeForKids: false },
    };
    const fits: youtube_v3.Schema$Video = video;
    const wrongField: VideoInsertResource = {
      // @ts-expect-error Schema$VideoSnippet has no `titel`
      snippet: { titel: 'Launch', title: 'Launch', description: '' },
      status: {},
    };
    const wrongEnum: VideoInsertResource = {
      snippet: { title: 'Launch', description: '' },
      // @ts-expect-error privacyStatus is public, unlisted or private
      status: { privacyStatus: 'hidden' },
    };
    const wrongType: VideoInsertResource = {
      snippet: { title: 'Launch', description: '' },
      // @ts-expect-error selfDeclaredMadeForKids is a boolean
      status: { selfDeclaredMadeForKids: 'no' },
    };
    // @ts-expect-error Schema$CommentThreadSnippet has no `text`: the text is the top-level comment's textOriginal
    const thread: youtube_v3.Schema$CommentThread = { snippet: { videoId: 'v', text: 'Hi' } };
    // @ts-expect-error Schema$CommentSnippet names the comment answered `parentId`
    const reply: youtube_v3.Schema$Comment = { snippet: { parent: 'c', textOriginal: 'Hi' } };
    // @ts-expect-error commentThreads.list has no `sortOrder` parameter
    youtubeQuery('threads', { part: ['snippet'], videoId: 'v', sortOrder: 'time' });
    // @ts-expect-error commentThreads.list orders by time or relevance
    youtubeQuery('threads', { part: ['snippet'], videoId: 'v', order: 'newest' });
    // @ts-expect-error comments.setModerationStatus takes heldForReview, published, likelySpam or rejected
    youtubeQuery('moderate', { id: ['c'], moderationStatus: 'hidden' });
    // @ts-expect-error part is a list of part names
    youtubeQuery('videos', { part: 'statistics', id: ['v'] });
    expect([fits, wrongField, wrongEnum, wrongType, thread, reply].length).toBe(6);
    expect(youtubeQuery('threads', { part: ['snippet', 'replies'], videoId: 'v', maxResults: 100, pageToken: undefined }).toString()).toBe(
      'part=snippet%2Creplies&videoId=v&maxResults=100',
    );
  });

  test('the fake’s schemas are within the published resources', () => {
    const video: Within<Static<typeof VideoInsertSchema>, youtube_v3.Schema$Video> = true;
    const thread: Within<Static<typeof CommentThreadInsertSchema>, youtube_v3.Schema$CommentThread> = true;
    const comment: Within<Static<typeof CommentInsertSchema>, youtube_v3.Schema$Comment> = true;
    const Caption = T.Object({ snippet: T.Object({ title: T.String(), caption: T.String() }) });
    // @ts-expect-error a schema with a field Schema$Video's snippet lacks is not within it
    const extra: Within<Static<typeof Caption>, youtube_v3.Schema$Video> = true;
    const Loose = T.Object({ status: T.Object({ selfDeclaredMadeForKids: T.String() }) });
    // @ts-expect-error a schema whose value the published type does not take is not within it
    const loose: Within<Static<typeof Loose>, youtube_v3.Schema$Video> = true;
    expect([video, thread, comment, extra, loose]).toEqual([true, true, true, true, true]);
  });
});

const fakes: FakeYouTube[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeYouTube> {
  const f = await startFakeYouTube();
  fakes.push(f);
  return f;
}

async function startUpload(f: FakeYouTube, body: unknown): Promise<Response> {
  return fetch(`${f.url}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer good-token',
      'Content-Type': 'application/json',
      'X-Upload-Content-Length': '1000',
      'X-Upload-Content-Type': 'video/mp4',
    },
    body: JSON.stringify(body),
  });
}

describe('the fake refuses what breaks the published shape, as YouTube does', () => {
  test('videos.insert: a privacyStatus outside the enumeration is 400 invalidVideoMetadata', async () => {
    const f = await fake();
    const res = await startUpload(f, { snippet: { title: 'Launch' }, status: { privacyStatus: 'hidden' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        code: 400,
        message: 'The request metadata is invalid.',
        errors: [{ message: 'The request metadata is invalid.', domain: 'youtube.video', reason: 'invalidVideoMetadata' }],
        status: 'INVALID_ARGUMENT',
      },
    });
    expect(f.sessions).toHaveLength(0);
  });

  test('videos.insert: a field Schema$Video does not have is an unknown name; a wrong type invalid metadata', async () => {
    const f = await fake();
    const unknown = (await (
      await startUpload(f, { snippet: { title: 'Launch' }, status: { visibility: 'public' } })
    ).json()) as GoogleErrorBody;
    expect(unknown.error.message).toBe(`Invalid JSON payload received. Unknown name "visibility" at 'resource.status': Cannot find field.`);
    expect(unknown.error.errors[0]!.reason).toBe('badRequest');
    const typed = await startUpload(f, { snippet: { title: 'Launch', tags: 'kites' } });
    expect(typed.status).toBe(400);
    expect(((await typed.json()) as GoogleErrorBody).error.errors[0]!.reason).toBe('invalidVideoMetadata');
    expect(f.sessions).toHaveLength(0);
  });

  test('commentThreads.insert and comments.insert: a body off the resource’s shape is refused', async () => {
    const f = await fake();
    const video = f.addVideo({ title: 'Launch', description: '' });
    const post = (path: string, body: unknown) =>
      fetch(`${f.url}/youtube/v3/${path}?part=snippet`, {
        method: 'POST',
        headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const thread = await post('commentThreads', { snippet: { videoId: video.id, text: 'Hi' } });
    expect(thread.status).toBe(400);
    expect(((await thread.json()) as GoogleErrorBody).error.message).toBe(
      `Invalid JSON payload received. Unknown name "text" at 'resource.snippet': Cannot find field.`,
    );
    const reply = await post('comments', { snippet: { parentId: 42, textOriginal: 'Hi' } });
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as GoogleErrorBody).error.errors[0]).toEqual({
      message: 'The request metadata is invalid.',
      domain: 'youtube.comment',
      reason: 'invalidCommentMetadata',
    });
  });
});

/** A connector whose every request YouTube answers with this status and body. */
function answering(status: number, body: GoogleErrorBody) {
  const fetch = (async () => Response.json(body, { status })) as unknown as typeof globalThis.fetch;
  return createYouTubeConnector({ fetch, oauth: FAKE_CLIENT, timeoutMs: 2_000 });
}

/** Google's error body for one error of https://developers.google.com/youtube/v3/docs/errors. */
function documented(code: number, domain: string, reason: string, message: string): GoogleErrorBody {
  return { error: { code, message, errors: [{ message, domain, reason }] } };
}

const credentials = { accessToken: 'good-token', refreshToken: 'good-refresh' };

async function readFailure(status: number, body: GoogleErrorBody): Promise<PlatformError> {
  return failure(answering(status, body).readMetrics!(credentials, ['v1']));
}

describe('Google’s documented error bodies read into PlatformError', () => {
  const cases: [string, number, GoogleErrorBody, PlatformError['kind'], ChannelErrorCode][] = [
    [
      'quotaExceeded',
      403,
      documented(
        403,
        'youtube.quota',
        'quotaExceeded',
        'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
      ),
      'transient',
      'rate_limited',
    ],
    [
      'uploadLimitExceeded',
      400,
      documented(400, 'youtube.video', 'uploadLimitExceeded', 'The user has exceeded the number of videos they may upload.'),
      'permanent',
      'rejected_content',
    ],
    [
      'forbidden',
      403,
      documented(403, 'youtube.video', 'forbidden', 'The request is not properly authorized.'),
      'permanent',
      'rejected_content',
    ],
    [
      'invalidTitle',
      400,
      documented(400, 'youtube.video', 'invalidTitle', 'The request metadata specifies an invalid or empty video title.'),
      'permanent',
      'rejected_content',
    ],
    [
      'commentsDisabled',
      403,
      documented(403, 'youtube.commentThread', 'commentsDisabled', 'The video identified by the videoId parameter has disabled comments.'),
      'permanent',
      'rejected_content',
    ],
    [
      'authorizationRequired',
      401,
      documented(401, 'youtube.header', 'authorizationRequired', 'The request uses the mine parameter but is not properly authorized.'),
      'reauth',
      'reauth_required',
    ],
    [
      'insufficientPermissions',
      403,
      documented(403, 'global', 'insufficientPermissions', 'Request had insufficient authentication scopes.'),
      'reauth',
      'reauth_required',
    ],
    ['backendError', 503, documented(503, 'global', 'backendError', 'Backend Error'), 'transient', 'platform_unavailable'],
  ];

  for (const [reason, status, body, kind, errorCode] of cases) {
    test(`${status} ${reason} → ${kind}, ${errorCode}`, async () => {
      const err = await readFailure(status, body);
      expect(err.kind).toBe(kind);
      expect(err.opts).toMatchObject({ status, platformCode: reason });
      expect(err.message).toBe(`YouTube ${status}: ${body.error.message.replace(/<[^>]*>/g, '')} (${reason})`);
      expect(classifyPlatformError('YOUTUBE', err).errorCode).toBe(errorCode);
    });
  }
});
