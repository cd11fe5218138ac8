// The X connector and its fake held to the published shapes (twitter-api-v2 1.29.1's types, with
// reply_settings held to X's documented values): type-level checks that a body with a field or
// value X does not have does not compile (`tsc --noEmit` fails if a check stops working), the fake
// refusing a body that breaks the shape as X does, and X's documented error bodies read into
// PlatformError.
import { afterEach, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type { SendTweetV2Params } from 'twitter-api-v2';
import { failureCodeOf } from '../platforms/failure-class.ts';
import type { PublishRequest } from '../platforms/types.ts';
import {
  createXConnector,
  type HideReplyParams,
  type SearchQuery,
  type TimelineQuery,
  type TweetParams,
  type XProblem,
  type XReplySettings,
} from '../platforms/x.ts';
import { type CreateTweetBody, type FakeX, type REPLY_SETTINGS, startFakeX } from './fakes/x.ts';
import { failure } from './harness/platform-failure.ts';
import type { Exactly, Flat } from './harness/type-checks.ts';

// The fake's schema is the published shape: its Static type is the connector's TweetParams
// (SendTweetV2Params with X's reply_settings), and its reply settings are X's documented ones.
const schemaIsPublished: Exactly<Static<typeof CreateTweetBody>, Flat<TweetParams>> = true;
const replySettingsArePublished: Exactly<(typeof REPLY_SETTINGS)[number], XReplySettings> = true;
// Why reply_settings is narrowed: the package's own type takes any string.
const packageTakesAnyString: SendTweetV2Params = { text: 'Hello', reply_settings: 'anyone' };

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
  return [unknownField, wrongEnum, nested, fiveMedia, poll, fields, exclude, hide];
}

const fakes: FakeX[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeX> {
  const f = await startFakeX();
  fakes.push(f);
  return f;
}

const connector = (f: FakeX) => createXConnector({ baseUrl: f.url, timeoutMs: 2_000, pollIntervalMs: 5, pollTimeoutMs: 2_000 });

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello from Postpilot',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token' },
    ...over,
  };
}

/** A raw POST /2/tweets, as a client other than the connector would send it. */
async function postTweet(f: FakeX, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/2/tweets`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

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
    expect(refusedAtCompileTime()).toHaveLength(8);
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
