// The Mastodon connector and its fake held to the published shapes (masto 8.0.0's types, as
// Mastodon's snake_case JSON): type-level checks that a body with a field or value Mastodon does
// not have does not compile (`tsc --noEmit` fails if a check stops working), the fake refusing a
// body that breaks the shape as Mastodon does (a status, a media upload), the account statuses
// query read as Mastodon reads it (cast, never refused), and Mastodon's documented error bodies
// read into PlatformError.
import { describe, expect, test } from 'bun:test';
import type { Static } from '@sinclair/typebox';
import type { mastodon } from 'masto';
import { failureCodeOf } from '../platforms/failure-class.ts';
import {
  type AccountStatusesQuery,
  createMastodonConnector,
  type MediaParams,
  type Snake,
  type StatusParams,
  type WireContext,
  type WireError,
  type WireMediaAttachment,
  type WireStatus,
} from '../platforms/mastodon.ts';
import {
  type CreateMediaBody,
  type CreateStatusBody,
  type CreateStatusFields,
  castQuery,
  type FakeMastodon,
  ListStatusesQuery,
  startFakeMastodon,
  type VISIBILITIES,
  mastodonRequest,
} from './fakes/mastodon.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';
import { agrees, type Equals, type Exactly } from './harness/type-checks.ts';

// The fake's schema is the published shape: its Static type is masto's CreateStatusParams fields
// (snake_case), and its visibilities are masto's StatusVisibility.
const schemaIsPublished: Exactly<Static<typeof CreateStatusBody>, CreateStatusFields> = true;
const visibilitiesArePublished: Exactly<(typeof VISIBILITIES)[number], mastodon.v1.StatusVisibility> = true;
// Snake<T> renames every level: masto's inReplyToId is the wire's in_reply_to_id.
const snakeRenames: Exactly<keyof Snake<{ inReplyToId: { mediaAttachments: 1 } }>['in_reply_to_id'], 'media_attachments'> = true;
// The media upload and the account statuses query: masto's CreateMediaAttachmentParams and
// ListAccountStatusesParams as the wire has them, every field as optional and of the same type.
agrees<Equals<Static<typeof CreateMediaBody>, MediaParams>>();
agrees<Equals<Static<typeof ListStatusesQuery>, AccountStatusesQuery>>();

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
  // @ts-expect-error focus is "x,y" text, not a pair of numbers
  const focusPair: MediaParams = { file: 'x', focus: [0.5, 0.5] };
  // @ts-expect-error masto's camelCase name: the wire is snake_case
  const camelQuery: AccountStatusesQuery = { excludeReplies: true };
  // @ts-expect-error limit is a number
  const limitText: AccountStatusesQuery = { limit: '40' };
  return [misspelt, wrongEnum, camel, numericIds, query, upload, counter, focusPair, camelQuery, limitText];
}

const fake = perTest(() => startFakeMastodon({ syncMedia: true }));

const connector = () => createMastodonConnector({ timeoutMs: 2_000, outbound: { allowPrivate: true } });

const request = mastodonRequest;

