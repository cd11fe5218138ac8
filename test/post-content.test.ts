// A post's content is one schema (domain/posts/content.ts): every field of it reaches the create
// and edit bodies (API and MCP), the OpenAPI document, the view, the stored row and the CSV text
// columns without a copy anywhere; and the behaviours that came with it: a nullable field's null
// on create and edit, a nested refusal at its own path, contentByPlatform in the view.
import { describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import { CONTENT_COLUMNS, CONTENT_FIELDS, PostContent, TEXT_FIELDS } from '../domain/posts/content.ts';
import { TOOLS } from '../mcp/tools.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, testApp } from './harness/fixtures.ts';
import { mastodonAccount, type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';

type Json = Record<string, any>;

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;

async function account() {
  const { key, channelId } = await mastodonAccount(stack, fake);
  const at = new Date((await stack.syncClock()).getTime() + 30 * DAY).toISOString();
  return { key, channel: { id: channelId }, at };
}

const deref = (doc: Json, s: Json): Json =>
  s.$ref
    ? deref(
        doc,
        s.$ref
          .slice(2)
          .split('/')
          .reduce((o: Json, k: string) => o[k], doc),
      )
    : s;

describe('a post’s content: one schema, every form derived', () => {
  test('each field is in the create and edit bodies, the MCP tools, the document, the view and the row', async () => {
    const app = await testApp();
    const doc = (await call(app, 'GET', '/v1/openapi.json')).body as Json;
    const body = (path: string, method: string) => deref(doc, doc.paths[path][method].requestBody.content['application/json'].schema);
    const create = body('/posts', 'post');
    const validate = body('/posts/validate', 'post');
    const edit = body('/posts/{id}', 'patch');
    const bulkRow = deref(doc, body('/posts/bulk', 'post').properties.posts.items);
    const view = doc.components.schemas.Post;
    const tool = (name: string) => TOOLS.find((t) => t.name === name)!.input as Json;
    const columns = Object.values(stack.h.orm.getMetadata().get(Post).properties).map((p) => p.fieldNames?.[0]);
    expect(CONTENT_FIELDS.length).toBeGreaterThanOrEqual(8);
    for (const field of CONTENT_FIELDS) {
      for (const [where, schema] of Object.entries({ create, validate, edit, bulkRow })) {
        expect({ where, field, present: field in schema.properties }).toEqual({ where, field, present: true });
      }
      expect({ field, inCreateTool: field in tool('create_post').properties }).toEqual({ field, inCreateTool: true });
      expect({ field, inUpdateTool: field in tool('update_post').properties }).toEqual({ field, inUpdateTool: true });
      if (field !== 'mediaIds') expect({ field, inView: field in view.properties }).toEqual({ field, inView: true });
      expect(columns).toContain(CONTENT_COLUMNS.find((c) => c.field === field)!.column);
    }
    // Only `content` is required on create; nothing on edit.
    expect(create.required.filter((f: string) => (CONTENT_FIELDS as string[]).includes(f))).toEqual(['content']);
    expect(edit.required ?? []).toEqual([]);
    // The document's words for a content field are the schema's own.
    expect(create.properties.mediaIds.description).toBe((PostContent.properties.mediaIds as Json).description);
    expect(TEXT_FIELDS).toContain('content');
  });

  test('a nullable field is null on create and removed by null on edit; the view shows contentByPlatform', async () => {
    const { key, channel, at } = await account();
    const text = `nullable ${crypto.randomUUID()}`;
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: text,
        channelIds: [channel.id],
        publishAt: at,
        reddit: null,
        thread: null,
        firstComment: null,
        contentByPlatform: { MASTODON: `${text} on Mastodon` },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      reddit: null,
      thread: null,
      firstComment: null,
      contentByPlatform: { MASTODON: `${text} on Mastodon` },
    });

    const withReddit = await call(stack.app, 'PATCH', `/v1/posts/${created.body.id}`, {
      key,
      body: { reddit: { subreddit: 'test', title: 'A title' }, firstComment: { content: 'first!' } },
    });
    expect(withReddit.status).toBe(200);
    expect(withReddit.body).toMatchObject({ reddit: { subreddit: 'test', title: 'A title' }, firstComment: { content: 'first!' } });
    const removed = await call(stack.app, 'PATCH', `/v1/posts/${created.body.id}`, { key, body: { reddit: null, firstComment: null } });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ reddit: null, firstComment: null });
    const read = await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key });
    expect(read.body).toMatchObject({ reddit: null, firstComment: null, contentByPlatform: { MASTODON: `${text} on Mastodon` } });
    // The list page (post_page's rows) shows the same content.
    const listed = await call(stack.app, 'GET', '/v1/posts?limit=100', { key });
    expect(listed.body.data.find((p: Json) => p.id === created.body.id)).toEqual(read.body);
  });

  test('a value inside a nullable field is refused at its own path, in the schema’s words', async () => {
    const { key, channel, at } = await account();
    const r = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'x', channelIds: [channel.id], publishAt: at, reddit: { subreddit: 'ok', title: 't'.repeat(301) } },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.details.fields).toEqual([{ path: 'reddit.title', message: expect.stringContaining('1 to 300 characters') }]);
    const thread = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'x', channelIds: [channel.id], publishAt: at, thread: [{ content: 'a', mediaIds: ['bad id'] }] },
    });
    expect(thread.status).toBe(422);
    expect(thread.body.error.details.fields).toEqual([{ path: 'thread.0.mediaIds.0', message: expect.stringContaining('must be an id') }]);
  });

  test('a CSV row’s content is held to the same schema, in its words', async () => {
    const { key, channel } = await account();
    const csv = `content,channels\n${'x'.repeat(100_001)},${channel.id}\n`;
    const r = await call(stack.app, 'POST', '/v1/posts/import?mode=each', {
      key,
      rawBody: csv,
      headers: { 'content-type': 'text/csv' },
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0].error.details.fields).toEqual([
      { path: 'posts.0.content', message: expect.stringContaining('at most 100000 characters') },
    ]);
  });
});
