// An upload claims its Idempotency-Key before its work (services/idempotency.ts `idempotent`). One
// cut off half-way — its API process killed, or Postgres gone so that the failed request could
// not release the key either — leaves the key claimed with no answer. Its retry must not be
// refused for long: a claim older than any request takes is abandoned and the retry runs; a
// younger one still belongs to a request that may be running. (Posts and series claim their key
// in their own transaction: test/workflow-starts.test.ts.) A claim naming its row (a series) is
// never taken for abandoned: it is kept its 24 h, so a late retry answers with that row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MediaItem, Series } from '../db/entities/index.ts';
import { requestHash } from '../services/idempotency.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
});
afterAll(async () => {
  await stack?.stop();
});

/** The row a request leaves when it dies after claiming `key`: no status, no answer. */
async function leftClaim(apiKeyId: string, organizationId: string, key: string, body: unknown, ageMs: number): Promise<void> {
  const now = await stack.syncClock();
  await stack.h.pool.query(
    `insert into idempotency_keys (api_key_id, endpoint, key, organization_id, request_hash, created_at) values ($1, $2, $3, $4, $5, $6)`,
    [apiKeyId, 'POST /v1/media/uploads', key, organizationId, requestHash(body), new Date(now.getTime() - ageMs)],
  );
}

describe('an Idempotency-Key left claimed by a request that never finished', () => {
  test('two minutes on, the retry creates the upload (201)', async () => {
    const org = await makeOrg('TEAM');
    const k = await makeKey(org.id);
    const body = { fileName: `cut-off-${crypto.randomUUID()}.png`, mimeType: 'image/png', fileSize: 1000 };
    await leftClaim(k.id, org.id, 'cut-off-1', body, 2 * 60_000 + 1000);

    const retry = await call(stack.app, 'POST', '/v1/media/uploads', { key: k.key, body, headers: { 'idempotency-key': 'cut-off-1' } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    // …and is itself stored: the next retry replays it.
    const again = await call(stack.app, 'POST', '/v1/media/uploads', { key: k.key, body, headers: { 'idempotency-key': 'cut-off-1' } });
    expect(again.status).toBe(201);
    expect(again.body.media.id).toBe(retry.body.media.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(1);
  });

  test('a claim younger than that may still be running: the retry is told to retry (409), nothing is created', async () => {
    const org = await makeOrg('TEAM');
    const k = await makeKey(org.id);
    const body = { fileName: `still-running-${crypto.randomUUID()}.png`, mimeType: 'image/png', fileSize: 1000 };
    await leftClaim(k.id, org.id, 'running-1', body, 30_000);

    // Waits for the first request (15 s), then gives up on it.
    const retry = await call(stack.app, 'POST', '/v1/media/uploads', { key: k.key, body, headers: { 'idempotency-key': 'running-1' } });
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('conflict');
    expect(retry.body.error.message).toContain('still being processed');
    expect(await stack.h.orm.em.fork().count(MediaItem, { organization: org.id })).toBe(0);
  }, 60_000);
});

describe('a claim naming the row its create committed', () => {
  test('a series create cut off after its commit, its claim three minutes old: the retry answers with that series, and no second one is made', async () => {
    const org = await makeOrg('PRO');
    const ch = await makeChannel(org.id, 'MASTODON');
    const k = await makeKey(org.id);
    const now = await stack.syncClock();
    const body = {
      content: `series kept ${crypto.randomUUID()}`,
      channelIds: [ch.id],
      publishAt: new Date(now.getTime() + 5 * 86_400_000).toISOString(),
      repeat: { every: 'day' },
    };
    const send = () => call(stack.app, 'POST', '/v1/series', { key: k.key, body, headers: { 'idempotency-key': 'series-kept-1' } });
    const first = await send();
    expect(first.status).toBe(201);
    // What a create cut off after its commit leaves: its claim naming the series, no answer stored.
    // Aged past the two minutes after which a claim without an answer or a row is forgotten (the
    // clean-up each request with a key runs first, services/idempotency.ts forgetExpired).
    const left = await stack.h.pool.query(
      `update idempotency_keys set status_code = null, response = null, location = null, created_at = created_at - interval '3 minutes'
       where api_key_id = $1 and key = $2 and series_id = $3`,
      [k.id, 'series-kept-1', first.body.id],
    );
    expect(left.rowCount).toBe(1);

    const retry = await send();
    expect({ status: retry.status, id: retry.body?.id, replayed: retry.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      id: first.body.id,
      replayed: 'true',
    });
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('location')).toBe(`/v1/series/${first.body.id}`);
    expect(await stack.h.orm.em.fork().count(Series, { organization: org.id })).toBe(1);
  });
});
