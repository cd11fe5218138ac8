// Tags on the real stack (Postgres, Temporal on a time-skipping server, a fake Mastodon, a local
// feed): /v1/tags and its rules (unique names whatever their case, colours, bounds), tags put on
// posts when they are made and edited (a published one too), lists that narrow to a tag with the
// page cache on (a tag added or removed by any writer shows at once), the lists of drafts, series
// and feeds narrowed the same way, the posts a series and a feed make carrying their tags, the CSV
// export and import of tags by name, the analytics of one tag, a deleted tag taken off everything,
// another organization's tags unknown, and keys limited to channels or held to a member's role.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import { Post } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { occurrencePostId } from '../domain/series/series.ts';
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { feedPollNowWorkflowId } from '../workflows/feed-poll-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { feedItem, startFeedServer, type FeedServer } from './fakes/feed-server.ts';
import { call, makeKey, makeOrg, publishedPostWithReadings } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let mastodon: FakeMastodon;
const feeds: FeedServer[] = [];

beforeAll(async () => {
  mastodon = await startFakeMastodon();
  stack = await startPostStack({ maxCachedWorkflows: 0, appDeps: { outbound: { allowPrivate: true } } });
}, 60_000);

afterAll(async () => {
  for (const f of feeds) f.stop();
  await stack?.stop();
  await mastodon?.stop();
});

const DAY = 86_400_000;

/** An organization with a key of every scope and two Mastodon channels on the fake. */
async function account() {
  const org = await makeOrg('PRO', 'Tags org');
  const { key } = await makeKey(org.id);
  const channel = async (name: string) =>
    addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name,
      credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
    });
  return { org, key, a: await channel('Team News'), b: await channel('Team Jobs') };
}

async function tag(key: string, name: string, colour?: string): Promise<string> {
  const r = await call(stack.app, 'POST', '/v1/tags', { key, body: { name, ...(colour ? { colour } : {}) } });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function post(key: string, body: Record<string, unknown>) {
  const r = await call(stack.app, 'POST', '/v1/posts', { key, body });
  expect({ status: r.status, error: r.body?.error }).toEqual({ status: 201, error: undefined });
  return r.body as { id: string; tagIds: string[] };
}

const later = async (days: number) => new Date((await stack.syncClock()).getTime() + days * DAY).toISOString();
const ids = (page: { data: { id: string }[] }) => page.data.map((p) => p.id);
const fields = (r: { body: any }) => r.body.error.details.fields as { path: string; message: string }[];

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await fn();
    if (v) return v;
    await Bun.sleep(20);
  }
  throw new Error(`never: ${what}`);
}

