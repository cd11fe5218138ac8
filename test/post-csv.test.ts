// CSV import and export of posts through the API, with a real workflow per post: an export
// imported back gives the same posts, hostile cells included (formulas, quotes, newlines,
// separators, a BOM); an import reads channels by name, semicolons, wall times in a zone, and
// answers each bad row at its column.
import { describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import { addChannel } from '../domain/channels.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({ storage: 'disk' }, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;

async function account() {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  const em = stack.h.orm.em.fork();
  const add = (name: string) =>
    addChannel(em, stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name,
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
  return { key, a: await add('Team News'), b: await add('Second') };
}

const importCsv = (key: string, csv: string, query = '') =>
  call(stack.app, 'POST', `/v1/posts/import${query}`, { key, rawBody: csv, headers: { 'content-type': 'text/csv' } });
const exportCsv = async (key: string, query = '') => {
  const res = await stack.app.handle(
    new Request(`http://localhost/v1/posts/export${query}`, { headers: { authorization: `Bearer ${key}` } }),
  );
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};

/** Texts a spreadsheet would run, and cells that break naive CSV. */
const HOSTILE = [
  '=HYPERLINK("http://evil.example","click")',
  '+1 555 0100',
  '-2+3',
  '@SUM(A1:A2)',
  "'quoted already",
  'a "quoted" word, and a comma; and a semicolon',
  'two\nlines\r\nand CRLF',
  'ünïcödé ✓ 🧵',
];

describe('CSV export and import', () => {
  test('an export imports back to the same posts, hostile cells included; no exported cell starts a formula', async () => {
    const { key, a, b } = await account();
    const at = await stack.syncClock();
    const made: { content: string; channelIds: string[]; publishAt: string; contentByPlatform?: Record<string, string> }[] = HOSTILE.map(
      (content, i) => ({
        content,
        channelIds: i % 2 ? [a.id, b.id] : [a.id],
        publishAt: new Date(at.getTime() + (i + 1) * DAY).toISOString(),
      }),
    );
    made[1]!.contentByPlatform = { MASTODON: '=1+1 on Mastodon' };
    const created = await call(stack.app, 'POST', '/v1/posts/bulk', { key, body: { posts: made } });
    expect(created.status).toBe(200);
    const exported = await exportCsv(key, '?format=csv');
    expect(exported.status).toBe(200);
    expect(exported.type).toBe('text/csv; charset=utf-8');
    const cells = (parse(exported.text) as string[][]).flat();
    expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
    expect(cells).toContain(`'${HOSTILE[0]}`);
    // Delete the originals (a repeat of a post within 24 hours is refused), then import the file.
    for (const r of created.body.results) expect((await call(stack.app, 'DELETE', `/v1/posts/${r.post.id}`, { key })).status).toBe(204);
    const imported = await importCsv(key, exported.text);
    expect(imported.status).toBe(200);
    expect(imported.body).toMatchObject({ created: HOSTILE.length, failed: 0 });
    const posts = (await call(stack.app, 'GET', '/v1/posts?limit=100', { key })).body.data as {
      content: string;
      scheduledAt: string;
      channels: { channelId: string; content: string }[];
    }[];
    const shape = (p: { content: string; scheduledAt: string; channels: { channelId: string; content: string }[] }) => ({
      content: p.content,
      at: p.scheduledAt,
      channels: p.channels.map((c) => [c.channelId, c.content]).sort(),
    });
    const before = created.body.results.map((r: { post: Parameters<typeof shape>[0] }) => shape(r.post));
    expect(posts.map(shape).sort((x, y) => x.at.localeCompare(y.at))).toEqual(before);
  });

  test('an import reads channel names, semicolons, a BOM, wall times in a zone; each bad row is answered at its column', async () => {
    const { key, a } = await account();
    const at = await stack.syncClock();
    const day = new Date(at.getTime() + 3 * DAY).toISOString().slice(0, 10);
    const csv = [
      '\ufeffContent;Channels;publishAt;timeZone;queue',
      `"Hello; from Berlin";Team News;${day} 09:30;Europe/Berlin;`,
      `By id;${a.id};${day}T10:00:00Z;;`,
      `Unknown channel;Nobody;${day}T11:00:00Z;;`,
      `Bad zone;Team News;${day} 12:00;Mars/Base;`,
      `Queue and time;Team News;${day}T13:00:00Z;;true`,
    ].join('\r\n');
    // A media URL goes through the outbound guard: a loopback address is refused, at the row's media.
    const withMedia = `content,channels,publishAt,media\nA picture,Team News,${day}T14:00:00Z,http://127.0.0.1:9/kite.png\n`;
    const guarded = await importCsv(key, withMedia, '?mode=each');
    expect(guarded.body.results[0].error.details.fields[0].path).toBe('posts.0.media');
    const r = await importCsv(key, csv, '?mode=each');
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 201, 422, 422, 422]);
    const paths = r.body.results
      .slice(2)
      .map((x: { error: { details: { fields: { path: string }[] } } }) => x.error.details.fields[0]!.path);
    expect(paths).toEqual(['posts.2.channels', 'posts.3.timeZone', 'posts.4.queue']);
    const berlin = r.body.results[0].post;
    expect(berlin.content).toBe('Hello; from Berlin');
    expect(berlin.channels.map((c: { channelId: string }) => c.channelId)).toEqual([a.id]);
    // 09:30 in Berlin (winter: UTC+1).
    expect(berlin.scheduledAt).toBe(`${day}T08:30:00.000Z`);
    // All or nothing: the same file creates nothing.
    const all = await importCsv(key, csv.replace('Hello', 'Hallo').replace('By id', 'By id again'));
    expect(all.status).toBe(422);
    expect(all.body.error.details.rows.map((x: { index: number }) => x.index)).toEqual([2, 3, 4]);
  });

  test('a file that is not what the header says is refused whole: unknown or missing columns, no rows, not CSV', async () => {
    const { key } = await account();
    const unknown = await importCsv(key, 'content,channels,colour\nhi,x,red\n');
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details.fields[0]).toMatchObject({ path: 'header' });
    expect(unknown.body.error.details.fields[0].message).toContain('unknown column "colour"');
    expect((await importCsv(key, 'content\nhi\n')).body.error.details.fields[0].message).toContain('no "channels" column');
    expect((await importCsv(key, 'content,channels\n')).body.error.details.fields[0]).toMatchObject({ path: 'body' });
    expect((await importCsv(key, 'content,channels\n"unclosed,x\n')).body.error.details.fields[0]).toMatchObject({ path: 'body' });
  });

  test('an Idempotency-Key covers the file: the same file answers the first answer, another file is a conflict', async () => {
    const { key } = await account();
    const at = await stack.syncClock();
    const file = `content,channels,publishAt\nOnce,Team News,${new Date(at.getTime() + DAY).toISOString()}\n`;
    const send = (csv: string) =>
      call(stack.app, 'POST', '/v1/posts/import', {
        key,
        rawBody: csv,
        headers: { 'content-type': 'text/csv', 'idempotency-key': 'file-1' },
      });
    const first = await send(file);
    expect(first.status).toBe(200);
    const again = await send(file);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await send(`${file}Twice,Team News,\n`)).status).toBe(409);
    expect((await call(stack.app, 'GET', '/v1/posts', { key })).body.data).toHaveLength(1);
  });

  test('drafts when asked: rows without a time (or with status draft) become drafts, written once per key, with the posts or not at all; an export with drafts imports back to the same drafts', async () => {
    const { key, a } = await account();
    const tag = await call(stack.app, 'POST', '/v1/tags', { key, body: { name: 'Launch' } });
    const at = await stack.syncClock();
    const file = [
      'status,content,channels,publishAt,tags',
      ',Idea one,,,launch',
      'draft,Idea two,Team News,2020-01-01T09:00:00Z,',
      `,A post,Team News,${new Date(at.getTime() + DAY).toISOString()},`,
    ].join('\n');
    const send = (csv: string, query: string) =>
      call(stack.app, 'POST', `/v1/posts/import${query}`, {
        key,
        rawBody: csv,
        headers: { 'content-type': 'text/csv', 'idempotency-key': `drafts-${csv.length}` },
      });
    const first = await send(file, '?drafts=true');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: 3, drafts: 2, failed: 0 });
    const [one, two, post] = first.body.results;
    expect(one.draft).toMatchObject({ content: 'Idea one', channelIds: [], tagIds: [tag.body.id], intendedAt: null, status: 'draft' });
    expect(two.draft).toMatchObject({ content: 'Idea two', channelIds: [a.id], intendedAt: '2020-01-01T09:00:00.000Z' });
    expect(post.post).toMatchObject({ content: 'A post', status: 'scheduled' });
    expect((await send(file, '?drafts=true')).body).toEqual(first.body);
    const drafts = async () => (await call(stack.app, 'GET', '/v1/drafts', { key })).body.data as { content?: string }[];
    expect((await drafts()).map((d) => d.content).sort()).toEqual(['Idea one', 'Idea two']);
    expect((await call(stack.app, 'GET', '/v1/posts', { key })).body.data.map((p: { content: string }) => p.content)).toEqual(['A post']);

    // All or nothing: a refused row leaves the drafts unwritten too.
    const refused = await send('content,channels\nIdea three,\nBad,Nowhere\n', '?drafts=true');
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields[0].path).toBe('posts.1.channels');
    expect(await drafts()).toHaveLength(2);
    const each = await call(stack.app, 'POST', '/v1/posts/import?drafts=true&mode=each', {
      key,
      rawBody: 'content,channels\nIdea three,\nBad,Nowhere\n',
      headers: { 'content-type': 'text/csv' },
    });
    expect(each.body).toMatchObject({ created: 1, drafts: 1, failed: 1, results: [{ draft: { content: 'Idea three' } }, { status: 422 }] });
    // Without asking, a row without a time is a post published now, and a post needs a channel.
    expect((await importCsv(key, 'content,channels\nIdea three,\n')).body.error.details.fields[0].path).toBe('posts.0.channels');

    const exported = await exportCsv(key, '?drafts=true');
    const lines = parse(exported.text, { columns: true }) as Record<string, string>[];
    expect(lines.map((l) => [l.status, l.content])).toEqual([
      ['scheduled', 'A post'],
      ['draft', 'Idea two'],
      ['draft', 'Idea one'],
      ['draft', 'Idea three'],
    ]);
    expect((parse((await exportCsv(key)).text, { columns: true }) as unknown[]).length).toBe(1);
    const [header, ...exportedLines] = exported.text.trimEnd().split('\n');
    const draftsOnly = [header, ...exportedLines.filter((l) => l.includes(',draft,'))].join('\n');
    const again = await send(draftsOnly, '?drafts=true');
    expect(again.status).toBe(200);
    expect(again.body.results.map((r: { draft: object }) => r.draft)).toMatchObject(
      [two.draft, one.draft, each.body.results[0].draft].map(({ content, channelIds, tagIds, intendedAt }) => ({
        content,
        channelIds,
        tagIds,
        intendedAt,
      })),
    );
  });
});
