// A refused value names the rule it broke, read from the schema that refused it
// (lib/schema-words.ts): its range, its choices, its format; a missing field is required; a body
// sent with another content type is one error naming `Content-Type: application/json`.
import { beforeAll, describe, expect, test } from 'bun:test';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

let app: Awaited<ReturnType<typeof testApp>>;
let key: string;

beforeAll(async () => {
  app = await testApp();
  const org = await makeOrg('ENTERPRISE');
  key = (await makeKey(org.id)).key;
});

const fields = async (method: string, path: string, body?: unknown) => {
  const r = await call(app, method, path, { key, body });
  expect(r.status).toBe(422);
  return r.body.error.details.fields as { path: string; message: string }[];
};

describe('the words of a refusal', () => {
  test('a number out of range names the range', async () => {
    const series = await fields('POST', '/v1/series', {
      content: 'x',
      channelIds: ['ch_x'],
      publishAt: '2030-01-01T00:00:00Z',
      repeat: { every: 'week', interval: 0 },
    });
    expect(series).toContainEqual({ path: 'repeat.interval', message: 'must be an integer from 1 to 365' });
    const feed = await fields('POST', '/v1/feeds', { url: 'https://example.com/feed.xml', channelIds: ['ch_x'], pollMinutes: 5000 });
    expect(feed.find((f) => f.path === 'pollMinutes')?.message).toMatch(/from 1 to 1440/);
  });

  test('a value outside its choices lists them', async () => {
    expect(await fields('GET', '/v1/analytics?groupBy=month')).toContainEqual({ path: 'groupBy', message: 'must be one of day, week' });
    const actor = await fields('GET', '/v1/audit-events?actorType=robot');
    expect(actor[0]).toEqual({ path: 'actorType', message: 'must be one of member, api_key, reviewer, operator, invitee, system' });
  });

  test('a list of the wrong length names its count, not its items’ rule', async () => {
    const none = await fields('POST', '/v1/posts', { content: 'x', channelIds: [] });
    expect(none).toContainEqual({ path: 'channelIds', message: 'must be a list of 1 to 50 items' });
    const thread = Array.from({ length: 51 }, (_, i) => ({ content: `reply ${i}` }));
    const long = await fields('POST', '/v1/posts', { content: 'x', channelIds: ['ch_x'], thread });
    expect(long).toContainEqual({ path: 'thread', message: 'must be a list of at most 50 items' });
  });

  test('a missing field is required, not too long', async () => {
    const missing = await fields('POST', '/v1/posts', { channelIds: ['ch_x'] });
    expect(missing).toContainEqual({ path: 'content', message: 'is required' });
  });

  test('a field the body does not have is named once', async () => {
    const extra = await fields('POST', '/v1/posts', { content: 'x', channelIds: ['ch_x'], colour: 'red' });
    expect(extra.filter((f) => f.path === 'colour')).toEqual([{ path: 'colour', message: 'is not a field of this body' }]);
  });

  test('JSON sent as a form is one error naming the content type', async () => {
    const r = await call(app, 'POST', '/v1/posts', {
      key,
      rawBody: JSON.stringify({ content: 'x', channelIds: ['ch_x'] }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toContain('"Content-Type: application/json"');
    expect(r.body.error.details.fields).toEqual([{ path: '', message: 'send JSON with Content-Type: application/json' }]);
    // A client naming no type at all is read as JSON.
    const untyped = await app.handle(
      new Request('http://localhost/v1/posts/validate', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify({ content: 'x', channelIds: ['ch_x'] }),
      }),
    );
    const body = (await untyped.json()) as { error?: { details?: { fields?: { path: string }[] } } };
    expect(body.error?.details?.fields?.map((f) => f.path)).toEqual(['channelIds']);
  });
});