describe('/v1/tags', () => {
  test('make, list by name, read, rename, recolour and delete a tag; each change is in the audit log', async () => {
    const { key } = await account();
    const made = await call(stack.app, 'POST', '/v1/tags', { key, body: { name: '  Spring launch ', colour: '#FF8800' } });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe(`/v1/tags/${made.body.id}`);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^tag_[0-9a-z]{26}$/),
      name: 'Spring launch',
      colour: '#ff8800',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const plain = await call(stack.app, 'POST', '/v1/tags', { key, body: { name: 'autumn' } });
    expect(plain.body.colour).toBe('#64748b');
    const list = await call(stack.app, 'GET', '/v1/tags', { key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(['autumn', 'Spring launch']);
    expect((await call(stack.app, 'GET', `/v1/tags/${made.body.id}`, { key })).body).toEqual(made.body);

    const renamed = await call(stack.app, 'PATCH', `/v1/tags/${made.body.id}`, { key, body: { name: 'Summer launch' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: made.body.id, name: 'Summer launch', colour: '#ff8800' });
    const recoloured = await call(stack.app, 'PATCH', `/v1/tags/${made.body.id}`, { key, body: { colour: '#00AA11' } });
    expect(recoloured.body).toMatchObject({ name: 'Summer launch', colour: '#00aa11' });
    expect((await call(stack.app, 'PATCH', `/v1/tags/${made.body.id}`, { key, body: {} })).status).toBe(422);

    expect((await call(stack.app, 'DELETE', `/v1/tags/${made.body.id}`, { key })).status).toBe(204);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const r = await call(stack.app, method, `/v1/tags/${made.body.id}`, { key, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      expect({ method, status: r.status, code: r.body?.error?.code }).toEqual({ method, status: 404, code: 'not_found' });
    }
    expect((await call(stack.app, 'GET', '/v1/tags', { key })).body.data.map((t: { id: string }) => t.id)).toEqual([plain.body.id]);

    const audit = await call(stack.app, 'GET', '/v1/audit-events?limit=100', { key });
    const mine = (audit.body.data as { action: string; resource: { type: string; id: string } }[]).filter((e) =>
      e.action.startsWith('tag.'),
    );
    expect(mine.map((e) => [e.action, e.resource.type, e.resource.id]).reverse()).toEqual([
      ['tag.create', 'tag', made.body.id],
      ['tag.create', 'tag', plain.body.id],
      ['tag.update', 'tag', made.body.id],
      ['tag.update', 'tag', made.body.id],
      ['tag.delete', 'tag', made.body.id],
    ]);
  });

  test('a name is unique in the organization whatever its letter case (409 naming the other); another organization may have it', async () => {
    const { key } = await account();
    const first = await tag(key, 'Black Friday');
    const again = await call(stack.app, 'POST', '/v1/tags', { key, body: { name: 'black friday ' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'conflict', details: { tagId: first } });
    const second = await tag(key, 'Cyber Monday');
    const taken = await call(stack.app, 'PATCH', `/v1/tags/${second}`, { key, body: { name: 'BLACK FRIDAY' } });
    expect(taken.status).toBe(409);
    expect(taken.body.error.details.tagId).toBe(first);
    // Its own name in another case is no conflict.
    const recased = await call(stack.app, 'PATCH', `/v1/tags/${first}`, { key, body: { name: 'BLACK FRIDAY' } });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe('BLACK FRIDAY');
    const other = await account();
    expect((await call(stack.app, 'POST', '/v1/tags', { key: other.key, body: { name: 'Black Friday' } })).status).toBe(201);
    // Two creates of one name at once: one tag.
    const both = await Promise.all(
      [1, 2].map(() => call(stack.app, 'POST', '/v1/tags', { key: other.key, body: { name: 'Same Moment' } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  test('a colour is #rrggbb and a name 1–50 characters, not only spaces, without |: anything else is 422 at its field', async () => {
    const { key } = await account();
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'x', colour: '#12345' }, 'colour'],
      [{ name: 'x', colour: 'red' }, 'colour'],
      [{ name: 'x', colour: '#GGGGGG' }, 'colour'],
      [{ name: 'x', colour: '#1234567' }, 'colour'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'a|b' }, 'name'],
      [{ name: 'x'.repeat(51) }, 'name'],
      [{ name: 'x', extra: 1 }, 'extra'],
    ];
    for (const [body, path] of bad) {
      const r = await call(stack.app, 'POST', '/v1/tags', { key, body });
      expect({ body, status: r.status, path: r.body.error?.details?.fields?.[0]?.path }).toEqual({ body, status: 422, path });
    }
    expect((await call(stack.app, 'POST', '/v1/tags', { key, body: { name: 'x'.repeat(50), colour: '#abcdef' } })).status).toBe(201);
    const id = await tag(key, 'fine');
    expect(fields(await call(stack.app, 'PATCH', `/v1/tags/${id}`, { key, body: { colour: 'blue' } }))[0]!.path).toBe('colour');
    expect((await call(stack.app, 'GET', '/v1/tags', { key })).body.data).toHaveLength(2);
  });
});

describe('tags on posts', () => {
  test('given on create (single, validate, bulk) and replaced by PATCH; shown in id order; an unknown or repeated id is 422 at tagIds', async () => {
    const { key, a } = await account();
    const t1 = await tag(key, 'one');
    const t2 = await tag(key, 'two');
    const created = await post(key, { content: 'tagged', channelIds: [a.id], publishAt: await later(2), tagIds: [t2, t1] });
    expect(created.tagIds).toEqual([t1, t2]);
    expect((await call(stack.app, 'GET', `/v1/posts/${created.id}`, { key })).body.tagIds).toEqual([t1, t2]);
    expect((await post(key, { content: 'untagged', channelIds: [a.id], publishAt: await later(2) })).tagIds).toEqual([]);

    const edited = await call(stack.app, 'PATCH', `/v1/posts/${created.id}`, { key, body: { tagIds: [t2] } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ content: 'tagged', tagIds: [t2] });
    // With the content: the workflow takes the text, the tags are written once it has.
    const both = await call(stack.app, 'PATCH', `/v1/posts/${created.id}`, { key, body: { content: 'retagged', tagIds: [] } });
    expect(both.body).toMatchObject({ content: 'retagged', tagIds: [] });
    expect((await call(stack.app, 'GET', `/v1/posts/${created.id}`, { key })).body).toMatchObject({ content: 'retagged', tagIds: [] });

    const unknown = 'tag_00000000000000000000000000';
    const refused = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'no such tag', channelIds: [a.id], publishAt: await later(2), tagIds: [t1, unknown] },
    });
    expect(refused.status).toBe(422);
    expect(fields(refused)).toEqual([{ path: 'tagIds', message: `unknown tag ${unknown}` }]);
    const validated = await call(stack.app, 'POST', '/v1/posts/validate', {
      key,
      body: { content: 'no such tag', channelIds: [a.id], tagIds: [unknown] },
    });
    expect(fields(validated)).toEqual([{ path: 'tagIds', message: `unknown tag ${unknown}` }]);
    const repeated = await call(stack.app, 'PATCH', `/v1/posts/${created.id}`, { key, body: { tagIds: [t1, t1] } });
    expect(repeated.status).toBe(422);
    expect(fields(repeated)[0]!.path).toBe('tagIds');
    expect(fields(await call(stack.app, 'PATCH', `/v1/posts/${created.id}`, { key, body: { tagIds: [unknown] } }))).toEqual([
      { path: 'tagIds', message: `unknown tag ${unknown}` },
    ]);
    expect((await call(stack.app, 'GET', `/v1/posts/${created.id}`, { key })).body.tagIds).toEqual([]);

    const bulk = await call(stack.app, 'POST', '/v1/posts/bulk', {
      key,
      body: {
        mode: 'each',
        posts: [
          { content: 'bulk one', channelIds: [a.id], publishAt: await later(3), tagIds: [t1] },
          { content: 'bulk two', channelIds: [a.id], publishAt: await later(3), tagIds: [unknown] },
        ],
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.results[0].post.tagIds).toEqual([t1]);
    expect(bulk.body.results[1].error.details.fields).toEqual([{ path: 'posts.1.tagIds', message: `unknown tag ${unknown}` }]);
  });

  test('a published post takes an edit of its tags alone; any other edit of it is still 409', async () => {
    const { key, a } = await account();
    const t1 = await tag(key, 'campaign');
    const now = await post(key, { content: 'out now', channelIds: [a.id] });
    await stack.settle(now.id);
    expect((await call(stack.app, 'GET', `/v1/posts/${now.id}`, { key })).body.status).toBe('published');
    const tagged = await call(stack.app, 'PATCH', `/v1/posts/${now.id}`, { key, body: { tagIds: [t1] } });
    expect(tagged.status).toBe(200);
    expect(tagged.body).toMatchObject({ status: 'published', tagIds: [t1] });
    const both = await call(stack.app, 'PATCH', `/v1/posts/${now.id}`, { key, body: { content: 'changed', tagIds: [] } });
    expect(both.status).toBe(409);
    expect((await call(stack.app, 'GET', `/v1/posts/${now.id}`, { key })).body.tagIds).toEqual([t1]);
  });

  test('GET /v1/posts?tagId= lists a tag’s posts; a tag put on or taken off, by the API or straight in Postgres, shows at once', async () => {
    const { key, a } = await account();
    expect(stack.h.postPages.listening()).toBe(true);
    const t1 = await tag(key, 'launch');
    const t2 = await tag(key, 'other');
    const first = await post(key, { content: 'first', channelIds: [a.id], publishAt: await later(1), tagIds: [t1] });
    const second = await post(key, { content: 'second', channelIds: [a.id], publishAt: await later(2), tagIds: [t2] });
    const third = await post(key, { content: 'third', channelIds: [a.id], publishAt: await later(3), tagIds: [t1, t2] });
    const list = async (query: string) => {
      const r = await call(stack.app, 'GET', `/v1/posts?limit=50${query}`, { key });
      expect(r.status).toBe(200);
      return r.body;
    };
    // The whole list first: a kept page of it must not answer the filtered request.
    expect(ids(await list(''))).toEqual([third.id, second.id, first.id]);
    expect(ids(await list(`&tagId=${t1}`))).toEqual([third.id, first.id]);
    expect((await list(`&tagId=${t1}`)).data[0].tagIds).toEqual([t1, t2]);
    expect(ids(await list(`&tagId=${t2}&channelId=${a.id}`))).toEqual([third.id, second.id]);
    expect(ids(await list('&tagId=tag_00000000000000000000000000'))).toEqual([]);
    // Pages of a tag's posts by the cursor.
    const p1 = (await call(stack.app, 'GET', `/v1/posts?tagId=${t1}&limit=1`, { key })).body;
    expect(ids(p1)).toEqual([third.id]);
    const p2 = (await call(stack.app, 'GET', `/v1/posts?tagId=${t1}&limit=1&cursor=${p1.nextCursor}`, { key })).body;
    expect(ids(p2)).toEqual([first.id]);
    expect(p2.nextCursor).toBeNull();

    // Taken off through the API (post_tags only: the post's row is not written).
    expect((await call(stack.app, 'PATCH', `/v1/posts/${first.id}`, { key, body: { tagIds: [] } })).status).toBe(200);
    expect(ids(await list(`&tagId=${t1}`))).toEqual([third.id]);
    expect((await list('')).data.find((p: { id: string }) => p.id === first.id).tagIds).toEqual([]);
    // Put on by another writer (psql): announced by the trigger, so the kept page goes.
    await stack.h.pool.query('insert into post_tags (post_id, tag_id) values ($1, $2)', [second.id, t1]);
    expect(ids(await list(`&tagId=${t1}`))).toEqual([third.id, second.id]);
    await stack.h.pool.query('delete from post_tags where post_id = $1 and tag_id = $2', [third.id, t1]);
    expect(ids(await list(`&tagId=${t1}`))).toEqual([second.id]);
  });
});

describe('series and feeds', () => {
  test('a series keeps its tags (checked, replaced by PATCH) and each occurrence carries them', async () => {
    const { key, a } = await account();
    const t1 = await tag(key, 'weekly');
    const t2 = await tag(key, 'news');
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + 60 * 60_000) / 60_000) * 60_000);
    const unknown = 'tag_00000000000000000000000000';
    const refused = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'weekly news', channelIds: [a.id], publishAt: start.toISOString(), repeat: { every: 'week' }, tagIds: [unknown] },
    });
    expect(fields(refused)).toEqual([{ path: 'tagIds', message: `unknown tag ${unknown}` }]);
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: {
        content: 'weekly news',
        channelIds: [a.id],
        publishAt: start.toISOString(),
        repeat: { every: 'week', count: 2 },
        tagIds: [t1],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.tagIds).toEqual([t1]);
    const edited = await call(stack.app, 'PATCH', `/v1/series/${created.body.id}`, { key, body: { tagIds: [t2, t1] } });
    expect(edited.status).toBe(200);
    expect(edited.body.tagIds).toEqual([t1, t2]);
    expect(fields(await call(stack.app, 'PATCH', `/v1/series/${created.body.id}`, { key, body: { tagIds: [unknown] } }))[0]!.path).toBe(
      'tagIds',
    );
    // 4 minutes before its time the first occurrence is made, through the create path, with the series' tags.
    await stack.env.sleep(start.getTime() - t0.getTime() - 4 * 60_000);
    const postId = occurrencePostId(created.body.id, 0);
    await waitFor('the first occurrence', async () => !!(await stack.h.orm.em.fork().findOne(Post, { id: postId })));
    const occurrence = await call(stack.app, 'GET', `/v1/posts/${postId}`, { key });
    expect(occurrence.body).toMatchObject({ seriesId: created.body.id, content: 'weekly news', tagIds: [t1, t2] });
    expect(ids((await call(stack.app, 'GET', `/v1/posts?tagId=${t2}`, { key })).body)).toEqual([postId]);
    expect((await call(stack.app, 'DELETE', `/v1/series/${created.body.id}`, { key })).status).toBe(204);
  });

  test('a feed keeps its tags (checked, replaced by PATCH) and each post it makes carries them', async () => {
    const { key, a } = await account();
    const t1 = await tag(key, 'blog');
    const server = startFeedServer([feedItem(1)]);
    feeds.push(server);
    const unknown = 'tag_00000000000000000000000000';
    const refused = await call(stack.app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [a.id], tagIds: [unknown] } });
    expect(fields(refused)).toEqual([{ path: 'tagIds', message: `unknown tag ${unknown}` }]);
    const created = await call(stack.app, 'POST', '/v1/feeds', {
      key,
      body: { url: server.url, channelIds: [a.id], backfill: 1, tagIds: [t1] },
    });
    expect(created.status).toBe(201);
    expect(created.body.tagIds).toEqual([t1]);
    expect((await call(stack.app, 'POST', `/v1/feeds/${created.body.id}/poll`, { key })).status).toBe(202);
    await stack.client.workflow.getHandle(feedPollNowWorkflowId(created.body.id)).result();
    const items = (await call(stack.app, 'GET', `/v1/feeds/${created.body.id}/items`, { key })).body.data as {
      outcome: string;
      postId: string | null;
    }[];
    const posted = items.find((i) => i.outcome === 'posted');
    expect(posted?.postId).toEqual(expect.any(String));
    expect((await call(stack.app, 'GET', `/v1/posts/${posted!.postId}`, { key })).body.tagIds).toEqual([t1]);
    const t2 = await tag(key, 'rss');
    const edited = await call(stack.app, 'PATCH', `/v1/feeds/${created.body.id}`, { key, body: { tagIds: [t2] } });
    expect(edited.status).toBe(200);
    expect(edited.body.tagIds).toEqual([t2]);
    expect((await call(stack.app, 'GET', `/v1/feeds/${created.body.id}`, { key })).body.tagIds).toEqual([t2]);
  });
});

