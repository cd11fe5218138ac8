// Who may do what, generated from the app's own description of itself: every /v1 operation of the
// OpenAPI document is tried by every kind of principal — a key of another organization, a key
// lacking the operation's scope, a key made by a member of each role, a revoked key and an expired
// one — and answers as its `x-required-scope`, its `x-action` and domain/access.ts say, with the
// admission cache on (as the API runs). Every refusal leaves organization A's rows as they were
// (row counts and a digest per table). In the web app (whose route × role table is
// test/web-roles.test.ts's), a member of another organization gets 404 for every route naming A's
// ids, and a preview link signed with the service's key but naming rows that disagree is not found.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Pool } from 'pg';
import { ACCESS, can, isAction, KEY_SCOPES, ROLES, scopeOf, type Action, type MemberPrincipal, type Role } from '../domain/access.ts';
import { addChannel } from '../domain/channels.ts';
import { invite } from '../domain/invitations.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { sharePreviewLink, signPreviewLink, type PreviewGrant } from '../domain/posts/preview-links.ts';
import { chatCompletionsUrl } from '../lib/config.ts';
import { SCOPES, type Scope } from '../lib/scopes.ts';
import { createApiKey, revokeApiKey } from '../services/api-keys.ts';
import { createRateLimiterPool, type RateLimiter } from '../services/rate-limit.ts';
import { createProcessCaches, type ProcessCaches } from '../server/caches.ts';
import { createUser } from '../services/users.ts';
import { startEventReceiver } from './fakes/event-receiver.ts';
import { feedItem, startFeedServer, type FeedServer } from './fakes/feed-server.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai.ts';
import { harness } from './harness/index.ts';
import { call, makeKey, makeOrg, readyMedia, type CallResult } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

const HOUR = 3_600_000;
const PASSWORD = 'long enough';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let limiterPool: Pool;
let rateLimiter: RateLimiter;
let caches: ProcessCaches;
let mastodon: FakeMastodon;
let receiver: ReturnType<typeof startEventReceiver>;
let feeds: FeedServer;
let openai: FakeOpenAI;
let clock: number;

/** The ids a request names: A's real ones, or ids of the same shape that never existed. */
interface Ids {
  post: string;
  media: string;
  channel: string;
  series: string;
  feed: string;
  webhook: string;
  delivery: string;
  comment: string;
  reply: string;
  tag: string;
  draft: string;
}

interface Org {
  id: string;
  ids: Ids;
  /** Every id of the organization's rows, to look for in another organization's answers. */
  all: string[];
}

/** Organization A: ENTERPRISE, with a row of each kind, a member of each role and their keys. */
let A: Org & {
  users: Record<Role, string>;
  emails: Record<Role, string>;
  roleKeys: Record<Role, string>;
  /** CLI keys, each with every scope but one. */
  lacking: Record<Scope, string>;
  cliKey: { id: string; key: string };
  link: string;
  invitation: string;
};
/** Organization B: an owner signed in to the web app, and a key that owner made with every scope. */
let B: Org & { key: string; browser: Browser; link: string };

/**
 * Who may call each operation, written out: a change of an operation's action (and so of the
 * roles and the scope it needs) is made here too, on purpose; the expectations below are then
 * derived from domain/access.ts.
 */
const OPERATION_ACTIONS: Partial<Record<Action, string[]>> = {
  read: [
    'getMe',
    'getKeyMember',
    'listChannels',
    'getChannelCapabilities',
    'listPosts',
    'getPost',
    'getPostAnalytics',
    'getAnalytics',
    'getBestTimes',
    'exportPosts',
    'getMedia',
    'getQueue',
    'listSeries',
    'getSeries',
    'listFeeds',
    'getFeed',
    'listFeedItems',
    'listPostComments',
    'listInbox',
    'getComment',
    'listCommentReplies',
    'getReply',
    'listTags',
    'getTag',
    'listDrafts',
    'getDraft',
  ],
  'comments.reply': ['replyToComment'],
  'comments.manage': ['updateComment', 'hideComment', 'unhideComment', 'deleteReply'],
  'posts.write': [
    'createPost',
    'validatePost',
    'updatePost',
    'createPostsInBulk',
    'importPosts',
    'refreshPostAnalytics',
    'refreshPostComments',
    'createDraft',
    'updateDraft',
    'deleteDraft',
    'validateDraft',
    'scheduleDraft',
  ],
  'posts.publish': ['deletePost', 'retryPost'],
  'posts.approve': ['approvePost', 'rejectPost', 'approveReply', 'rejectReply'],
  'media.write': ['createUpload', 'completeUpload'],
  'queues.write': ['setQueue'],
  'series.write': ['createSeries', 'updateSeries', 'deleteSeries'],
  'feeds.write': ['createFeed', 'updateFeed', 'deleteFeed', 'pollFeed'],
  'tags.manage': ['createTag', 'updateTag', 'deleteTag'],
  'webhooks.manage': ['createWebhook', 'updateWebhook', 'deleteWebhook', 'rotateWebhookSecret', 'testWebhook', 'redeliverWebhook'],
  'webhooks.read': ['listWebhooks', 'getWebhook', 'listWebhookDeliveries'],
  'audit.read': ['listAuditEvents'],
  'posts.generate': ['generatePost', 'generateAltText'],
};

