// The LinkedIn fake held to the Posts API's published create body (LinkedIn publishes no typed
// SDK, so PostBody in test/fakes/linkedin.ts is written from the documentation page): a body
// that breaks it is refused as LinkedIn refuses it, 422 with the Rest.li field path and code, and
// the bodies the connector sends (text, visibility, single media, multi-image, document) pass.
import { afterEach, describe, expect, test } from 'bun:test';
import { createLinkedInConnector } from '../platforms/linkedin.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { type FakeLinkedIn, startFakeLinkedIn } from './fakes/linkedin.ts';

const fakes: FakeLinkedIn[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeLinkedIn> {
  const f = await startFakeLinkedIn();
  fakes.push(f);
  return f;
}

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

function file(id: string, type: 'image' | 'document', mimeType: string, altText: string | null = null): MediaRef {
  const bytes = new TextEncoder().encode(`${id} bytes`);
  return { id, type, mimeType, fileName: `${id}.${type === 'image' ? 'png' : 'pdf'}`, altText, read: async () => bytes };
}

/** A raw POST /rest/posts, as a client other than the connector would send it. */
async function createPost(f: FakeLinkedIn, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/rest/posts`, {
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

  test('what the connector sends passes the fake’s schema (text, visibility, image, multi-image, document)', async () => {
    const f = await fake();
    const c = connector(f);
    await c.publish(request(f, { options: { visibility: 'CONNECTIONS' } }));
    await c.publish(request(f, { text: 'One image', media: [file('a', 'image', 'image/png', 'A red square')] }));
    await c.publish(request(f, { text: 'Two images', media: [file('b', 'image', 'image/png'), file('c', 'image', 'image/png', 'C')] }));
    await c.publish(request(f, { text: 'A report', media: [file('d', 'document', 'application/pdf')] }));
    expect(f.posts.map((p) => [p.rendered, p.visibility, Object.keys(p.content ?? {})])).toEqual([
      ['Hello LinkedIn', 'CONNECTIONS', []],
      ['One image', 'PUBLIC', ['media']],
      ['Two images', 'PUBLIC', ['multiImage']],
      ['A report', 'PUBLIC', ['media']],
    ]);
  });
});