/** A raw POST /api/v2/media with this form, as a client other than the connector would send it. */
async function upload(f: FakeMastodon, fields: Record<string, string | Blob>): Promise<{ status: number; body: unknown }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${f.url}/api/v2/media`, { method: 'POST', headers: { Authorization: 'Bearer good-token' }, body: form });
  return { status: res.status, body: await res.json() };
}

/** A raw GET with the token. */
async function get(f: FakeMastodon, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, { headers: { Authorization: 'Bearer good-token' } });
  return { status: res.status, body: await res.json() };
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
    expect(refusedAtCompileTime()).toHaveLength(10);
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
    expect(f.media.map((m) => [m.fileName, m.mimeType, m.description])).toEqual([['a.png', 'image/png', 'A']]);
  });

  test('the media upload: a form that breaks CreateMediaBody is 422 with Mastodon’s Error entity', async () => {
    const f = await fake();
    const png = new File([new Uint8Array([1, 2, 3])], 'a.png', { type: 'image/png' });
    const cases: [Record<string, string | Blob>, number, WireError][] = [
      [{ description: 'A cat' }, 422, { error: "Validation failed: File can't be blank" }],
      [{ file: '' }, 422, { error: "Validation failed: File can't be blank" }],
      [{ file: png, description: png }, 422, { error: 'Validation failed: Description is invalid' }],
      [
        { file: png, description: 'a'.repeat(1501) },
        422,
        { error: 'Validation failed: Description is too long (maximum is 1500 characters)' },
      ],
      // Text that is not a data: URI has no Paperclip adapter: Mastodon's processing error.
      [{ file: 'a.png' }, 500, { error: 'Error processing thumbnail for uploaded media' }],
    ];
    for (const [fields, status, error] of cases) expect(await upload(f, fields)).toEqual({ status, body: error });
    expect(f.media).toHaveLength(0);
  });

  test('the media upload: focus is cast as Mastodon casts it, a data: URI is a file, unknown fields are ignored', async () => {
    const f = await fake();
    const png = new File([new Uint8Array([1, 2, 3])], 'a.png', { type: 'image/png' });
    const focused = await upload(f, { file: png, focus: '0.5,-0.25', description: 'A cat', alt_text: 'ignored' });
    const cast = await upload(f, { file: png, focus: 'left,top' });
    const fromText = await upload(f, { file: 'data:image/png;base64,AQID' });
    expect([focused.status, cast.status, fromText.status]).toEqual([200, 200, 200]);
    expect([focused.body, cast.body, fromText.body].map((b) => (b as WireMediaAttachment).meta?.focus ?? null)).toEqual([
      { x: 0.5, y: -0.25 },
      { x: 0, y: 0 },
      null,
    ]);
    expect(f.media.map((m) => [m.mimeType, m.size, m.description])).toEqual([
      ['image/png', 3, 'A cat'],
      ['image/png', 3, null],
      ['image/png', 3, null],
    ]);
  });

  test('the account statuses query is cast as Mastodon casts it: no value refused, unknown parameters ignored', async () => {
    const f = await fake();
    for (const text of ['one', 'two #Launch', 'three']) expect((await postStatus(f, { status: text })).status).toBe(200);
    const media = await upload(f, { file: new File([new Uint8Array([1])], 'a.png', { type: 'image/png' }) });
    await postStatus(f, { status: 'four', media_ids: [(media.body as WireMediaAttachment).id] });
    const [one, two, three, four] = f.statuses;
    const texts = async (query: string) => {
      const r = await get(f, `/api/v1/accounts/1/statuses?${query}`);
      expect(r.status).toBe(200);
      return (r.body as WireStatus[]).map((s) => s.content);
    };
    const p = (t: string) => `<p>${t}</p>`;
    expect(await texts('')).toEqual(['four', 'three', 'two #Launch', 'one'].map(p));
    expect(await texts('limit=2')).toEqual(['four', 'three'].map(p));
    expect(await texts('limit=-2')).toEqual(['four', 'three'].map(p));
    expect(await texts('limit=2abc')).toEqual(['four', 'three'].map(p));
    expect(await texts('limit=many')).toEqual([]);
    expect(await texts('only_media=1')).toEqual([p('four')]);
    expect(await texts('only_media=yes')).toEqual([p('four')]);
    expect(await texts('only_media=false')).toHaveLength(4);
    expect(await texts('only_media=')).toHaveLength(4);
    expect(await texts('tagged=launch')).toEqual([p('two #Launch')]);
    expect(await texts('pinned=true')).toEqual([]);
    expect(await texts(`max_id=${three!.id}`)).toEqual(['two #Launch', 'one'].map(p));
    expect(await texts(`since_id=${two!.id}`)).toEqual(['four', 'three'].map(p));
    expect(await texts(`min_id=${one!.id}&limit=2`)).toEqual(['three', 'two #Launch'].map(p));
    expect(await texts(`max_id=${four!.id}&exclude_boosts=true&onlyMedia=true`)).toHaveLength(3);
  });

  test('the context takes no parameters: a query string is ignored', async () => {
    const f = await fake();
    await postStatus(f, { status: 'Root' });
    const root = f.statuses[0]!;
    for (const text of ['a', 'b']) await postStatus(f, { status: text, in_reply_to_id: root.id });
    const plain = await get(f, `/api/v1/statuses/${root.id}/context`);
    expect(await get(f, `/api/v1/statuses/${root.id}/context?limit=1&max_id=0`)).toEqual(plain);
    expect((plain.body as WireContext).descendants).toHaveLength(2);
  });

  test('what the connector sends passes the account statuses query: every parameter one ListStatusesQuery has', async () => {
    const f = await fake();
    const post = await connector().publish(request(f.url));
    const found = await connector().findPublished!({ ...request(f.url), attempt: 2, firstAttemptAt: new Date(Date.now() - 2 * 3_600_000) });
    expect(found?.platformPostId).toBe(post.platformPostId);
    const list = f.requests.filter((r) => r.path === '/api/v1/accounts/1/statuses');
    expect(list).toHaveLength(1);
    const sent = new URLSearchParams(list[0]!.search);
    expect([...sent.keys()].filter((k) => !(k in ListStatusesQuery.properties))).toEqual([]);
    expect(castQuery(ListStatusesQuery, sent)).toEqual({ limit: 40, exclude_reblogs: true, exclude_replies: true });
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
