// The Mastodon connector and its fake held to the published shapes (masto 8.0.0's types, as
// Mastodon's snake_case JSON): type-level checks that a body with a field or value Mastodon does
// not have does not compile (`tsc --noEmit` fails if a check stops working), the fake refusing a
// body that breaks the shape as Mastodon does, and Mastodon's documented error bodies read into
// PlatformError.
import { afterEach, describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type { mastodon } from 'masto';
import { failureCodeOf } from '../platforms/failure-class.ts';
import {
  type AccountStatusesQuery,
  createMastodonConnector,
  type MediaParams,
  type Snake,
  type StatusParams,
  type WireError,
  type WireStatus,
} from '../platforms/mastodon.ts';
import type { PublishRequest } from '../platforms/types.ts';
import {
  type CreateStatusBody,
  type CreateStatusFields,
  type FakeMastodon,
  startFakeMastodon,
  type VISIBILITIES,
} from './fakes/mastodon.ts';
import { failure } from './harness/platform-failure.ts';
import type { Exactly } from './harness/type-checks.ts';

// The fake's schema is the published shape: its Static type is masto's CreateStatusParams fields
// (snake_case), and its visibilities are masto's StatusVisibility.
const schemaIsPublished: Exactly<Static<typeof CreateStatusBody>, CreateStatusFields> = true;
const visibilitiesArePublished: Exactly<(typeof VISIBILITIES)[number], mastodon.v1.StatusVisibility> = true;
// Snake<T> renames every level: masto's inReplyToId is the wire's in_reply_to_id.
const snakeRenames: Exactly<keyof Snake<{ inReplyToId: { mediaAttachments: 1 } }>['in_reply_to_id'], 'media_attachments'> = true;

/** Bodies that must not compile: each line is a type error, and `@ts-expect-error` fails the typecheck if it is not. */
function refusedAtCompileTime(): unknown[] {
  // @ts-expect-error a field CreateStatusParams does not have (misspelt)
  const misspelt: StatusParams = { status: 'Hello', visibilty: 'public' };
  // @ts-expect-error a visibility Mastodon does not have
  const wrongEnum: StatusParams = { status: 'Hello', visibility: 'everyone' };
  // @ts-expect-error masto's camelCase name: the wire is snake_case
  const camel: StatusParams = { status: 'Hello', inReplyToId: '1' };
  // @ts-expect-error media_ids are strings
  const numericIds: StatusParams = { media_ids: [1] };
  // @ts-expect-error a query parameter the statuses listing does not have
  const query: AccountStatusesQuery = { limit: 40, exclude_boosts: true };
  // @ts-expect-error a field the media upload does not have
  const upload: MediaParams = { file: 'x', alt_text: 'A cat' };
  // @ts-expect-error a Status field that does not exist (Mastodon spells it favourites_count)
  const counter: keyof WireStatus = 'favorites_count';
  return [misspelt, wrongEnum, camel, numericIds, query, upload, counter];
}

const fakes: FakeMastodon[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeMastodon> {
  const f = await startFakeMastodon({ syncMedia: true });
  fakes.push(f);
  return f;
}

const connector = () => createMastodonConnector({ timeoutMs: 2_000, outbound: { allowPrivate: true } });

function request(instanceUrl: string, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello fediverse',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { instanceUrl, accessToken: 'good-token' },
    ...over,
  };
}

/** A raw POST /api/v1/statuses, as a client other than the connector would send it. */
async function postStatus(f: FakeMastodon, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/api/v1/statuses`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('Mastodon published shapes', () => {
  test('type-level checks hold (see tsc)', () => {
    expect([schemaIsPublished, visibilitiesArePublished, snakeRenames]).toEqual([true, true, true]);
    expect(refusedAtCompileTime()).toHaveLength(7);
  });

  test('the fake refuses a body that breaks the shape with 422 and Mastodon’s Error entity', async () => {
    const f = await fake();
    const cases: [unknown, WireError][] = [
      [{ status: 'Hello', visibility: 'everyone' }, { error: 'Validation failed: Visibility is not included in the list' }],
      [{ status: 'Hello', media_ids: [{ id: '1' }] }, { error: 'Validation failed: Media ids is invalid' }],
      [{ status: 'Hello', sensitive: 'maybe' }, { error: 'Validation failed: Sensitive is invalid' }],
    ];
    for (const [body, error] of cases) expect(await postStatus(f, body)).toEqual({ status: 422, body: error });
    expect(f.statuses).toHaveLength(0);
  });

  test('the fake ignores fields Mastodon does not know, as its strong parameters drop them', async () => {
    const f = await fake();
    const r = await postStatus(f, { status: 'Hello', visibilty: 'private' });
    expect(r.status).toBe(200);
    expect((r.body as WireStatus).visibility).toBe('public');
  });

  test('a form body is cast as Rails casts it, then checked the same way', async () => {
    const f = await fake();
    const form = new URLSearchParams({ status: 'Hello', sensitive: 'true', visibility: 'unlisted' });
    const ok = await fetch(`${f.url}/api/v1/statuses`, { method: 'POST', headers: { Authorization: 'Bearer good-token' }, body: form });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as WireStatus).visibility).toBe('unlisted');
    form.set('visibility', 'everyone');
    const refused = await fetch(`${f.url}/api/v1/statuses`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good-token' },
      body: form,
    });
    expect([refused.status, await refused.json()]).toEqual([422, { error: 'Validation failed: Visibility is not included in the list' }]);
  });

  test('what the connector sends passes the fake’s schema (text, attachments, reply)', async () => {
    const f = await fake();
    const media = [
      { id: 'm1', type: 'image' as const, mimeType: 'image/png', fileName: 'a.png', altText: 'A', read: async () => new Uint8Array([1]) },
    ];
    const post = await connector().publish(request(f.url, { media }));
    const root = { platformPostId: post.platformPostId, url: post.url };
    await connector().publish(request(f.url, { text: 'And more', idempotencyKey: 'post-1:channel-1:1', replyTo: { root, parent: root } }));
    expect(f.statuses.map((s) => [s.text, s.media_ids.length, s.in_reply_to_id])).toEqual([
      ['Hello fediverse', 1, null],
      ['And more', 0, post.platformPostId],
    ]);
  });
});

// Mastodon's error bodies: https://docs.joinmastodon.org/entities/Error/ (`error`, and
// `error_description` on OAuth errors) and https://docs.joinmastodon.org/api/rate-limits/ (429
// with X-RateLimit-Reset, an ISO 8601 time).
describe('Mastodon documented errors into PlatformError', () => {
  async function refused(status: number, body: WireError, headers?: Record<string, string>) {
    const f = await fake();
    f.failNext(1, { status, body, headers });
    const err = await failure(connector().publish(request(f.url)));
    return { err, code: failureCodeOf('MASTODON', err) };
  }

  test('422 Validation failed: permanent, the error text kept', async () => {
    const { err, code } = await refused(422, { error: "Validation failed: Text can't be blank" });
    expect([err.kind, err.opts.status, err.message, code]).toEqual([
      'permanent',
      422,
      "Mastodon 422: Validation failed: Text can't be blank",
      'rejected_content',
    ]);
  });

  test('401 The access token is invalid: reauth', async () => {
    const { err, code } = await refused(401, { error: 'The access token is invalid' });
    expect([err.kind, err.opts.status, err.message, code]).toEqual([
      'reauth',
      401,
      'Mastodon 401: The access token is invalid',
      'reauth_required',
    ]);
  });

  test('an OAuth error: error and error_description both read', async () => {
    const description =
      'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.';
    const { err } = await refused(400, { error: 'invalid_grant', error_description: description });
    expect([err.kind, err.message]).toEqual(['permanent', `Mastodon 400: invalid_grant: ${description}`]);
  });

  test('404 Record not found: permanent', async () => {
    const { err } = await refused(404, { error: 'Record not found' });
    expect([err.kind, err.opts.status, err.message]).toEqual(['permanent', 404, 'Mastodon 404: Record not found']);
  });

  test('429 Too many requests: transient, retried after X-RateLimit-Reset', async () => {
    const reset = new Date(Date.now() + 120_000).toISOString();
    const { err, code } = await refused(
      429,
      { error: 'Too many requests' },
      { 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset },
    );
    expect([err.kind, err.opts.status, err.message, code]).toEqual(['transient', 429, 'Mastodon 429: Too many requests', 'rate_limited']);
    expect(err.opts.retryAfterMs).toBeGreaterThan(110_000);
    expect(err.opts.retryAfterMs).toBeLessThanOrEqual(120_000);
  });
});
