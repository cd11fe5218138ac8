// A CSV import's media URLs (services/post-csv.ts), fetched from a local file server that counts
// its requests: they are fetched only once the Idempotency-Key is claimed, so a replay of the file
// fetches nothing and stores no media item again, and another file with the key is refused (409)
// before any fetch; and a file naming many URLs fetches a few at a time, never all at once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { MediaItem } from '../db/entities/index.ts';
import { FETCHES_AT_ONCE } from '../services/post-csv.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let files: ReturnType<typeof Bun.serve>;
let png: Buffer;
/** What the file server saw: every request, and the most answered at the same time. */
const seen = { requests: 0, inFlight: 0, maxInFlight: 0 };

beforeAll(async () => {
  // The API's outbound guard lets 127.0.0.1 through only with allowPrivate, as in the dev stack.
  stack = await startPostStack({ storage: 'disk', appDeps: { outbound: { allowPrivate: true } } });
  png = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  files = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch() {
      seen.requests++;
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      // Slow enough that fetches started together overlap here.
      await Bun.sleep(100);
      seen.inFlight--;
      return new Response(png, { headers: { 'content-type': 'image/png' } });
    },
  });
});
afterAll(async () => {
  files?.stop(true);
  await stack?.stop();
});

const DAY = 86_400_000;

async function account() {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  await makeChannel(org.id, 'MASTODON', { name: 'News' });
  return { org, key, at: await stack.syncClock() };
}

/** A file of `rows` posts, each with a picture of its own at the file server. */
function fileOf(tag: string, rows: number, at: Date): string {
  const lines = Array.from(
    { length: rows },
    (_, i) => `${tag} row ${i},News,${new Date(at.getTime() + (i + 1) * DAY).toISOString()},http://127.0.0.1:${files.port}/${tag}-${i}.png`,
  );
  return `content,channels,publishAt,media\n${lines.join('\n')}\n`;
}

const importCsv = (key: string, csv: string, idempotencyKey?: string) =>
  call(stack.app, 'POST', '/v1/posts/import', {
    key,
    rawBody: csv,
    headers: { 'content-type': 'text/csv', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
  });

const mediaOf = (organizationId: string) => stack.h.orm.em.fork().count(MediaItem, { organization: organizationId });

describe('CSV import: media URLs and the Idempotency-Key', () => {
  test('a replay of the file answers the first answer without fetching a URL or storing a media item; another file with the key is 409, fetching nothing', async () => {
    const { org, key, at } = await account();
    const file = fileOf(`once-${crypto.randomUUID()}`, 3, at);
    const before = seen.requests;

    const first = await importCsv(key, file, 'import-1');
    expect(first.status).toBe(200);
    expect(first.body.created).toBe(3);
    expect(seen.requests - before).toBe(3);
    expect(await mediaOf(org.id)).toBe(3);

    const again = await importCsv(key, file, 'import-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(seen.requests - before).toBe(3);
    expect(await mediaOf(org.id)).toBe(3);

    const other = await importCsv(key, fileOf(`other-${crypto.randomUUID()}`, 2, at), 'import-1');
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(seen.requests - before).toBe(3);
    expect(await mediaOf(org.id)).toBe(3);
    expect((await call(stack.app, 'GET', '/v1/posts', { key })).body.data).toHaveLength(3);
  });

  test(`a file naming a URL in each of 12 rows fetches at most ${FETCHES_AT_ONCE} at a time`, async () => {
    const { org, key, at } = await account();
    const before = seen.requests;
    seen.maxInFlight = 0;
    const r = await importCsv(key, fileOf(`many-${crypto.randomUUID()}`, 12, at));
    expect(r.status).toBe(200);
    expect(r.body.created).toBe(12);
    expect(seen.requests - before).toBe(12);
    expect(seen.maxInFlight).toBeLessThanOrEqual(FETCHES_AT_ONCE);
    // …and still several at a time.
    expect(seen.maxInFlight).toBeGreaterThan(1);
    expect(await mediaOf(org.id)).toBe(12);
  });
});
