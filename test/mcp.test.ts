// The MCP server (mcp/) through the official SDK's Client, over both transports: Streamable HTTP
// at /mcp (the app in process) and stdio (`bun mcp/main.ts`, a child process bridging to the
// app on a real socket). Every tool is called against the real stack (Postgres, Temporal, disk
// store, a fake Mastodon, a fake OpenAI-compatible model); a key without a scope gets the tool
// error /v1 would give, and another organization's key sees nothing of this one.
import { createApiKey } from '../services/api-keys.ts';
import { createUser } from '../services/users.ts';
import { KEY_SCOPES } from '../domain/access.ts';
import { newId } from '../lib/ids.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chatCompletionsUrl } from '../lib/config.ts';
import { createApp } from '../server/app.ts';
import { addChannel } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

type Stack = Awaited<ReturnType<typeof startPostStack>>;
type App = ReturnType<typeof createApp>;
type Json = Record<string, any>;

const TOOL_NAMES = [
  'whoami',
  'list_channels',
  'get_channel_capabilities',
  'validate_post',
  'create_post',
  'list_posts',
  'list_tags',
  'create_tag',
  'get_post',
  'get_post_analytics',
  'get_post_comments',
  'list_inbox',
  'update_comment',
  'reply_to_comment',
  'get_reply',
  'create_draft',
  'list_drafts',
  'schedule_draft',
  'update_post',
  'cancel_post',
  'retry_post',
  'approve_post',
  'reject_post',
  'upload_media_from_url',
  'get_media',
  'generate_post',
  'generate_alt_text',
];
const DAY = 86_400_000;

let stack: Stack;
let app: App;
let clock = new Date();
let mastodon: FakeMastodon;
let model: FakeOpenAI;
let files: ReturnType<typeof Bun.serve>;
let socket: ReturnType<typeof Bun.serve>;
let png: Buffer;
const org = { id: '', key: '', readKey: '', channelId: '', otherKey: '' };

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
  mastodon = await startFakeMastodon();
  model = startFakeOpenAI();
  png = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#22aa66' } })
    .png()
    .toBuffer();
  // Files to fetch by URL (the guard lets 127.0.0.1 through only with allowPrivate, as in the dev stack).
  files = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/square.png'
        ? new Response(png, { headers: { 'content-type': 'image/png' } })
        : new Response('no', { status: 404 }),
  });
  clock = await stack.syncClock();
  app = createApp({
    orm: stack.h.orm,
    log: () => {},
    now: () => clock,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    storage: stack.storage,
    rateLimiter: stack.h.rateLimiter,
    generate: { url: chatCompletionsUrl(model.url), model: 'test-model' },
    vision: { url: chatCompletionsUrl(model.url), model: 'test-vision' },
    outbound: { allowPrivate: true },
  });
  socket = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => app.handle(req) });

  const o = await makeOrg('TEAM', 'MCP org');
  org.id = o.id;
  org.key = (await makeKey(o.id)).key;
  org.readKey = (await makeKey(o.id, { scopes: ['read'] })).key;
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: o.id,
    platform: 'MASTODON',
    name: 'fake mastodon',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  org.channelId = channel.id;
  const other = await makeOrg('TEAM', 'Another org');
  await makeChannel(other.id, 'X');
  org.otherKey = (await makeKey(other.id)).key;
});

afterAll(async () => {
  await stack?.stop();
  await mastodon?.stop();
  model?.stop();
  files?.stop(true);
  socket?.stop(true);
});

/** A Client over Streamable HTTP, answered by the app in process. */
async function httpClient(key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
    ...(key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
    fetch: (url, init) => app.handle(new Request(String(url), init)),
  });
  await client.connect(transport);
  return client;
}

