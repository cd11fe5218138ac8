// Discord's published contract (discord-api-types, API v10) as the connector and the fake hold to
// it: the type-level checks below fail `tsc` when they stop holding; the runtime tests show the
// fake refusing a body Discord refuses, and the connector reading Discord's documented error
// bodies (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json,
// https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit).
import { afterEach, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type {
  APIAllowedMentions,
  RESTAPIAttachment,
  RESTError,
  RESTPostAPIWebhookWithTokenJSONBody,
  RESTPostAPIWebhookWithTokenQuery,
  RESTRateLimit,
} from 'discord-api-types/v10';
import { createDiscordConnector } from '../platforms/discord.ts';
import { failureCodeOf } from '../platforms/failure-class.ts';
import type { PublishRequest } from '../platforms/types.ts';
import {
  type AllowedMentionsSchema,
  type AttachmentSchema,
  type ExecuteBodySchema,
  type ExecuteQuerySchema,
  startFakeDiscord,
  type FakeDiscord,
} from './fakes/discord.ts';
import { failure } from './harness/platform-failure.ts';
import { agrees, type Equals } from './harness/type-checks.ts';

// The fake's schemas describe exactly the package's types (of the fields they check).
agrees<Equals<Static<typeof AllowedMentionsSchema>, APIAllowedMentions>>();
agrees<Equals<Static<typeof AttachmentSchema>, RESTAPIAttachment>>();
agrees<Equals<Static<typeof ExecuteQuerySchema>, RESTPostAPIWebhookWithTokenQuery>>();
agrees<
  Equals<
    Static<typeof ExecuteBodySchema>,
    Pick<
      RESTPostAPIWebhookWithTokenJSONBody,
      'content' | 'username' | 'avatar_url' | 'tts' | 'allowed_mentions' | 'attachments' | 'thread_name' | 'applied_tags'
    >
  >
>();

// The types the connector builds its requests with refuse what Discord does not take.
export const typeChecks: RESTPostAPIWebhookWithTokenJSONBody[] = [
  {
    content: 'hi',
    // @ts-expect-error Execute Webhook has no `nonce` (Create Message does)
    nonce: 'n-1',
  },
  {
    // @ts-expect-error "channels" is no allowed mention type (everyone, roles, users)
    allowed_mentions: { parse: ['channels'] },
  },
  {
    // @ts-expect-error an attachment's alt text is `description`, not `alt_text`
    attachments: [{ id: 0, filename: 'a.png', alt_text: 'a cat' }],
  },
];
export const queryCheck: RESTPostAPIWebhookWithTokenQuery = {
  // @ts-expect-error `wait` is a boolean, not the text of the query string
  wait: 'true',
};

const fakes: FakeDiscord[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeDiscord> {
  const f = await startFakeDiscord();
  fakes.push(f);
  return f;
}

function request(f: FakeDiscord): PublishRequest {
  return { text: 'Hello', media: [], idempotencyKey: 'post-1:channel-1', credentials: { webhookUrl: f.webhookUrl() } };
}

describe('fake Discord refuses what breaks the published shape', () => {
  const execute = (f: FakeDiscord, body: unknown, query = 'wait=true') =>
    fetch(`${f.apiBase}/webhooks/${f.webhook.id}/${f.webhook.token}?${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('a wrong enum value and a wrong type: 400 Invalid Form Body with the field errors', async () => {
    const f = await fake();
    const res = await execute(f, { content: 5, allowed_mentions: { parse: ['channels'] } });
    expect(res.status).toBe(400);
    const expected: RESTError = {
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        content: { _errors: [{ code: 'BASE_TYPE_BAD_TYPE', message: 'Must be a string.' }] },
        allowed_mentions: {
          parse: { '0': { _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('everyone', 'roles', 'users')." }] } },
        },
      },
    };
    expect(await res.json()).toEqual(expected);
    expect(f.messages).toHaveLength(0);
  });

  test('a query parameter that is not a snowflake or a boolean: 400 Invalid Form Body', async () => {
    const f = await fake();
    const res = await execute(f, { content: 'hi' }, 'wait=maybe&thread_id=general');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        wait: { _errors: [{ code: 'BOOLEAN_TYPE_CONVERT', message: 'Value "maybe" is not a valid boolean.' }] },
        thread_id: { _errors: [{ code: 'NUMBER_TYPE_COERCE', message: 'Value "general" is not snowflake.' }] },
      },
    });
    expect(f.messages).toHaveLength(0);
  });

  test('fields Discord does not know are ignored, as Discord ignores them', async () => {
    const f = await fake();
    const res = await execute(f, { content: 'hi', flavour: 'vanilla' });
    expect(res.status).toBe(200);
    expect(f.messages.map((m) => m.content)).toEqual(['hi']);
  });
});

describe('Discord connector reads the documented error bodies', () => {
  test('the rate-limit example: 429 with retry_after in seconds → transient, rate_limited', async () => {
    const f = await fake();
    // https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit-example-exceeded-user-rate-limit-response
    const body: RESTRateLimit = { message: 'You are being rate limited.', retry_after: 64.57, global: false };
    f.failNext(1, { status: 429, body, headers: { 'Retry-After': '65' } });
    const err = await failure(createDiscordConnector({ baseUrl: f.apiBase }).publish(request(f)));
    expect(err).toMatchObject({
      kind: 'transient',
      message: 'Discord 429: You are being rate limited.',
      opts: { status: 429, retryAfterMs: 64_570 },
    });
    expect(failureCodeOf('DISCORD', err)).toBe('rate_limited');
  });

  test('the Invalid Form Body example: code 50035 and the nested field errors → permanent, rejected_content', async () => {
    const f = await fake();
    // https://discord.com/developers/docs/topics/opcodes-and-status-codes#json (Example JSON Error Response)
    const body: RESTError = {
      code: 50035,
      errors: {
        activities: {
          '0': {
            platform: { _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('desktop', 'android', 'ios')." }] },
            type: { _errors: [{ code: 'BASE_TYPE_CHOICES', message: 'Value must be one of (0, 1, 2, 3, 4, 5).' }] },
          },
        },
      },
      message: 'Invalid Form Body',
    };
    f.failNext(1, { status: 400, body });
    const err = await failure(createDiscordConnector({ baseUrl: f.apiBase }).publish(request(f)));
    expect(err).toMatchObject({ kind: 'permanent', opts: { status: 400, platformCode: '50035' } });
    expect(err.message).toBe(
      "Discord 400: Invalid Form Body (activities.0.platform: Value must be one of ('desktop', 'android', 'ios').; activities.0.type: Value must be one of (0, 1, 2, 3, 4, 5).)",
    );
    expect(failureCodeOf('DISCORD', err)).toBe('rejected_content');
  });

  test('JSON error codes: 10015 Unknown Webhook → reauth_required; 40005 too large → media_rejected', async () => {
    const f = await fake();
    f.failNext(1, { status: 404, body: { message: 'Unknown Webhook', code: 10015 } satisfies RESTError });
    const gone = await failure(createDiscordConnector({ baseUrl: f.apiBase }).publish(request(f)));
    expect(gone).toMatchObject({ kind: 'reauth', message: 'Discord 404: Unknown Webhook', opts: { platformCode: '10015' } });
    expect(failureCodeOf('DISCORD', gone)).toBe('reauth_required');

    f.failNext(1, { status: 413, body: { message: 'Request entity too large', code: 40005 } satisfies RESTError });
    const large = await failure(createDiscordConnector({ baseUrl: f.apiBase }).publish(request(f)));
    expect(large).toMatchObject({ kind: 'permanent', opts: { status: 413, platformCode: '40005' } });
    expect(failureCodeOf('DISCORD', large)).toBe('media_rejected');
  });
});
