// The X connector and its fake held to the published shapes (twitter-api-v2 1.29.1's types, with
// reply_settings and the media upload's media_type held to X's documented values): type-level
// checks that a body with a field or value X does not have does not compile (`tsc --noEmit` fails
// if a check stops working), the fake refusing a body that breaks the shape as X does (the post,
// the media upload's initialize, media metadata, hiding a reply), and X's documented error bodies
// read into PlatformError.
import { describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type { SendTweetV2Params } from 'twitter-api-v2';
import type { MediaV2UploadInitParams } from 'twitter-api-v2/dist/esm/types/v2/media.v2.types';
import { failureCodeOf } from '../platforms/failure-class.ts';
import {
  createXConnector,
  type HideReplyParams,
  type MediaMetadataParams,
  type SearchQuery,
  type TimelineQuery,
  type TweetParams,
  type XProblem,
  type XReplySettings,
} from '../platforms/x.ts';
import {
  type CreateTweetBody,
  type FakeX,
  type HideReplyBody,
  type MEDIA_TYPES,
  type MediaInitBody,
  type MediaMetadataBody,
  type REPLY_SETTINGS,
  startFakeX,
  xRequest,
} from './fakes/x.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';
import { agrees, type Equals, type Exactly, type Flat, type Within } from './harness/type-checks.ts';

// The fake's schema is the published shape: its Static type is the connector's TweetParams
// (SendTweetV2Params with X's reply_settings), and its reply settings are X's documented ones.
const schemaIsPublished: Exactly<Static<typeof CreateTweetBody>, Flat<TweetParams>> = true;
const replySettingsArePublished: Exactly<(typeof REPLY_SETTINGS)[number], XReplySettings> = true;
// Why reply_settings is narrowed: the package's own type takes any string.
const packageTakesAnyString: SendTweetV2Params = { text: 'Hello', reply_settings: 'anyone' };
// The media upload's initialize: every value the schema takes is one MediaV2UploadInitParams
// takes (its media_type is any string; the schema's is X's list), and apart from media_type the
// two are the same fields, each as optional and of the same type.
agrees<Within<Static<typeof MediaInitBody>, MediaV2UploadInitParams>>();
agrees<Equals<Omit<Static<typeof MediaInitBody>, 'media_type'>, Omit<MediaV2UploadInitParams, 'media_type'>>>();
agrees<Exactly<keyof Static<typeof MediaInitBody>, keyof MediaV2UploadInitParams>>();
agrees<Exactly<Static<typeof MediaInitBody>['media_type'], (typeof MEDIA_TYPES)[number]>>();
// Media metadata and hiding a reply: the connector's types, the same fields at every level.
agrees<Equals<Static<typeof MediaMetadataBody>, MediaMetadataParams>>();
agrees<Equals<Static<typeof HideReplyBody>, HideReplyParams>>();

/** Bodies that must not compile: each line is a type error, and `@ts-expect-error` fails the typecheck if it is not. */
function refusedAtCompileTime(): unknown[] {
  // @ts-expect-error a field SendTweetV2Params does not have
  const unknownField: TweetParams = { text: 'Hello', reply_to: { in_reply_to_tweet_id: '1' } };
  // @ts-expect-error a reply_settings X does not have
  const wrongEnum: TweetParams = { text: 'Hello', reply_settings: 'anyone' };
  // @ts-expect-error a field `reply` does not have
  const nested: TweetParams = { text: 'Hello', reply: { in_reply_to_tweet_id: '1', in_reply_to_user_id: '2' } };
  // @ts-expect-error more than 4 media ids
  const fiveMedia: TweetParams = { media: { media_ids: ['1', '2', '3', '4', '5'] } };
  // @ts-expect-error a poll field X does not have (it is duration_minutes)
  const poll: TweetParams = { text: 'Hello', poll: { options: ['a', 'b'], duration: 60 } };
  // @ts-expect-error a tweet field that does not exist
  const fields: SearchQuery = { query: 'conversation_id:1', 'tweet.fields': ['craeted_at'] };
  // @ts-expect-error an exclude value X does not have
  const exclude: TimelineQuery = { exclude: ['quotes'] };
  // @ts-expect-error hidden is a boolean
  const hide: HideReplyParams = { hidden: 'true' };
  // @ts-expect-error a media_category X does not have
  const category: MediaV2UploadInitParams = { media_type: 'image/png', total_bytes: 1, media_category: 'tweet_photo' };
  // @ts-expect-error a field MediaV2UploadInitParams does not have (the v1.1 upload's command)
  const command: MediaV2UploadInitParams = { command: 'INIT', media_type: 'image/png', total_bytes: 1 };
  // @ts-expect-error total_bytes is a number
  const bytesText: MediaV2UploadInitParams = { media_type: 'image/png', total_bytes: '1' };
  // @ts-expect-error alt text is an object with `text`
  const altText: MediaMetadataParams = { id: '1', metadata: { alt_text: 'A cat' } };
  // @ts-expect-error metadata the package does not have (v1.1 put the media id beside alt_text)
  const flatAlt: MediaMetadataParams = { media_id: '1', alt_text: { text: 'A cat' } };
  return [unknownField, wrongEnum, nested, fiveMedia, poll, fields, exclude, hide, category, command, bytesText, altText, flatAlt];
}

const fake = perTest(startFakeX);

const connector = (f: FakeX) => createXConnector({ baseUrl: f.url, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 2_000 });

const request = xRequest;

/** A raw JSON request, as a client other than the connector would send it. */
async function send(f: FakeX, method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method,
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** A raw POST /2/tweets. */
const postTweet = (f: FakeX, body: unknown) => send(f, 'POST', '/2/tweets', body);

/** X's invalid-request problem (https://docs.x.com/x-api/fundamentals/response-codes-and-errors). */
function invalidRequest(message: string): XProblem {
  return {
    errors: [{ parameters: {}, message }],
    title: 'Invalid Request',
    detail: 'One or more parameters to your request was invalid.',
    type: 'https://api.twitter.com/2/problems/invalid-request',
  };
}

describe('X published shapes', () => {
  test('type-level checks hold (see tsc)', () => {
    expect([schemaIsPublished, replySettingsArePublished]).toEqual([true, true]);
    expect(packageTakesAnyString.reply_settings).toBe('anyone');
    expect(refusedAtCompileTime()).toHaveLength(13);
  });

  test('the fake refuses a body that breaks the shape with 400 and X’s problem details', async () => {
    const f = await fake();
    const cases: [unknown, string][] = [
      [
        { text: 'Hello', reply_settings: 'anyone' },
        '$.reply_settings: does not have a value in the enumeration [following, mentionedUsers, subscribers, verified]',
      ],
      [
        { text: 'Hello', reply_to: { in_reply_to_tweet_id: '1' } },
        '$.reply_to: is not defined in the schema and the schema does not allow additional properties',
      ],
      [{ text: 'Hello', reply: {} }, '$.reply.in_reply_to_tweet_id: is missing but it is required'],
      [{ media: { media_ids: ['1', '2', '3', '4', '5'] } }, '$.media.media_ids: must have between 1 and 4 items'],
      [{ media: { media_ids: [1] } }, '$.media.media_ids[0]: does not match the pattern ^[0-9]{1,19}$'],
      [
        { text: 'Hello', poll: { options: ['a', 'b'], duration_minutes: 60, multiple: true } },
        '$.poll.multiple: is not defined in the schema and the schema does not allow additional properties',
      ],
    ];
    for (const [body, message] of cases) expect(await postTweet(f, body)).toEqual({ status: 400, body: invalidRequest(message) });
    expect(f.tweets).toHaveLength(0);
  });

  test('what the connector sends passes the fake’s schema (text, reply, reply settings, poll)', async () => {
    const f = await fake();
    const post = await connector(f).publish(
      request({ options: { replySettings: 'following', poll: { options: ['Red', 'Blue'], durationMinutes: 60 } } }),
    );
    const root = { platformPostId: post.platformPostId, url: post.url };
    await connector(f).publish(request({ text: 'And more', replyTo: { root, parent: root } }));
    expect(f.tweets.map((t) => [t.text, t.inReplyTo, t.replySettings, t.poll?.options])).toEqual([
      ['Hello from Postpilot', null, 'following', ['Red', 'Blue']],
      ['And more', post.platformPostId, null, undefined],
    ]);
  });

  test('the media upload’s initialize: a body that breaks MediaInitBody is 400 with X’s problem details', async () => {
    const f = await fake();
    const ok = { media_type: 'image/png', total_bytes: 10, media_category: 'tweet_image' };
    const cases: [unknown, string][] = [
      [
        { ...ok, media_category: 'tweet_photo' },
        '$.media_category: does not have a value in the enumeration [amplify_video, tweet_gif, tweet_image, tweet_video, dm_gif, dm_image, dm_video, subtitles]',
      ],
      [
        { ...ok, media_type: 'image/heic' },
        expect.stringMatching(/^\$\.media_type: does not have a value in the enumeration \[video\/mp4, /),
      ],
      [{ media_type: 'image/png' }, '$.total_bytes: is missing but it is required'],
      [{ ...ok, total_bytes: '10' }, '$.total_bytes: string found, integer expected'],
      [{ ...ok, total_bytes: -1 }, '$.total_bytes: must have a minimum value of 0'],
      [{ ...ok, command: 'INIT' }, '$.command: is not defined in the schema and the schema does not allow additional properties'],
      [{ ...ok, additional_owners: ['@someone'] }, '$.additional_owners[0]: does not match the pattern ^[0-9]{1,19}$'],
    ];
    for (const [body, message] of cases) {
      expect(await send(f, 'POST', '/2/media/upload/initialize', body)).toEqual({ status: 400, body: invalidRequest(message) });
    }
    expect(f.media).toHaveLength(0);
    expect((await send(f, 'POST', '/2/media/upload/initialize', ok)).status).toBe(200);
    expect(f.media.map((m) => [m.mediaType, m.category, m.totalBytes])).toEqual([['image/png', 'tweet_image', 10]]);
  });

  test('media metadata: a body that breaks MediaMetadataBody is 400 with X’s problem details', async () => {
    const f = await fake();
    const [id] = f.addTweet('With a picture', { mediaCount: 1 }).mediaIds;
    const cases: [unknown, string][] = [
      [{ id, metadata: { alt_text: 'A cat' } }, '$.metadata.alt_text: string found, object expected'],
      [{ id, metadata: { alt_text: { text: 'a'.repeat(1001) } } }, '$.metadata.alt_text.text: may only be 1000 characters long'],
      [{ id, metadata: { alt_text: {} } }, '$.metadata.alt_text.text: is missing but it is required'],
      [{ media_id: id, alt_text: { text: 'A cat' } }, '$.id: is missing but it is required'],
      [
        { id, metadata: { alt_text: { text: 'A cat' }, sensitive_media_warning: { other: true } } },
        '$.metadata.sensitive_media_warning: is not defined in the schema and the schema does not allow additional properties',
      ],
    ];
    for (const [body, message] of cases) {
      expect(await send(f, 'POST', '/2/media/metadata', body)).toEqual({ status: 400, body: invalidRequest(message) });
    }
    expect(f.media[0]!.altText).toBeNull();
  });

  test('hiding a reply: a body that breaks HideReplyBody is 400 with X’s problem details', async () => {
    const f = await fake();
    const reply = f.reply(f.addTweet('Mine'), { id: '42', username: 'someone', name: 'Someone' }, 'Rude');
    const path = `/2/tweets/${reply.id}/hidden`;
    const cases: [unknown, string][] = [
      [{ hidden: 'true' }, '$.hidden: string found, boolean expected'],
      [{}, '$.hidden: is missing but it is required'],
      [{ hidden: true, reason: 'rude' }, '$.reason: is not defined in the schema and the schema does not allow additional properties'],
    ];
    for (const [body, message] of cases) expect(await send(f, 'PUT', path, body)).toEqual({ status: 400, body: invalidRequest(message) });
    expect(reply.hidden).toBeUndefined();
    expect(await send(f, 'PUT', path, { hidden: true })).toEqual({ status: 200, body: { data: { hidden: true } } });
  });

  test('what the connector sends passes the media and hide schemas (initialize, metadata, hidden)', async () => {
    const f = await fake();
    const png = (id: string, altText?: string) => ({
      id,
      type: 'image' as const,
      mimeType: 'image/png',
      fileName: `${id}.png`,
      altText,
      read: async () => new Uint8Array([1, 2, 3]),
    });
    const gif = { ...png('g'), type: 'gif' as const, mimeType: 'image/gif', fileName: 'g.gif', altText: 'Moving' };
    const post = await connector(f).publish(request({ media: [png('a', 'A cat'), png('b')] }));
    await connector(f).publish(request({ text: 'A GIF', media: [gif] }));
    expect(f.requests.filter((r) => r.path === '/2/media/upload/initialize')).toHaveLength(3);
    expect(f.media.map((m) => [m.mediaType, m.category, m.totalBytes, m.altText])).toEqual([
      ['image/png', 'tweet_image', 3, 'A cat'],
      ['image/png', 'tweet_image', 3, null],
      ['image/gif', 'tweet_gif', 3, 'Moving'],
    ]);
    const reply = f.reply(f.tweets.find((t) => t.id === post.platformPostId)!, { id: '42', username: 'someone', name: 'Someone' }, 'Rude');
    const target = { platformCommentId: reply.id, url: null, post: { platformPostId: post.platformPostId, url: post.url } };
    await connector(f).hideComment!({ accessToken: 'good-token' }, target, true);
    expect(reply.hidden).toBe(true);
    await connector(f).hideComment!({ accessToken: 'good-token' }, target, false);
    expect(reply.hidden).toBe(false);
  });
});

// X's error bodies: problem details (title, detail, type, status; errors[] with message on an
// invalid request), https://docs.x.com/x-api/fundamentals/response-codes-and-errors, and rate
// limits (429 with x-rate-limit-reset, epoch seconds), https://docs.x.com/x-api/fundamentals/rate-limits.
describe('X documented errors into PlatformError', () => {
  async function refused(status: number, body: unknown, headers?: Record<string, string>) {
    const f = await fake();
    f.failNext(1, { status, body, headers });
    const err = await failure(connector(f).publish(request()));
    return { err, code: failureCodeOf('X', err) };
  }

  test('403 duplicate content: permanent, the detail kept', async () => {
    const f = await fake();
    await connector(f).publish(request());
    const err = await failure(connector(f).publish(request()));
    expect([err.kind, err.opts.status, err.opts.platformCode, err.message, failureCodeOf('X', err)]).toEqual([
      'permanent',
      403,
      'Forbidden',
      'X 403: You are not allowed to create a Tweet with duplicate content.',
      'rejected_content',
    ]);
  });

  test('400 invalid request: permanent, the detail and each error message read, the problem type as the code', async () => {
    const body = {
      errors: [
        {
          parameters: { ids: ['1234567890123456789012'] },
          message: 'The `ids` query parameter value [1234567890123456789012] is not valid',
        },
      ],
      title: 'Invalid Request',
      detail: 'One or more parameters to your request was invalid.',
      type: 'https://api.twitter.com/2/problems/invalid-request',
    } satisfies XProblem;
    const { err, code } = await refused(400, body);
    expect([err.kind, err.opts.status, err.opts.platformCode, err.message, code]).toEqual([
      'permanent',
      400,
      'https://api.twitter.com/2/problems/invalid-request',
      'X 400: One or more parameters to your request was invalid. (The `ids` query parameter value [1234567890123456789012] is not valid)',
      'rejected_content',
    ]);
  });

  test('401 Unauthorized: reauth', async () => {
    const { err, code } = await refused(401, { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
    expect([err.kind, err.opts.status, err.message, code]).toEqual(['reauth', 401, 'X 401: Unauthorized', 'reauth_required']);
  });

  test('403 unsupported authentication (an app-only token): reauth', async () => {
    const body = {
      title: 'Unsupported Authentication',
      detail:
        'Authenticating with OAuth 2.0 Application-Only is forbidden for this endpoint.  Supported authentication types are [OAuth 1.0a User Context, OAuth 2.0 User Context].',
      type: 'https://api.twitter.com/2/problems/unsupported-authentication',
      status: 403,
    };
    const { err } = await refused(403, body);
    expect([err.kind, err.opts.platformCode]).toEqual(['reauth', 'https://api.twitter.com/2/problems/unsupported-authentication']);
  });

  test('429 Too Many Requests: transient, retried after x-rate-limit-reset', async () => {
    const reset = String(Math.floor(Date.now() / 1000) + 600);
    const { err, code } = await refused(
      429,
      { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
      { 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': reset },
    );
    expect([err.kind, err.opts.status, err.message, code]).toEqual(['transient', 429, 'X 429: Too Many Requests', 'rate_limited']);
    expect(err.opts.retryAfterMs).toBeGreaterThan(590_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(600_000);
  });
});