/** A Client over stdio: `bun mcp/main.ts` bridging to the app on its socket. */
async function stdioClient(key: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['mcp/main.ts'],
    cwd: `${import.meta.dir}/..`,
    env: { PATH: process.env.PATH ?? '', POSTPILOT_API_URL: `http://127.0.0.1:${socket.port}`, POSTPILOT_API_KEY: key },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

async function callOk(client: Client, name: string, args: Json = {}): Promise<Json> {
  const r = (await client.callTool({ name, arguments: args })) as Json;
  if (r.isError) throw new Error(`${name} failed: ${r.content?.[0]?.text}`);
  // The text and the structured content say the same.
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  return r.structuredContent;
}

async function callError(client: Client, name: string, args: Json = {}): Promise<Json> {
  const r = (await client.callTool({ name, arguments: args })) as Json;
  expect({ name, isError: r.isError }).toEqual({ name, isError: true });
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  return r.structuredContent.error;
}

const later = (days: number) => new Date(clock.getTime() + days * DAY).toISOString();

describe('MCP over Streamable HTTP', () => {
  test('lists every tool with a JSON Schema and a description that names its scope', async () => {
    const client = await httpClient(org.key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description).toMatch(/Needs the "(read|publish|generate|approve)" scope\.$/);
    }
    const create = tools.find((t) => t.name === 'create_post')!;
    expect(create.inputSchema.required).toEqual(['content', 'channelIds']);
    expect((create.inputSchema.properties as Json).channelIds).toMatchObject({ type: 'array', minItems: 1, maxItems: 50 });
    await client.close();
  });

  test('every tool, called as an assistant would: the same answers as /v1', async () => {
    const client = await httpClient(org.key);
    clock = await stack.syncClock();
    const me = await callOk(client, 'whoami');
    expect(me.organization.id).toBe(org.id);
    expect(me.key.scopes).toEqual(['read', 'generate', 'publish']);
    const channels = await callOk(client, 'list_channels');
    expect(channels.data).toEqual([expect.objectContaining({ id: org.channelId, platform: 'MASTODON', rules: expect.any(Object) })]);

    // Mastodon reports nothing live: the fixed facts, as create checks them.
    const capabilities = await callOk(client, 'get_channel_capabilities', { id: org.channelId });
    expect(capabilities).toMatchObject({ channelId: org.channelId, platform: 'MASTODON', live: null, liveError: null });
    expect(capabilities.fixed).toMatchObject({ maxChars: 500, followUps: { kind: 'thread', maxItems: 25 } });

    const post = { content: 'Hello from an assistant', channelIds: [org.channelId], publishAt: later(30) };
    const checked = await callOk(client, 'validate_post', post);
    expect(checked).toMatchObject({ valid: true, channels: [{ channelId: org.channelId, characters: 23, maxChars: 500 }] });
    const created = await callOk(client, 'create_post', { ...post, idempotencyKey: 'mcp-create-1' });
    expect(created).toMatchObject({ status: 'scheduled', source: 'api', content: post.content });
    // The same idempotency key and arguments: the first post, not a second one.
    expect((await callOk(client, 'create_post', { ...post, idempotencyKey: 'mcp-create-1' })).id).toBe(created.id);
    const second = await callOk(client, 'create_post', { ...post, content: 'Another one', publishAt: later(31) });

    const page = await callOk(client, 'list_posts', { status: 'scheduled', limit: 1 });
    expect(page.data.map((p: Json) => p.id)).toEqual([second.id]);
    const next = await callOk(client, 'list_posts', { status: 'scheduled', limit: 1, cursor: page.nextCursor });
    expect(next.data.map((p: Json) => p.id)).toEqual([created.id]);
    expect((await callOk(client, 'get_post', { id: created.id })).id).toBe(created.id);
    const edited = await callOk(client, 'update_post', { id: created.id, content: 'Hello, edited' });
    expect(edited.content).toBe('Hello, edited');
    expect(await callOk(client, 'cancel_post', { id: second.id })).toEqual({ id: second.id, deleted: true });
    expect((await callError(client, 'get_post', { id: second.id })).code).toBe('not_found');

    // A post that fails (Mastodon refuses it once), then retried.
    mastodon.failNext(1, { status: 422, body: { error: 'Validation failed: refused' } });
    const failing = await callOk(client, 'create_post', { content: 'This one fails first', channelIds: [org.channelId] });
    expect((await stack.settle(failing.id)).phase).toBe('failed');
    expect((await callOk(client, 'get_post', { id: failing.id })).status).toBe('failed');
    const retried = await callOk(client, 'retry_post', { id: failing.id });
    expect(retried.id).toBe(failing.id);
    await stack.settle(failing.id);
    expect((await callOk(client, 'get_post', { id: failing.id })).status).toBe('published');
    // Its figures: followed from an hour after publishing, nothing read yet.
    const analytics = await callOk(client, 'get_post_analytics', { id: failing.id });
    expect(analytics.postId).toBe(failing.id);
    expect(analytics.channels[0]).toMatchObject({ channelId: org.channelId, status: 'published', history: [], lastReadingAt: null });
    expect(analytics.channels[0].metrics.likes).toBeNull();
    expect(typeof analytics.channels[0].nextReadingAt).toBe('string');
    expect((await callError(client, 'get_post_analytics', { id: second.id })).code).toBe('not_found');

    // Media by URL: fetched through the guard, processed like an upload.
    const media = await callOk(client, 'upload_media_from_url', {
      url: `http://127.0.0.1:${files.port}/square.png`,
      altText: 'a green square',
    });
    expect(media).toMatchObject({ status: 'ready', type: 'image', mimeType: 'image/png', width: 16, height: 12, fileName: 'square.png' });
    expect(media.sizeBytes).toBe(png.length);
    expect((await callOk(client, 'get_media', { id: media.id })).altText).toBe('a green square');
    const missing = await callError(client, 'upload_media_from_url', { url: `http://127.0.0.1:${files.port}/nothing.png` });
    expect(missing).toMatchObject({ code: 'validation_failed', details: { fields: [{ path: 'url', message: 'answered HTTP 404' }] } });

    const drafts = await callOk(client, 'generate_post', {
      prompt: 'Our planner ships',
      channelIds: [org.channelId],
      mediaIds: [media.id],
    });
    expect(drafts.data[0].characters).toBeLessThanOrEqual(500);
    expect(drafts.data[0].content.length).toBeGreaterThan(0);
    expect((await callOk(client, 'generate_alt_text', { mediaId: media.id })).altText).toBe(model.description);

    // A thread: published reply by reply on the Mastodon instance, each item's outcome shown.
    const thread = await callOk(client, 'create_post', {
      content: 'A thread from an assistant',
      channelIds: [org.channelId],
      firstComment: { content: 'The first reply' },
      thread: [{ content: 'The second reply' }],
    });
    await stack.settle(thread.id);
    const threaded = await callOk(client, 'get_post', { id: thread.id });
    expect(threaded.status).toBe('published');
    const items = threaded.channels[0].items;
    expect(items.map((i: Json) => [i.position, i.kind, i.content, i.status])).toEqual([
      [0, 'post', 'A thread from an assistant', 'published'],
      [1, 'reply', 'The first reply', 'published'],
      [2, 'reply', 'The second reply', 'published'],
    ]);
    const status = (id: string) => mastodon.statuses.find((st) => st.id === id)!;
    expect(status(items[1].platformPostId).in_reply_to_id).toBe(items[0].platformPostId);
    expect(status(items[2].platformPostId).in_reply_to_id).toBe(items[1].platformPostId);
    const dropped = await callOk(client, 'update_post', { id: created.id, thread: [{ content: 'later' }] });
    expect(dropped.channels[0].items.map((i: Json) => i.content)).toEqual(['Hello, edited', 'later']);

    // Approval: a key whose posts need it; an approver's key decides through approve_post / reject_post.
    const em = stack.h.orm.em.fork();
    const author = await createApiKey(em, {
      organizationId: org.id,
      name: 'author',
      scopes: ['publish'],
      channels: 'all',
      requiresApproval: true,
    });
    const approver = await createApiKey(em, { organizationId: org.id, name: 'approver', scopes: ['read', 'approve'], channels: 'all' });
    const authorClient = await httpClient(author.key);
    const waiting = await callOk(authorClient, 'create_post', {
      content: 'Waits for a yes',
      channelIds: [org.channelId],
      publishAt: later(40),
    });
    expect(waiting.approval).toMatchObject({ status: 'pending', requestedBy: { type: 'api_key', name: 'author' } });
    expect((await callError(client, 'approve_post', { id: waiting.id })).code).toBe('forbidden_scope');
    const approverClient = await httpClient(approver.key);
    const no = await callOk(approverClient, 'reject_post', { id: waiting.id, comment: 'not this week' });
    expect(no.approval).toMatchObject({ status: 'rejected', comment: 'not this week', decidedBy: { type: 'api_key', name: 'approver' } });
    expect((await callOk(approverClient, 'approve_post', { id: waiting.id })).approval.status).toBe('approved');
    expect((await callError(approverClient, 'approve_post', { id: waiting.id })).code).toBe('conflict');
    // Four eyes: a key that asked for the approval cannot give it, even holding the approve scope.
    const selfApprover = await createApiKey(em, {
      organizationId: org.id,
      name: 'self-approver',
      scopes: ['read', 'publish', 'approve'],
      channels: 'all',
      requiresApproval: true,
    });
    const selfClient = await httpClient(selfApprover.key);
    const own = await callOk(selfClient, 'create_post', { content: 'Mine to approve?', channelIds: [org.channelId], publishAt: later(41) });
    const refused = await callError(selfClient, 'approve_post', { id: own.id });
    expect(refused).toMatchObject({ code: 'forbidden_scope', details: { reason: 'own_post' } });
    expect((await callOk(approverClient, 'approve_post', { id: own.id })).approval.status).toBe('approved');
    await selfClient.close();
    await authorClient.close();
    await approverClient.close();

    // Bad input: the tool error names the field, as /v1's 422 does.
    const invalid = await callError(client, 'create_post', { content: 'x', channelIds: [] });
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.details.fields.map((f: Json) => f.path)).toContain('channelIds');
    await client.close();
  });

  test('comments: a post’s conversation, the inbox and marking one, the same answers as /v1', async () => {
    const client = await httpClient(org.key);
    const post = await callOk(client, 'create_post', { content: 'Talk to me', channelIds: [org.channelId], publishAt: later(50) });
    // A comment under it, as the comments sweep stores one.
    const id = newId('cmt');
    await stack.h.pool.query(
      `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
         author_handle, text, written_at, ours, created_at, updated_at)
       select $1, p.organization_id, p.id, pc.id, pc.channel_id, 'c-1', 'root', 'someone@else.example', 'Hello', now(), false, now(), now()
         from posts p join post_channels pc on pc.post_id = p.id where p.id = $2`,
      [id, post.id],
    );
    const conversation = await callOk(client, 'get_post_comments', { id: post.id });
    expect(conversation).toEqual((await call(app, 'GET', `/v1/posts/${post.id}/comments`, { key: org.key })).body);
    expect(conversation.data.map((c: Json) => [c.id, c.depth])).toEqual([[id, 0]]);
    const inbox = await callOk(client, 'list_inbox', { postId: post.id });
    expect(inbox).toEqual((await call(app, 'GET', `/v1/inbox?postId=${post.id}`, { key: org.key })).body);
    const marked = await callOk(client, 'update_comment', { id, status: 'read' });
    expect(marked).toMatchObject({ id, status: 'read' });
    expect((await callError(client, 'update_comment', { id })).code).toBe('validation_failed');
    expect((await callOk(client, 'list_inbox', { postId: post.id, status: 'unread' })).data).toEqual([]);
    await client.close();
    // The tool is held to the same rule as PATCH /v1/comments/{id} (comments.manage): a contributor's key reads, and is refused the change.
    const contributor = await createUser(stack.h.orm.em.fork(), {
      organizationId: org.id,
      email: `c-${crypto.randomUUID()}@example.com`,
      password: 'long enough',
      role: 'contributor',
    });
    const theirKey = await createApiKey(stack.h.orm.em.fork(), {
      organizationId: org.id,
      name: 'contributor',
      scopes: [...KEY_SCOPES.contributor],
      channels: 'all',
      createdBy: { userId: contributor.id, role: 'contributor' },
    });
    const theirs = await httpClient(theirKey.key);
    expect((await callOk(theirs, 'list_inbox', { postId: post.id })).data.map((c: Json) => c.id)).toEqual([id]);
    expect(await callError(theirs, 'update_comment', { id, status: 'unread' })).toMatchObject({
      code: 'forbidden_scope',
      details: { action: 'comments.manage', role: 'contributor' },
    });
    // A contributor may answer: the reply waits for approval, as through POST /v1/comments/{id}/reply.
    const waiting = await callOk(theirs, 'reply_to_comment', { id, content: 'Thanks!', idempotencyKey: 'mcp-reply' });
    expect(waiting).toMatchObject({ commentId: id, content: 'Thanks!', status: 'pending_approval' });
    expect((await callOk(theirs, 'reply_to_comment', { id, content: 'Thanks!', idempotencyKey: 'mcp-reply' })).id).toBe(waiting.id);
    expect(await callOk(theirs, 'get_reply', { id: waiting.id })).toEqual(
      (await call(app, 'GET', `/v1/replies/${waiting.id}`, { key: theirKey.key })).body,
    );
    expect((await callError(theirs, 'reply_to_comment', { id, content: '  ' })).code).toBe('validation_failed');
    await theirs.close();
  });

  test('drafts: kept, listed and scheduled into one post with one key, the same answers as /v1', async () => {
    const client = await httpClient(org.key);
    const draft = await callOk(client, 'create_draft', { content: 'Draft from an assistant', channelIds: [org.channelId] });
    expect(draft).toMatchObject({ status: 'draft', content: 'Draft from an assistant', channelIds: [org.channelId] });
    expect(draft).toEqual((await call(app, 'GET', `/v1/drafts/${draft.id}`, { key: org.key })).body);
    const post = await callOk(client, 'schedule_draft', { id: draft.id, publishAt: later(40), idempotencyKey: 'mcp-draft' });
    expect(post).toMatchObject({ status: 'scheduled', content: 'Draft from an assistant' });
    expect((await callOk(client, 'schedule_draft', { id: draft.id, publishAt: later(40), idempotencyKey: 'mcp-draft' })).id).toBe(post.id);
    const scheduled = await callOk(client, 'list_drafts', { status: 'scheduled' });
    expect(scheduled.data.find((d: Json) => d.id === draft.id)).toMatchObject({ postId: post.id });
    expect((await callError(client, 'schedule_draft', { id: draft.id, publishAt: later(41) })).code).toBe('conflict');
    await client.close();
  });

  test('tags: made and listed, put on a post by create_post and update_post, a post and a draft listed by their tag; the same answers as /v1', async () => {
    const client = await httpClient(org.key);
    const tag = await callOk(client, 'create_tag', { name: 'Assistant campaign', colour: '#AA00FF' });
    expect(tag).toMatchObject({ name: 'Assistant campaign', colour: '#aa00ff' });
    expect(tag).toEqual((await call(app, 'GET', `/v1/tags/${tag.id}`, { key: org.key })).body);
    expect((await callError(client, 'create_tag', { name: 'assistant CAMPAIGN' })).details).toEqual({ tagId: tag.id });
    expect((await callOk(client, 'list_tags')).data).toEqual((await call(app, 'GET', '/v1/tags', { key: org.key })).body.data);
    const made = await callOk(client, 'create_post', {
      content: 'Tagged by an assistant',
      channelIds: [org.channelId],
      publishAt: later(45),
      tagIds: [tag.id],
    });
    expect(made.tagIds).toEqual([tag.id]);
    expect((await callError(client, 'create_post', { content: 'x', channelIds: [org.channelId], tagIds: ['tag_nope'] })).details).toEqual({
      fields: [{ path: 'tagIds', message: 'unknown tag tag_nope' }],
    });
    const listed = await callOk(client, 'list_posts', { tagId: tag.id });
    expect(listed.data.map((p: Json) => p.id)).toEqual([made.id]);
    expect((await callOk(client, 'update_post', { id: made.id, tagIds: [] })).tagIds).toEqual([]);
    expect((await callOk(client, 'list_posts', { tagId: tag.id })).data).toEqual([]);
    // list_drafts narrows to a tag's drafts as GET /v1/drafts?tagId= does.
    const tagged = await callOk(client, 'create_draft', { content: 'Tagged draft', tagIds: [tag.id] });
    await callOk(client, 'create_draft', { content: 'Untagged draft' });
    const drafts = await callOk(client, 'list_drafts', { tagId: tag.id });
    expect(drafts.data.map((d: Json) => d.id)).toEqual([tagged.id]);
    expect(drafts).toEqual((await call(app, 'GET', `/v1/drafts?tagId=${tag.id}`, { key: org.key })).body);
    // Making a tag needs the publish scope, as POST /v1/tags does.
    await client.close();
    const reader = await httpClient(org.readKey);
    expect((await callError(reader, 'create_tag', { name: 'not mine to make' })).code).toBe('forbidden_scope');
    await reader.close();
  });

  test('a key without the scope gets forbidden_scope as a tool error; reading still works', async () => {
    const client = await httpClient(org.readKey);
    expect((await callOk(client, 'whoami')).key.scopes).toEqual(['read']);
    for (const [name, args, scope] of [
      ['create_post', { content: 'x', channelIds: [org.channelId] }, 'publish'],
      ['validate_post', { content: 'x', channelIds: [org.channelId] }, 'publish'],
      ['cancel_post', { id: 'post_x' }, 'publish'],
      ['upload_media_from_url', { url: 'http://127.0.0.1/x.png' }, 'publish'],
      ['generate_post', { prompt: 'x', channelIds: [org.channelId] }, 'generate'],
    ] as const) {
      const error = await callError(client, name, args);
      expect({ name, code: error.code, requiredScope: error.details?.requiredScope }).toEqual({
        name,
        code: 'forbidden_scope',
        requiredScope: scope,
      });
    }
    await client.close();
  });

  test('a key of another organization sees nothing of this one', async () => {
    const mine = await httpClient(org.key);
    clock = await stack.syncClock();
    const post = await callOk(mine, 'create_post', { content: 'Only ours', channelIds: [org.channelId], publishAt: later(40) });
    const media = (await callOk(mine, 'upload_media_from_url', { url: `http://127.0.0.1:${files.port}/square.png` })).id;
    const theirs = await httpClient(org.otherKey);
    expect((await callOk(theirs, 'list_channels')).data.map((c: Json) => c.platform)).toEqual(['X']);
    expect((await callOk(theirs, 'list_posts')).data).toEqual([]);
    expect((await callError(theirs, 'get_post', { id: post.id })).code).toBe('not_found');
    expect((await callError(theirs, 'update_post', { id: post.id, content: 'hijack' })).code).toBe('not_found');
    expect((await callError(theirs, 'cancel_post', { id: post.id })).code).toBe('not_found');
    expect((await callError(theirs, 'get_media', { id: media })).code).toBe('not_found');
    const foreign = await callError(theirs, 'create_post', { content: 'x', channelIds: [org.channelId] });
    expect(foreign.details.fields).toEqual([{ path: 'channelIds', message: `unknown channel ${org.channelId}` }]);
    expect((await callOk(mine, 'get_post', { id: post.id })).content).toBe('Only ours');
    await Promise.all([mine.close(), theirs.close()]);
  });

  test('the key is checked like /v1: 401 without one, rate-limit headers and the quota counted per request; GET is 405', async () => {
    await expect(httpClient(undefined)).rejects.toThrow(/unauthorized/);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const post = (key: string) =>
      app.handle(
        new Request('http://localhost/mcp', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify(init),
        }),
      );
    const res = await post(org.key);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('300');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('mcp-session-id')).toBeNull(); // stateless
    expect(((await res.json()) as Json).result.serverInfo.name).toBe('postpilot');
    const client = await httpClient(org.key);
    const used = (await callOk(client, 'whoami')).quota.usedThisMonth;
    expect((await callOk(client, 'whoami')).quota.usedThisMonth).toBe(used + 1);
    await client.close();
    const bad = await post('sk_live_not_a_real_key_0000000000000000');
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as Json).error.code).toBe('unauthorized');
    const get = await app.handle(new Request('http://localhost/mcp', { headers: { authorization: `Bearer ${org.key}` } }));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('MCP over stdio (bun mcp/main.ts)', () => {
  test('the same tools, answers and scope errors through the bridge', async () => {
    const client = await stdioClient(org.key);
    clock = await stack.syncClock();
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect((await callOk(client, 'whoami')).organization.id).toBe(org.id);
    const created = await callOk(client, 'create_post', { content: 'Over stdio', channelIds: [org.channelId], publishAt: later(50) });
    expect((await callOk(client, 'get_post', { id: created.id })).content).toBe('Over stdio');
    await client.close();

    const reader = await stdioClient(org.readKey);
    expect((await callError(reader, 'create_post', { content: 'x', channelIds: [org.channelId] })).code).toBe('forbidden_scope');
    await reader.close();

    const stranger = await stdioClient(org.otherKey);
    expect((await callError(stranger, 'get_post', { id: created.id })).code).toBe('not_found');
    await stranger.close();
  });

  test('a key the API refuses: the assistant is told why (our error code)', async () => {
    await expect(stdioClient('sk_live_not_a_real_key_0000000000000000')).rejects.toThrow(/unauthorized/);
  });
});