const later = (hours: number) => new Date(clock + hours * HOUR).toISOString();
/** An id of the same shape as `id` that names nothing. */
const never = (id: string) => id.replace(/_([0-9a-z]+)$/i, (_, s: string) => `_${'0'.repeat(s.length)}`);
const neverIds = (ids: Ids): Ids => Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, never(v)])) as unknown as Ids;

// ---------------------------------------------------------------------------------------------
// Fingerprints: the rows of an organization, per table, as `count:md5`.

/** Each table holding an organization's rows, and how its rows are found. */
const SCOPED: Record<string, string> = {
  organizations: 'id = $1',
  users: 'organization_id = $1',
  memberships: 'organization_id = $1',
  invitations: 'organization_id = $1',
  api_keys: 'organization_id = $1',
  channels: 'organization_id = $1',
  queue_slots: 'channel_id in (select id from channels where organization_id = $1)',
  posts: 'organization_id = $1',
  post_channels: 'post_id in (select id from posts where organization_id = $1)',
  post_channel_items:
    'post_channel_id in (select pc.id from post_channels pc join posts p on p.id = pc.post_id where p.organization_id = $1)',
  media_items: 'organization_id = $1',
  series: 'organization_id = $1',
  feeds: 'organization_id = $1',
  tags: 'organization_id = $1',
  post_tags: 'post_id in (select id from posts where organization_id = $1)',
  feed_items: 'feed_id in (select id from feeds where organization_id = $1)',
  webhook_endpoints: 'organization_id = $1',
  webhook_events: 'organization_id = $1',
  webhook_deliveries: 'endpoint_id in (select id from webhook_endpoints where organization_id = $1)',
  preview_links: 'organization_id = $1',
  comments: 'organization_id = $1',
  comment_replies: 'organization_id = $1',
  drafts: 'organization_id = $1',
  audit_events: 'organization_id = $1',
};
/** Columns that change on use, not by a request's effect: a key's last use is stamped when it is admitted. */
const VOLATILE: Record<string, string[]> = { api_keys: ['last_used_at'] };

async function fingerprint(organizationId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [table, where] of Object.entries(SCOPED)) {
    const { rows } = await stack.h.pool.query<{ n: number; digest: string }>(
      `select count(*)::int as n, md5(coalesce(string_agg(r::text, '|' order by r::text), '')) as digest
         from (select to_jsonb(t) - $2::text[] as r from ${table} t where ${where}) s`,
      [organizationId, VOLATILE[table] ?? []],
    );
    out[table] = `${rows[0]!.n}:${rows[0]!.digest}`;
  }
  return out;
}