describe('CSV, analytics and deleting a tag', () => {
  test('the export writes a post’s tags by name; the file imports back to the same tags; an unknown name refuses its row at tags', async () => {
    const { key, a } = await account();
    const t1 = await tag(key, 'Spring Sale');
    const t2 = await tag(key, '=formula?');
    const made = [
      { content: 'both', channelIds: [a.id], publishAt: await later(1), tagIds: [t1, t2] },
      { content: 'formula', channelIds: [a.id], publishAt: await later(2), tagIds: [t2] },
      { content: 'none', channelIds: [a.id], publishAt: await later(3) },
    ];
    const created = await call(stack.app, 'POST', '/v1/posts/bulk', { key, body: { posts: made } });
    expect(created.status).toBe(200);
    const res = await stack.app.handle(
      new Request('http://localhost/v1/posts/export?format=csv', { headers: { authorization: `Bearer ${key}` } }),
    );
    const text = await res.text();
    const [header, ...rows] = parse(text) as string[][];
    const col = header!.indexOf('tags');
    expect(col).toBeGreaterThan(header!.indexOf('media'));
    // By name, in id order, `|` between them; a cell a spreadsheet would run gets its apostrophe, as any cell.
    expect(rows.map((r) => r[col])).toEqual(['Spring Sale|=formula?', "'=formula?", '']);

    for (const r of created.body.results) expect((await call(stack.app, 'DELETE', `/v1/posts/${r.post.id}`, { key })).status).toBe(204);
    const imported = await call(stack.app, 'POST', '/v1/posts/import', { key, rawBody: text, headers: { 'content-type': 'text/csv' } });
    expect(imported.status).toBe(200);
    expect(imported.body.results.map((r: { post: { content: string; tagIds: string[] } }) => [r.post.content, r.post.tagIds])).toEqual([
      ['both', [t1, t2]],
      ['formula', [t2]],
      ['none', []],
    ]);

    // Names in any letter case, or ids; an unknown one refuses its row (an import makes no tag).
    const day = (await later(5)).slice(0, 10);
    const csv = [
      'content,channels,publishAt,tags',
      `by name,Team News,${day}T09:00:00Z,spring sale`,
      `by id,Team News,${day}T10:00:00Z,${t2}`,
      `unknown,Team News,${day}T11:00:00Z,Spring Sale|Nope`,
    ].join('\n');
    const r = await call(stack.app, 'POST', '/v1/posts/import?mode=each', { key, rawBody: csv, headers: { 'content-type': 'text/csv' } });
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 201, 422]);
    expect(r.body.results[0].post.tagIds).toEqual([t1]);
    expect(r.body.results[1].post.tagIds).toEqual([t2]);
    expect(r.body.results[2].error.details.fields).toEqual([
      { path: 'posts.2.tags', message: expect.stringContaining('unknown tag "Nope"') },
    ]);
    expect((await call(stack.app, 'GET', '/v1/tags', { key })).body.data).toHaveLength(2);
  });

  test('GET /v1/analytics?tagId= sums the posts with that tag only (a published post tagged afterwards counts)', async () => {
    const { org, key, a } = await account();
    const t1 = await tag(key, 'campaign');
    const now = await stack.syncClock();
    const at = new Date(now.getTime() - 3 * DAY);
    const inCampaign = await publishedPostWithReadings(org.id, a.id, at, [[new Date(at.getTime() + DAY), { likes: 5, replies: 1 }]]);
    await publishedPostWithReadings(org.id, a.id, at, [[new Date(at.getTime() + DAY), { likes: 100, replies: 10 }]]);
    expect((await call(stack.app, 'PATCH', `/v1/posts/${inCampaign}`, { key, body: { tagIds: [t1] } })).status).toBe(200);
    const range = `from=${new Date(now.getTime() - 7 * DAY).toISOString()}&to=${now.toISOString()}`;
    const all = await call(stack.app, 'GET', `/v1/analytics?${range}`, { key });
    expect(all.body).toMatchObject({ posts: 2, totals: { likes: 105, replies: 11 } });
    const campaign = await call(stack.app, 'GET', `/v1/analytics?${range}&tagId=${t1}`, { key });
    expect(campaign.status).toBe(200);
    expect(campaign.body).toMatchObject({ posts: 1, totals: { likes: 5, replies: 1 } });
    expect(campaign.body.topPosts.map((p: { postId: string }) => p.postId)).toEqual([inCampaign]);
    const none = await call(stack.app, 'GET', `/v1/analytics?${range}&tagId=tag_00000000000000000000000000`, { key });
    expect(none.body).toMatchObject({ posts: 0, totals: { likes: null } });
  });

  test('deleting a tag takes it off every post, series and feed that has it; the others keep theirs', async () => {
    const { key, a } = await account();
    const gone = await tag(key, 'gone');
    const kept = await tag(key, 'kept');
    const p = await post(key, { content: 'tagged twice', channelIds: [a.id], publishAt: await later(2), tagIds: [gone, kept] });
    const series = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'series', channelIds: [a.id], publishAt: await later(30), repeat: { every: 'week' }, tagIds: [gone, kept] },
    });
    const server = startFeedServer([feedItem(1)]);
    feeds.push(server);
    const feed = await call(stack.app, 'POST', '/v1/feeds', { key, body: { url: server.url, channelIds: [a.id], tagIds: [gone] } });
    expect([series.status, feed.status]).toEqual([201, 201]);
    // A kept page of the tag's posts, which the delete must not outlive.
    expect(ids((await call(stack.app, 'GET', `/v1/posts?tagId=${gone}`, { key })).body)).toEqual([p.id]);
    expect((await call(stack.app, 'DELETE', `/v1/tags/${gone}`, { key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/posts/${p.id}`, { key })).body.tagIds).toEqual([kept]);
    expect(ids((await call(stack.app, 'GET', `/v1/posts?tagId=${gone}`, { key })).body)).toEqual([]);
    expect((await call(stack.app, 'GET', `/v1/posts?limit=5`, { key })).body.data[0].tagIds).toEqual([kept]);
    expect((await call(stack.app, 'GET', `/v1/series/${series.body.id}`, { key })).body.tagIds).toEqual([kept]);
    expect((await call(stack.app, 'GET', `/v1/feeds/${feed.body.id}`, { key })).body.tagIds).toEqual([]);
    expect((await stack.h.pool.query('select count(*)::int as n from post_tags where tag_id = $1', [gone])).rows[0].n).toBe(0);
    await call(stack.app, 'DELETE', `/v1/series/${series.body.id}`, { key });
  });
});

describe('who sees and uses tags', () => {
  test('another organization’s tags are unknown: 404 by id, 422 in tagIds, nothing in its lists', async () => {
    const mine = await account();
    const theirs = await account();
    const foreign = await tag(theirs.key, 'theirs');
    const tagged = await post(theirs.key, {
      content: 'their post',
      channelIds: [theirs.a.id],
      publishAt: await later(2),
      tagIds: [foreign],
    });
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await call(stack.app, method, `/v1/tags/${foreign}`, { key: mine.key, ...(body ? { body } : {}) });
      expect({ method, status: r.status }).toEqual({ method, status: 404 });
    }
    const refusal = [{ path: 'tagIds', message: `unknown tag ${foreign}` }];
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key: mine.key,
      body: { content: 'borrowing a tag', channelIds: [mine.a.id], publishAt: await later(2), tagIds: [foreign] },
    });
    expect(fields(created)).toEqual(refusal);
    const own = await post(mine.key, { content: 'mine', channelIds: [mine.a.id], publishAt: await later(3) });
    expect(fields(await call(stack.app, 'PATCH', `/v1/posts/${own.id}`, { key: mine.key, body: { tagIds: [foreign] } }))).toEqual(refusal);
    const series = await call(stack.app, 'POST', '/v1/series', {
      key: mine.key,
      body: { content: 's', channelIds: [mine.a.id], publishAt: await later(30), repeat: { every: 'week' }, tagIds: [foreign] },
    });
    expect(fields(series)).toEqual(refusal);
    expect((await call(stack.app, 'GET', '/v1/tags', { key: mine.key })).body.data).toEqual([]);
    expect(ids((await call(stack.app, 'GET', `/v1/posts?tagId=${foreign}`, { key: mine.key })).body)).toEqual([]);
    // Theirs is as it was.
    expect((await call(stack.app, 'GET', `/v1/posts/${tagged.id}`, { key: theirs.key })).body.tagIds).toEqual([foreign]);
    expect((await call(stack.app, 'GET', `/v1/tags/${foreign}`, { key: theirs.key })).body.name).toBe('theirs');
  });

  test('a key limited to some channels reads every tag and puts them on its posts', async () => {
    const { org, key, a, b } = await account();
    const t1 = await tag(key, 'first');
    const t2 = await tag(key, 'second');
    const limited = (await makeKey(org.id, { channels: [b.id] })).key;
    expect((await call(stack.app, 'GET', '/v1/tags', { key: limited })).body.data.map((t: { id: string }) => t.id)).toEqual([t1, t2]);
    expect((await call(stack.app, 'GET', `/v1/tags/${t2}`, { key: limited })).status).toBe(200);
    const onB = await post(limited, { content: 'on b', channelIds: [b.id], publishAt: await later(2), tagIds: [t2] });
    expect(onB.tagIds).toEqual([t2]);
    // Its lists stay within its channels, a tag's included.
    await post(key, { content: 'on a', channelIds: [a.id], publishAt: await later(2), tagIds: [t2] });
    expect(ids((await call(stack.app, 'GET', `/v1/posts?tagId=${t2}`, { key: limited })).body)).toEqual([onB.id]);

    expect(fields(await call(stack.app, 'GET', '/v1/posts?tagId=', { key }))[0]!.path).toBe('tagId');

    // Drafts, series and feeds narrow as posts do: a tagged and an untagged one on b, a tagged one on a.
    const server = startFeedServer([feedItem(1)]);
    feeds.push(server);
    const start = await later(30);
    const bodies = {
      drafts: (channelIds: string[], tagIds: string[]) => ({ content: 'draft', channelIds, tagIds }),
      series: (channelIds: string[], tagIds: string[]) => ({
        content: 's',
        channelIds,
        publishAt: start,
        repeat: { every: 'week' },
        tagIds,
      }),
      feeds: (channelIds: string[], tagIds: string[]) => ({ url: server.url, channelIds, tagIds }),
    };
    for (const [list, body] of Object.entries(bodies)) {
      const make = async (k: string, channelIds: string[], tagIds: string[]) => {
        const r = await call(stack.app, 'POST', `/v1/${list}`, { key: k, body: body(channelIds, tagIds) });
        expect({ list, status: r.status, error: r.body?.error }).toEqual({ list, status: 201, error: undefined });
        return r.body.id as string;
      };
      const onA = await make(key, [a.id], [t2]);
      const tagged = await make(limited, [b.id], [t1, t2]);
      const untagged = await make(limited, [b.id], []);
      const listed = async (k: string, query: string) => {
        const r = await call(stack.app, 'GET', `/v1/${list}${query}`, { key: k });
        expect({ list, query, status: r.status }).toEqual({ list, query, status: 200 });
        return { list, query, ids: ids(r.body).sort() };
      };
      const expectListed = async (k: string, query: string, expected: string[]) =>
        expect(await listed(k, query)).toEqual({ list, query, ids: expected.sort() });
      await expectListed(limited, '', [tagged, untagged]);
      await expectListed(limited, `?tagId=${t2}`, [tagged]);
      await expectListed(key, `?tagId=${t2}`, [onA, tagged]);
      await expectListed(key, `?tagId=${t1}`, [tagged]);
      // An id that is none of the organization's tags matches nothing, as GET /v1/posts; a malformed one is 422.
      await expectListed(key, '?tagId=tag_00000000000000000000000000', []);
      const bad = await call(stack.app, 'GET', `/v1/${list}?tagId=`, { key });
      expect({ list, status: bad.status, path: fields(bad)[0]?.path }).toEqual({ list, status: 422, path: 'tagId' });
      if (list === 'series') for (const id of [onA, tagged, untagged]) await call(stack.app, 'DELETE', `/v1/series/${id}`, { key });
    }
  });

  test('a contributor’s key puts tags on posts but makes, changes and deletes none (tags.manage: editors and up)', async () => {
    const { org, key, a } = await account();
    const t1 = await tag(key, 'existing');
    const keyOf = async (role: 'contributor' | 'editor') => {
      const user = await createUser(stack.h.orm.em.fork(), {
        organizationId: org.id,
        email: `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`,
        password: 'long enough',
        role,
      });
      const made = await createApiKey(stack.h.orm.em.fork(), {
        organizationId: org.id,
        name: role,
        scopes: ['read', 'publish'],
        channels: 'all',
        createdBy: { userId: user.id, role },
      });
      return made.key;
    };
    const contributor = await keyOf('contributor');
    const p = await post(contributor, { content: 'by a contributor', channelIds: [a.id], publishAt: await later(2), tagIds: [t1] });
    expect(p.tagIds).toEqual([t1]);
    for (const [method, path, body] of [
      ['POST', '/v1/tags', { name: 'new' }],
      ['PATCH', `/v1/tags/${t1}`, { name: 'renamed' }],
      ['DELETE', `/v1/tags/${t1}`, undefined],
    ] as const) {
      const r = await call(stack.app, method, path, { key: contributor, ...(body ? { body } : {}) });
      expect({ method, status: r.status, details: r.body.error.details }).toEqual({
        method,
        status: 403,
        details: { requiredScope: 'publish', role: 'contributor', action: 'tags.manage' },
      });
    }
    const editor = await keyOf('editor');
    expect((await call(stack.app, 'POST', '/v1/tags', { key: editor, body: { name: 'by an editor' } })).status).toBe(201);
  });
});