/** Waits until nothing of the organization moves any more (workflows and deliveries started by its fixtures). */
async function settled(organizationId: string): Promise<Record<string, string>> {
  let last = await fingerprint(organizationId);
  for (let i = 0; i < 50; i++) {
    await Bun.sleep(100);
    const now = await fingerprint(organizationId);
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error(`the rows of ${organizationId} keep changing`);
}

// ---------------------------------------------------------------------------------------------
// The operations, read from the document.

interface Operation {
  operationId: string;
  method: string;
  /** The document's path template, under /v1. */
  path: string;
  scope: Scope;
  action: Action;
  hasBody: boolean;
  /** What the document says of it, as it says it. */
  said: { action: unknown; scope: unknown; roles: unknown };
}

let ops: Operation[];

/** The API's routes without a document entry of their own: the document and its page. */
const UNDOCUMENTED = ['GET /v1/openapi.json', 'GET /v1/docs'];

async function readOperations(): Promise<Operation[]> {
  const res = await call(stack.app, 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  const paths = res.body.paths as Record<string, Record<string, Record<string, unknown>>>;
  return Object.entries(paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => ({
      operationId: op.operationId as string,
      method: method.toUpperCase(),
      path,
      scope: op['x-required-scope'] as Scope,
      action: op['x-action'] as Action,
      hasBody: op.requestBody !== undefined,
      said: { action: op['x-action'], scope: op['x-required-scope'], roles: op['x-roles'] },
    })),
  );
}

/** The path's parameters, by the collection they name. */
const PATH_IDS: Record<string, keyof Ids> = {
  posts: 'post',
  media: 'media',
  channels: 'channel',
  series: 'series',
  feeds: 'feed',
  webhooks: 'webhook',
  comments: 'comment',
  replies: 'reply',
  tags: 'tag',
  drafts: 'draft',
};

function pathOf(op: Operation, ids: Ids): string {
  const collection = op.path.split('/')[1]!;
  return `/v1${op.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    if (name === 'deliveryId') return ids.delivery;
    const which = name === 'id' ? PATH_IDS[collection] : undefined;
    if (!which) throw new Error(`${op.operationId}: no id of A's for {${name}} under /${collection}; add it to PATH_IDS`);
    return ids[which];
  })}`;
}

type Req = { body?: unknown; rawBody?: string; headers?: Record<string, string> };

/** A body each operation's schema accepts, naming `ids`: the access check, not validation, decides. */
const BODIES: Record<string, (r: Ids) => Req> = {
  createPost: (r) => ({ body: { content: 'matrix post', channelIds: [r.channel], publishAt: later(72), tagIds: [r.tag] } }),
  validatePost: (r) => ({ body: { content: 'matrix post', channelIds: [r.channel], publishAt: later(72) } }),
  createPostsInBulk: (r) => ({ body: { posts: [{ content: 'matrix bulk', channelIds: [r.channel], publishAt: later(73) }] } }),
  importPosts: (r) => ({
    rawBody: `content,channels,publishAt\nmatrix import,${r.channel},${later(74)}\n`,
    headers: { 'content-type': 'text/csv' },
  }),
  updatePost: (r) => ({ body: { content: 'matrix edit', mediaIds: [r.media], tagIds: [r.tag] } }),
  approvePost: () => ({ body: { comment: 'matrix' } }),
  rejectPost: () => ({ body: { comment: 'matrix' } }),
  createUpload: () => ({ body: { fileName: 'matrix.png', mimeType: 'image/png', fileSize: 10 } }),
  setQueue: () => ({ body: { slots: [] } }),
  createSeries: (r) => ({
    body: { content: 'matrix series', channelIds: [r.channel], publishAt: later(24 * 40), repeat: { every: 'week', count: 2 } },
  }),
  updateSeries: () => ({ body: { content: 'matrix series edit' } }),
  createFeed: (r) => ({ body: { url: feeds.url, channelIds: [r.channel] } }),
  updateFeed: () => ({ body: { name: 'matrix feed' } }),
  // A name of its own each time: a second tag of one name is a conflict, whoever asks.
  createTag: () => ({ body: { name: `matrix tag ${crypto.randomUUID().slice(0, 8)}` } }),
  updateTag: () => ({ body: { colour: '#123456' } }),
  updateComment: () => ({ body: { status: 'read' } }),
  replyToComment: () => ({ body: { content: 'matrix reply' } }),
  createDraft: (r) => ({ body: { content: 'matrix draft', channelIds: [r.channel] } }),
  updateDraft: () => ({ body: { content: 'matrix draft edit' } }),
  validateDraft: () => ({ body: { publishAt: later(75) } }),
  scheduleDraft: () => ({ body: { publishAt: later(76) } }),
  approveReply: () => ({ body: { comment: 'matrix' } }),
  rejectReply: () => ({ body: { comment: 'matrix' } }),
  createWebhook: () => ({ body: { url: `http://127.0.0.1:${receiver.port}/matrix`, events: ['webhook.test'] } }),
  updateWebhook: () => ({ body: { enabled: false } }),
  generatePost: (r) => ({ body: { prompt: 'matrix', channelIds: [r.channel], mediaIds: [r.media] } }),
  generateAltText: (r) => ({ body: { mediaId: r.media } }),
};

function send(op: Operation, key: string, ids: Ids): Promise<CallResult> {
  const make = BODIES[op.operationId];
  if (op.hasBody && !make) throw new Error(`${op.operationId} takes a body: add one to BODIES`);
  return call(stack.app, op.method, pathOf(op, ids), { key, ...(make ? make(ids) : {}) });
}

const label = (op: Operation) => `${op.operationId} (${op.method} ${op.path})`;
const brief = (r: CallResult) => `${r.status} ${JSON.stringify(r.body?.error ?? r.body).slice(0, 160)}`;

// ---------------------------------------------------------------------------------------------
// Fixtures.

/** A member as a principal, for the domain calls that take one (sharing a link, inviting). */
const member = (organizationId: string, userId: string, role: Role): MemberPrincipal => ({
  type: 'member',
  organizationId,
  userId,
  name: role,
  role,
});

async function organizationA(): Promise<typeof A> {
  const h = stack.h;
  const em = () => h.orm.em.fork();
  const org = await makeOrg('ENTERPRISE', 'Matrix A');
  await setApprovalSettings(em(), org.id, { previewDecisions: true });
  const channel = await addChannel(em(), h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'A news',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  const cliKey = await makeKey(org.id, { scopes: [...SCOPES], name: 'cli' });
  const tag = await call(stack.app, 'POST', '/v1/tags', { key: cliKey.key, body: { name: 'A campaign' } });
  expect(tag.status).toBe(201);
  // The post waits for approval: its author's key asks for it, and a member may share a deciding link.
  const author = await createApiKey(em(), {
    organizationId: org.id,
    name: 'author',
    scopes: ['read', 'publish'],
    channels: 'all',
    requiresApproval: true,
  });
  const post = await call(stack.app, 'POST', '/v1/posts', {
    key: author.key,
    body: {
      content: 'A scheduled post',
      channelIds: [channel.id],
      publishAt: later(48),
      thread: [{ content: 'A reply' }],
      tagIds: [tag.body.id],
    },
  });
  expect(post.status).toBe(201);
  expect(post.body.approval?.status).toBe('pending');
  const media = await readyMedia(stack.storage!, org.id);
  const queue = await call(stack.app, 'PUT', `/v1/channels/${channel.id}/queue`, {
    key: cliKey.key,
    body: { slots: [{ weekday: 'monday', time: '09:00' }] },
  });
  expect(queue.status).toBe(200);
  const series = await call(stack.app, 'POST', '/v1/series', {
    key: cliKey.key,
    body: { content: 'A series', channelIds: [channel.id], publishAt: later(24 * 30), repeat: { every: 'week', count: 3 } },
  });
  expect(series.status).toBe(201);
  const feed = await call(stack.app, 'POST', '/v1/feeds', { key: cliKey.key, body: { url: feeds.url, channelIds: [channel.id] } });
  expect(feed.status).toBe(201);
  // An endpoint that hears only test events, delivered once to a receiver that accepts them: nothing of it moves later.
  const hook = await call(stack.app, 'POST', '/v1/webhooks', {
    key: cliKey.key,
    body: { url: `http://127.0.0.1:${receiver.port}/a`, events: ['webhook.test'] },
  });
  expect(hook.status).toBe(201);
  const webhook = hook.body.endpoint.id as string;
  const sent = await call(stack.app, 'POST', `/v1/webhooks/${webhook}/test`, { key: cliKey.key });
  expect(sent.status).toBe(202);
  const delivery = sent.body.deliveryId as string;
  for (let i = 0; ; i++) {
    const list = await call(stack.app, 'GET', `/v1/webhooks/${webhook}/deliveries`, { key: cliKey.key });
    if (list.body.data.find((d: { id: string; status: string }) => d.id === delivery)?.status === 'delivered') break;
    if (i > 200) throw new Error('the test event was not delivered');
    await Bun.sleep(25);
  }

  const users = {} as Record<Role, string>;
  const emails = {} as Record<Role, string>;
  const roleKeys = {} as Record<Role, string>;
  const keyIds: string[] = [];
  for (const role of ROLES) {
    emails[role] = `a-${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
    users[role] = (await createUser(em(), { organizationId: org.id, email: emails[role], password: PASSWORD, role })).id;
    const made = await createApiKey(em(), {
      organizationId: org.id,
      name: role,
      scopes: [...KEY_SCOPES[role]],
      channels: 'all',
      createdBy: { userId: users[role], role },
    });
    roleKeys[role] = made.key;
    keyIds.push(made.id);
  }
  const lacking = {} as Record<Scope, string>;
  for (const scope of SCOPES) {
    const made = await makeKey(org.id, { scopes: SCOPES.filter((s) => s !== scope), name: `without ${scope}` });
    lacking[scope] = made.key;
    keyIds.push(made.id);
  }
  const { link } = await sharePreviewLink(em(), h.credentialsKey, member(org.id, users.editor, 'editor'), {
    postId: post.body.id,
    days: 7,
    decide: true,
    now: new Date(clock),
  });
  expect(link.decide).toBe(true);
  const { invitation } = await invite(
    em(),
    org.id,
    member(org.id, users.owner, 'owner'),
    { email: `invitee-${crypto.randomUUID().slice(0, 8)}@example.com`, role: 'viewer' },
    new Date(clock),
  );
  // A comment someone wrote under A's post (as the comments sweep stores one).
  const comment = `cmt_${crypto.randomUUID().replaceAll('-', '').slice(0, 26)}`;
  await h.pool.query(
    `insert into comments (id, organization_id, post_id, post_channel_id, channel_id, platform_comment_id, parent_platform_id,
       author_handle, text, written_at, ours, created_at, updated_at)
     select $1, $2, pc.post_id, pc.id, pc.channel_id, 'c-1', 'p-1', 'someone@else.example', 'A comment', now(), false, now(), now()
       from post_channels pc where pc.post_id = $3`,
    [comment, org.id, post.body.id],
  );
  // A reply of the author's waiting for approval under it (as POST /v1/comments/{id}/reply writes one).
  const reply = `rpl_${crypto.randomUUID().replaceAll('-', '').slice(0, 26)}`;
  await h.pool.query(
    `insert into comment_replies (id, organization_id, comment_id, channel_id, content, status, approval, created_by, workflow_pending,
       created_at, updated_at)
     values ($1, $2, $3, $4, 'A reply', 'pending_approval', $5, $6, false, now(), now())`,
    [
      reply,
      org.id,
      comment,
      channel.id,
      JSON.stringify({ ...post.body.approval }),
      JSON.stringify({ type: 'api_key', id: author.id, name: 'author' }),
    ],
  );
  const draft = await call(stack.app, 'POST', '/v1/drafts', {
    key: cliKey.key,
    body: { content: 'A draft', channelIds: [channel.id] },
  });
  expect(draft.status).toBe(201);
  const ids: Ids = {
    post: post.body.id,
    media,
    channel: channel.id,
    series: series.body.id,
    feed: feed.body.id,
    webhook,
    delivery,
    comment,
    reply,
    tag: tag.body.id,
    draft: draft.body.id,
  };
  return {
    id: org.id,
    ids,
    all: [org.id, ...Object.values(ids), ...Object.values(users), ...keyIds, cliKey.id, author.id, link.id, invitation.id],
    users,
    emails,
    roleKeys,
    lacking,
    cliKey,
    link: link.id,
    invitation: invitation.id,
  };
}

async function organizationB(): Promise<typeof B> {
  const h = stack.h;
  const em = () => h.orm.em.fork();
  const { browser, org, user } = await signedInUser(stack.app, { role: 'owner', plan: 'ENTERPRISE' });
  const key = await createApiKey(em(), {
    organizationId: org.id,
    name: 'B owner',
    scopes: [...SCOPES],
    channels: 'all',
    createdBy: { userId: user.id, role: 'owner' },
  });
  const channel = await addChannel(em(), h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'B news',
    credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
  });
  const post = await call(stack.app, 'POST', '/v1/posts', {
    key: key.key,
    body: { content: 'B scheduled post', channelIds: [channel.id], publishAt: later(50) },
  });
  expect(post.status).toBe(201);
  const { link } = await sharePreviewLink(em(), h.credentialsKey, member(org.id, user.id, 'owner'), {
    postId: post.body.id,
    days: 7,
    decide: false,
    now: new Date(clock),
  });
  const ids = {
    post: post.body.id,
    media: '',
    channel: channel.id,
    series: '',
    feed: '',
    webhook: '',
    delivery: '',
    comment: '',
    reply: '',
    tag: '',
    draft: '',
  };
  return { id: org.id, ids, all: [org.id, post.body.id, channel.id, link.id, key.id, user.id], key: key.key, browser, link: link.id };
}

beforeAll(async () => {
  const h = await harness();
  // The caches on, as server/run.ts builds them: refusals must hold when keys are admitted from memory.
  limiterPool = createRateLimiterPool(h.databaseUrl, () => {});
  caches = createProcessCaches({ connectionString: h.databaseUrl, pool: limiterPool, admission: true, pages: true });
  rateLimiter = caches.rateLimiter;
  await caches.ready;
  mastodon = await startFakeMastodon();
  receiver = startEventReceiver();
  feeds = startFeedServer([feedItem(1), feedItem(2)]);
  openai = startFakeOpenAI({ apiKey: 'gen-key', behaviour: 'fits' });
  stack = await startPostStack({
    publicBaseUrl: 'http://localhost',
    storage: 'disk',
    appDeps: {
      rateLimiter,
      ...(caches.postPages ? { postPages: caches.postPages } : {}),
      outbound: { allowPrivate: true },
      generate: { url: chatCompletionsUrl(openai.url), model: 'test-model', apiKey: 'gen-key', timeoutMs: 2000 },
      vision: { url: chatCompletionsUrl(openai.url), model: 'test-vision', apiKey: 'gen-key' },
    },
  });
  clock = (await stack.syncClock()).getTime();
  A = await organizationA();
  B = await organizationB();
  ops = await readOperations();
  await settled(A.id);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await caches?.close();
  await limiterPool?.end();
  await mastodon?.stop();
  receiver?.stop();
  feeds?.stop();
  openai?.stop();
});

// ---------------------------------------------------------------------------------------------

describe('the API: every operation × every principal', () => {
  test('the document lists every /v1 route, each with an action of domain/access.ts; A has rows in every table watched', async () => {
    expect(rateLimiter.cache!.listening()).toBe(true);
    const empty = Object.entries(await fingerprint(A.id)).filter(([, v]) => v.startsWith('0:'));
    expect(empty).toEqual([]);
    expect(ops.length).toBeGreaterThan(45);
    // An operation without an action of domain/access.ts has no entry in the table: it fails here.
    const unnamed = ops.filter((o) => !isAction(o.said.action)).map((o) => o.operationId);
    expect(unnamed).toEqual([]);
    const written = Object.fromEntries(Object.entries(OPERATION_ACTIONS).flatMap(([a, ids]) => ids!.map((id) => [id, a])));
    expect(Object.fromEntries(ops.map((o) => [o.operationId, o.said.action]))).toEqual(written);
    for (const o of ops)
      expect({ op: o.operationId, ...o.said }).toEqual({
        op: o.operationId,
        action: o.action,
        scope: scopeOf(o.action),
        roles: ACCESS[o.action].roles,
      });
    const routes = (stack.app.routes as { method: string; path: string }[])
      .filter((r) => r.path.startsWith('/v1/'))
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => !UNDOCUMENTED.includes(r));
    const documented = ops.map((o) => `${o.method} /v1${o.path.replace(/\{([A-Za-z]+)\}/g, ':$1')}`);
    expect(documented.sort()).toEqual([...new Set(routes)].sort());
  });

  test('a key of another organization: A’s ids are unknown ids (404, as for ids that never existed); nothing of A changes or shows', async () => {
    const before = await fingerprint(A.id);
    const wrong: string[] = [];
    let tried = 0;
    for (const op of ops) {
      tried++;
      const real = await send(op, B.key, A.ids);
      const twin = await send(op, B.key, neverIds(A.ids));
      const sent = JSON.stringify([pathOf(op, A.ids), BODIES[op.operationId]?.(A.ids) ?? null]);
      const hasId = op.path.includes('{');
      if (hasId && (real.status !== 404 || real.body?.error?.code !== 'not_found')) wrong.push(`${label(op)}: ${brief(real)}`);
      if (!hasId && real.status >= 500) wrong.push(`${label(op)}: ${brief(real)}`);
      // The same answer as for ids that never existed: nothing tells that A's exist.
      if (real.status !== twin.status) wrong.push(`${label(op)}: ${real.status} for A's ids, ${twin.status} for unknown ones`);
      else if (real.status >= 400) {
        let text = JSON.stringify(real.body);
        for (const id of Object.values(A.ids)) text = text.replaceAll(id, never(id));
        if (text !== JSON.stringify(twin.body)) wrong.push(`${label(op)}: ${JSON.stringify(real.body)} ≠ ${JSON.stringify(twin.body)}`);
      }
      // Nothing of A's in the answer but what the request itself named.
      const answer = JSON.stringify(real.body);
      for (const id of A.all) if (answer.includes(id) && !sent.includes(id)) wrong.push(`${label(op)}: the answer shows ${id} of A`);
    }
    expect(wrong).toEqual([]);
    expect(tried).toBe(ops.length);
    expect(await fingerprint(A.id)).toEqual(before);
  });

  test('a key of A lacking the operation’s scope: 403 forbidden_scope naming it; nothing changes', async () => {
    const before = await fingerprint(A.id);
    const wrong: string[] = [];
    let tried = 0;
    for (const op of ops) {
      tried++;
      const r = await send(op, A.lacking[op.scope], A.ids);
      if (
        r.status !== 403 ||
        r.body?.error?.code !== 'forbidden_scope' ||
        JSON.stringify(r.body.error.details) !== JSON.stringify({ requiredScope: op.scope })
      )
        wrong.push(`${label(op)}: ${brief(r)}`);
    }
    expect(wrong).toEqual([]);
    expect(tried).toBe(ops.length);
    expect(await fingerprint(A.id)).toEqual(before);
  });

  /** Every operation answers the key 401, and nothing of A changes. */
  async function expectUnauthorizedEverywhere(key: string) {
    const before = await fingerprint(A.id);
    const wrong: string[] = [];
    let tried = 0;
    for (const op of ops) {
      tried++;
      const r = await send(op, key, A.ids);
      if (r.status !== 401 || r.body?.error?.code !== 'unauthorized') wrong.push(`${label(op)}: ${brief(r)}`);
    }
    expect(wrong).toEqual([]);
    expect(tried).toBe(ops.length);
    expect(await fingerprint(A.id)).toEqual(before);
  }

  test('a revoked key of A (admitted from memory before it was revoked): 401 everywhere; nothing changes', async () => {
    const h = stack.h;
    const made = await makeKey(A.id, { scopes: [...SCOPES], name: 'to revoke' });
    expect((await call(stack.app, 'GET', '/v1/me', { key: made.key })).status).toBe(200);
    await revokeApiKey(h.orm.em.fork(), made.id);
    await expectUnauthorizedEverywhere(made.key);
  });

  test('a key of A expired by another process (the cache hears it through NOTIFY): 401 everywhere; nothing changes', async () => {
    const made = await makeKey(A.id, { scopes: [...SCOPES], name: 'to expire' });
    expect((await call(stack.app, 'GET', '/v1/me', { key: made.key })).status).toBe(200);
    await stack.h.pool.query(`update api_keys set expires_at = '2001-01-01T00:00:00Z' where id = $1`, [made.id]);
    const deadline = Date.now() + 5000;
    while ((await call(stack.app, 'GET', '/v1/me', { key: made.key })).status !== 401) {
      if (Date.now() > deadline) throw new Error('the expired key is still admitted after 5 s');
      await Bun.sleep(50);
    }
    await expectUnauthorizedEverywhere(made.key);
  });

  test('a key made by a member of each role: refused (naming scope, role and action) exactly where domain/access.ts says', async () => {
    const wrong: string[] = [];
    const allowed: { role: Role; op: Operation }[] = [];
    const refusedCount: Record<Role, number> = { owner: 0, admin: 0, editor: 0, contributor: 0, viewer: 0 };
    // The refusals first, on A's real ids: they must leave every row as it was.
    const before = await fingerprint(A.id);
    for (const role of ROLES) {
      for (const op of ops) {
        const holds = KEY_SCOPES[role].includes(op.scope);
        if (holds && can(role, op.action)) {
          allowed.push({ role, op });
          continue;
        }
        refusedCount[role]++;
        const r = await send(op, A.roleKeys[role], A.ids);
        const details = holds ? { requiredScope: op.scope, role, action: op.action } : { requiredScope: op.scope };
        if (
          r.status !== 403 ||
          r.body?.error?.code !== 'forbidden_scope' ||
          JSON.stringify(r.body.error.details) !== JSON.stringify(details)
        )
          wrong.push(`${role} ${label(op)}: ${brief(r)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await fingerprint(A.id)).toEqual(before);
    // Then what each role may do, on ids that name nothing (nothing of A is destroyed): past the access check.
    for (const { role, op } of allowed) {
      const r = await send(op, A.roleKeys[role], neverIds(A.ids));
      if (r.status === 401 || r.status === 403 || r.status >= 500) wrong.push(`${role} ${label(op)}: ${brief(r)}`);
    }
    expect(wrong).toEqual([]);
    expect(allowed.length + Object.values(refusedCount).reduce((a, b) => a + b, 0)).toBe(ROLES.length * ops.length);
    // The owner and the admin may do everything a key may; the viewer only reads.
    expect(refusedCount.owner).toBe(0);
    expect(refusedCount.admin).toBe(0);
    expect(allowed.filter((a) => a.role === 'viewer').every((a) => a.op.scope === 'read')).toBe(true);
    expect(refusedCount.contributor).toBeGreaterThan(refusedCount.editor);
  });
});

// ---------------------------------------------------------------------------------------------

/** The web app's own routes (test/web-roles.test.ts's list, derived the same way). */
function webRoutes(): { method: string; path: string }[] {
  return (stack.app.routes as { method: string; path: string }[]).filter(
    // Not the web app's: the API, the MCP server, the disk store's and the short links' URLs (`l`), files, probes.
    (r) => !/^\/(v1|mcp|storage|l|static|openapi|docs|health|ready|metrics|\.well-known)(\/|$)/.test(r.path) && r.path !== '/*',
  );
}

/**
 * Routes whose parameters name no row of A's: a platform's name, an OAuth grant, an invitation's
 * or a preview link's token (the token is the proof: tried below for preview links).
 */
const NOT_A_ROW = /:(platform|grant|token)\b/;

/** A's id for each parameter of a web route, by where it sits. */
function webIdOf(path: string, name: string): string {
  if (name === 'linkId') return A.link;
  if (name === 'deliveryId') return A.ids.delivery;
  if (name === 'userId') return A.users.editor;
  if (name !== 'id') throw new Error(`${path}: no id of A's for :${name}`);
  const byPrefix: [RegExp, string][] = [
    [/^\/(web\/api\/)?posts\//, A.ids.post],
    [/^\/(web\/api\/)?channels\//, A.ids.channel],
    [/^\/feeds\//, A.ids.feed],
    [/^\/settings\/webhooks\//, A.ids.webhook],
    [/^\/web\/api\/media\//, A.ids.media],
    [/^\/settings\/api-keys\//, A.cliKey.id],
    [/^\/settings\/members\/invitations\//, A.invitation],
    [/^\/inbox\/comments\//, A.ids.comment],
    [/^\/inbox\/replies\//, A.ids.reply],
    [/^\/(web\/api\/)?drafts\//, A.ids.draft],
    [/^\/settings\/tags\//, A.ids.tag],
  ];
  const found = byPrefix.find(([re]) => re.test(path));
  if (!found) throw new Error(`${path}: no id of A's for :id; add its prefix`);
  return found[1];
}

/** Form fields a handler reads, so the request gets as far as finding the row. */
const webForm = (route: string): Record<string, string | string[]> =>
  ({
    'POST /posts/:id/edit': { content: 'hijacked', channelIds: [A.ids.channel], publishAt: '2031-01-01T10:00' },
    'POST /posts/:id/preview-link': { days: '7', decide: 'on' },
    'POST /posts/:id/approve': { comment: 'hijacked' },
    'POST /posts/:id/reject': { comment: 'hijacked' },
    'POST /channels/:id/queue': { slots: 'monday 10:00' },
    'POST /feeds/:id': { name: 'hijacked', url: feeds.url, channelIds: [A.ids.channel] },
    'POST /settings/members/:userId/role': { role: 'viewer' },
    'POST /inbox/comments/:id/status': { status: 'read' },
  })[route] ?? {};

/** JSON bodies of the /web/api routes that take one. */
const WEB_JSON: Record<string, unknown> = {
  'PATCH /web/api/posts/:id': { date: '2031-01-01' },
  'POST /web/api/media/:id/complete': {},
  'PATCH /web/api/drafts/:id': { date: '2031-01-01' },
};

describe('the web app: a member of another organization', () => {
  test('every route naming one of A’s rows answers 404 to B’s owner, and nothing of A changes', async () => {
    // A's own owner finds each of these pages: B's 404 is the organization's doing, not a wrong path.
    const owner = new Browser(stack.app);
    expect((await owner.signIn(A.emails.owner, PASSWORD)).status).toBe(303);
    const before = await fingerprint(A.id);
    const wrong: string[] = [];
    const tried: string[] = [];
    for (const r of webRoutes()) {
      if (!r.path.includes(':') || NOT_A_ROW.test(r.path)) continue;
      const route = `${r.method} ${r.path}`;
      const path = r.path.replace(/:([A-Za-z]+)/g, (_, name: string) => webIdOf(r.path, name));
      const form = webForm(route);
      const res = r.path.startsWith('/web/api/')
        ? await B.browser.json(r.method, path, WEB_JSON[route])
        : r.method === 'GET'
          ? await B.browser.get(path)
          : await B.browser.request(r.method, path, { form });
      tried.push(route);
      if (r.method === 'GET') {
        const own = r.path.startsWith('/web/api/') ? await owner.json('GET', path) : await owner.get(path);
        if (own.status !== 200) wrong.push(`${route} → ${path}: ${own.status} to A’s owner`);
      }
      if (res.status !== 404) wrong.push(`${route} → ${path}: ${res.status} ${res.html.replace(/\s+/g, ' ').slice(0, 200)}`);
      for (const id of A.all) if (res.html.includes(id) && !path.includes(id)) wrong.push(`${route}: the page shows ${id} of A`);
    }
    expect(wrong).toEqual([]);
    // Posts, channels, feeds, webhooks, media, keys, members, invitations, comments, drafts and tags: each kind of row is tried.
    for (const prefix of [
      '/posts/:id',
      '/channels/:id',
      '/feeds/:id',
      '/settings/webhooks/:id',
      '/web/api/media/:id',
      '/settings/api-keys/:id',
      '/settings/members/:userId',
      '/settings/members/invitations/:id',
      '/inbox/comments/:id',
      '/drafts/:id',
      '/settings/tags/:id',
    ])
      expect(tried.some((t) => t.includes(prefix))).toBe(true);
    expect(await fingerprint(A.id)).toEqual(before);
  });

  test('the pages without an id show nothing of A’s', async () => {
    const wrong: string[] = [];
    for (const r of webRoutes()) {
      if (r.method !== 'GET' || r.path.includes(':')) continue;
      const res = r.path.startsWith('/web/api/') ? await B.browser.json('GET', r.path) : await B.browser.get(r.path);
      if (res.status >= 500) wrong.push(`GET ${r.path}: ${res.status}`);
      for (const id of A.all) if (res.html.includes(id)) wrong.push(`GET ${r.path}: shows ${id} of A`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('preview links whose signed grant and row disagree', () => {
  test('signed with the service’s key but naming another organization’s row or post: 404 to GET and to approve/reject; nothing changes', async () => {
    const key = stack.h.credentialsKey;
    const expiresAt = new Date(clock + 7 * 24 * HOUR);
    const token = (g: Omit<PreviewGrant, 'expiresAt' | 'decide'>) => signPreviewLink(key, { ...g, expiresAt, decide: true });
    const reviewer = new Browser(stack.app);
    // The genuine link of A's post shows it and offers the decision: the forged ones below differ only in what they name.
    const genuine = await reviewer.get(`/preview/${token({ linkId: A.link, postId: A.ids.post, organizationId: A.id })}`);
    expect(genuine.status).toBe(200);
    expect((await genuine.query('[data-testid="preview-decision"]')).length).toBe(1);

    const forged: Record<string, string> = {
      'A’s organization, B’s link row, A’s post': token({ linkId: B.link, postId: A.ids.post, organizationId: A.id }),
      'A’s organization, B’s link row, B’s post': token({ linkId: B.link, postId: B.ids.post, organizationId: A.id }),
      'A’s organization, A’s link row, B’s post': token({ linkId: A.link, postId: B.ids.post, organizationId: A.id }),
      'A’s organization, no link row, B’s post': token({ linkId: null, postId: B.ids.post, organizationId: A.id }),
      'B’s organization, A’s link row, A’s post': token({ linkId: A.link, postId: A.ids.post, organizationId: B.id }),
      'B’s organization, B’s link row, A’s post': token({ linkId: B.link, postId: A.ids.post, organizationId: B.id }),
    };
    const before = { a: await fingerprint(A.id), b: await fingerprint(B.id) };
    const wrong: string[] = [];
    for (const [what, t] of Object.entries(forged)) {
      const page = await reviewer.get(`/preview/${t}`);
      if (page.status !== 404) wrong.push(`${what}: GET ${page.status}`);
      for (const id of [A.ids.post, B.ids.post]) if (page.html.includes(id)) wrong.push(`${what}: GET shows ${id}`);
      for (const verb of ['approve', 'reject']) {
        const decided = await reviewer.post(
          `/preview/${t}/${verb}`,
          { reviewer: 'Mallory', comment: 'forged' },
          { csrf: false, headers: { origin: 'http://localhost' } },
        );
        if (decided.status !== 404) wrong.push(`${what}: POST ${verb} ${decided.status}`);
      }
    }
    expect(wrong).toEqual([]);
    expect({ a: await fingerprint(A.id), b: await fingerprint(B.id) }).toEqual(before);
    // The genuine link decides: the forged ones were refused for what they name, not for how they were sent.
    const approved = await reviewer.post(
      `/preview/${token({ linkId: A.link, postId: A.ids.post, organizationId: A.id })}/approve`,
      { reviewer: 'Rita Reviewer', comment: 'fine' },
      { csrf: false, headers: { origin: 'http://localhost' } },
    );
    expect(approved.status).toBe(303);
    const post = await call(stack.app, 'GET', `/v1/posts/${A.ids.post}`, { key: A.cliKey.key });
    expect(post.body.approval.status).toBe('approved');
  });
});
