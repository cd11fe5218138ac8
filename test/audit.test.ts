// The audit log (domain/audit.ts): a full scenario through the web app, the API, the MCP server and
// the CLI, read back through GET /v1/audit-events (filters, cursor pages) and Settings → Audit log;
// what is not a change (a refusal, a validation, an Idempotency-Key replay) is not recorded; the
// rows cannot be changed or deleted young, even by SQL; and every interface's table names every
// operation that changes something.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { operationDoc } from '../api/openapi/operation.ts';
import { runCommand } from '../cli/audit.ts';
import { COMMANDS } from '../cli/commands.ts';
import { listChannels } from '../domain/channels.ts';
import { TOOLS } from '../mcp/tools.ts';
import { createApiKey, listApiKeys } from '../services/api-keys.ts';
import { ROLES } from '../domain/access.ts';
import { createUser } from '../services/users.ts';
import { newId } from '../lib/ids.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;

// The proxy in front (TRUST_PROXY=1) names the client; each interface's client has its own User-Agent.
const BROWSER = { 'user-agent': 'AuditTest-Browser/1.0', 'x-forwarded-for': '198.51.100.7' };
const API_CLIENT = { 'user-agent': 'AuditTest-API/1.0', 'x-forwarded-for': '192.0.2.10, 203.0.113.5' };
const MCP_CLIENT = { 'user-agent': 'AuditTest-MCP/1.0', 'x-forwarded-for': '203.0.113.77' };

/** The stack's app, with these headers on every request that lacks them. */
const through = (headers: Record<string, string>) => ({
  handle: (r: Request) => {
    const merged = new Headers(r.headers);
    for (const [k, v] of Object.entries(headers)) if (!merged.has(k)) merged.set(k, v);
    return stack.app.handle(new Request(r, { headers: merged }));
  },
});
const web = through(BROWSER);

beforeAll(async () => {
  stack = await startPostStack({ publicBaseUrl: 'http://localhost', web: { trustProxyHops: 1 }, appDeps: { trustProxyHops: 1 } });
});
afterAll(async () => {
  await stack?.stop();
});

type Json = Record<string, any>;

const api = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(stack.app, method, path, { key, body, headers: { ...API_CLIENT, ...headers } });

/** Every event the key's organization has, newest first, page by page. */
async function allEvents(key: string, query = '', limit = 100): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const r = await api(key, 'GET', `/v1/audit-events?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeLessThanOrEqual(limit);
    out.push(...r.body.data);
    cursor = r.body.nextCursor;
  } while (cursor);
  return out;
}

async function mcpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'audit-test', version: '1.0.0' });
  const mcp = through(MCP_CLIENT);
  const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: (url, init) => mcp.handle(new Request(String(url), init)),
  });
  await client.connect(transport);
  return client;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

describe('the audit trail of a full scenario', () => {
  test('web, API, MCP and CLI changes are read back with who, what, which resource, when and from where', async () => {
    const em = stack.h.orm.em.fork();
    const owner = await signedInUser(web, { plan: 'TEAM' });
    const org = owner.org;
    const ownerActor = { type: 'member', id: owner.user.id, name: owner.email };

    // The web app: an API key, a channel.
    expect(
      (await owner.browser.post('/settings/api-keys', { name: 'ci', scopes: ['read', 'publish'], channels: 'all', expiry: 'never' }))
        .status,
    ).toBe(303);
    const key = (await (await owner.browser.get('/settings/api-keys')).one('[data-testid="new-api-key"]')).attrs.value!;
    const [keyRow] = await listApiKeys(em, org.id);
    expect(
      (
        await owner.browser.post('/channels/connect/discord', {
          name: 'Team Discord',
          cred_webhookUrl: 'https://discord.com/api/webhooks/1/x',
        })
      ).status,
    ).toBe(303);
    const [channel] = await listChannels(em, org.id);

    // The API: a refusal, a create and its replay, a validation, an edit, the web's reschedule, a delete, a webhook.
    const t0 = await stack.syncClock();
    const body = {
      content: `audited ${crypto.randomUUID()}`,
      channelIds: [channel!.id],
      publishAt: new Date(t0.getTime() + 2 * 86_400_000).toISOString(),
    };
    expect((await api(key, 'POST', '/v1/posts', { ...body, channelIds: [] })).status).toBe(422);
    const created = await api(key, 'POST', '/v1/posts', body, { 'idempotency-key': 'audit-create-1' });
    expect(created.status).toBe(201);
    const postId = created.body.id as string;
    const replayed = await api(key, 'POST', '/v1/posts', body, { 'idempotency-key': 'audit-create-1' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect((await api(key, 'POST', '/v1/posts/validate', { ...body, content: 'just checking' })).status).toBe(200);
    expect((await api(key, 'PATCH', `/v1/posts/${postId}`, { content: `${body.content} (edited)` })).status).toBe(200);
    const moved = await owner.browser.json('PATCH', `/web/api/posts/${postId}`, { date: dayOf(new Date(t0.getTime() + 3 * 86_400_000)) });
    expect(moved.status).toBe(200);
    expect((await api(key, 'DELETE', `/v1/posts/${postId}`)).status).toBe(204);
    const hook = await api(key, 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/audit', events: 'all' });
    expect(hook.status).toBe(201);
    const webhookId = hook.body.endpoint.id as string;
    expect((await api(key, 'DELETE', `/v1/webhooks/${webhookId}`)).status).toBe(204);
    // The web app's webhook: its id from where the answer points, a fixed fact of the route.
    const webHook = await owner.browser.post('/settings/webhooks', { url: 'http://127.0.0.1:9/web', events: 'all' });
    expect(webHook.status).toBe(303);
    const webHookId = /\/settings\/webhooks\/(wh_\w+)/.exec(webHook.location ?? '')![1]!;
    expect((await owner.browser.post(`/settings/webhooks/${webHookId}/disable`)).status).toBe(303);

    // Members: an invitation accepted by creating the account, one declined without a session, a
    // role changed, a member removed.
    const joinerEmail = `joiner-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const invited = await owner.browser.post('/settings/members/invitations', { email: joinerEmail, role: 'editor' });
    expect(invited.status).toBe(201);
    const joinLink = new URL((await invited.one('[data-testid="invitation-link"]')).attrs.value!).pathname;
    expect((await new Browser(web).post(`${joinLink}/register`, { password: 'a long enough password' }, { csrf: false })).status).toBe(303);
    const declinerEmail = `decliner-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const second = await owner.browser.post('/settings/members/invitations', { email: declinerEmail, role: 'viewer' });
    const declineLink = new URL((await second.one('[data-testid="invitation-link"]')).attrs.value!).pathname;
    expect((await new Browser(web).post(`${declineLink}/decline`, {}, { csrf: false })).status).toBe(200);
    const member = await createUser(em, {
      organizationId: org.id,
      email: `member-${newId('req')}@example.com`,
      password: 'long enough',
      role: 'viewer',
    });
    expect((await owner.browser.post(`/settings/members/${member.id}/role`, { role: 'contributor' })).status).toBe(303);
    expect((await owner.browser.post(`/settings/members/${member.id}/remove`)).status).toBe(303);

    // The MCP server and the CLI.
    const mcp = await mcpClient(key);
    const mcpPost = (await mcp.callTool({
      name: 'create_post',
      arguments: { ...body, content: `via mcp ${crypto.randomUUID()}` },
    })) as Json;
    expect(mcpPost.isError).toBeUndefined();
    const mcpPostId = mcpPost.structuredContent.id as string;
    expect(((await mcp.callTool({ name: 'cancel_post', arguments: { id: mcpPostId } })) as Json).isError).toBeUndefined();
    await mcp.close();
    await runCommand(
      { em: stack.h.orm.em.fork(), credentialsKey: () => stack.h.credentialsKey },
      'org set-plan',
      COMMANDS['org set-plan']!,
      {
        org: org.id,
        plan: 'ENTERPRISE',
      },
    );

    // Read back: newest first; the refusal, the replay and the validation left nothing.
    const events = await allEvents(key);
    expect(events.map((e) => e.action)).toEqual(
      [
        'key.create',
        'channel.connect',
        'post.create',
        'post.update',
        'post.reschedule',
        'post.delete',
        'webhook.create',
        'webhook.delete',
        'webhook.create',
        'webhook.update',
        'member.invite',
        'member.invitation_accept',
        'member.invite',
        'member.invitation_decline',
        'member.role_change',
        'member.remove',
        'post.create',
        'post.delete',
        'organization.plan_change',
      ].reverse(),
    );
    const times = events.map((e) => Date.parse(e.occurredAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const one = (action: string, i = 0) => events.filter((e) => e.action === action).reverse()[i]!;

    // The web app's events: the member, their role, the browser's address and User-Agent.
    expect(one('key.create')).toMatchObject({
      actor: ownerActor,
      resource: { type: 'api_key', id: keyRow!.id },
      ip: '198.51.100.7',
      userAgent: 'AuditTest-Browser/1.0',
      details: { role: 'owner', name: 'ci', scopes: ['read', 'publish'] },
    });
    expect(one('channel.connect')).toMatchObject({
      actor: ownerActor,
      resource: { type: 'channel', id: channel!.id },
      details: { platform: 'DISCORD' },
    });
    expect(one('post.reschedule')).toMatchObject({ actor: ownerActor, resource: { type: 'post', id: postId } });
    // The API's: the key, the member it belongs to, the client the proxy saw (one hop trusted).
    const keyActor = { type: 'api_key', id: keyRow!.id, name: `ci (${keyRow!.prefix}…)` };
    for (const action of ['post.create', 'post.update', 'post.delete']) {
      expect(one(action)).toMatchObject({
        actor: keyActor,
        resource: { type: 'post', id: postId },
        ip: '203.0.113.5',
        userAgent: 'AuditTest-API/1.0',
        details: { memberUserId: owner.user.id },
      });
    }
    expect(one('post.create').details).toMatchObject({ operationId: 'createPost', requestId: expect.stringMatching(/^req_/) });
    expect(one('webhook.create')).toMatchObject({ actor: keyActor, resource: { type: 'webhook', id: webhookId } });
    expect(one('webhook.delete').resource).toEqual({ type: 'webhook', id: webhookId });
    expect(one('webhook.create', 1)).toMatchObject({ actor: ownerActor, resource: { type: 'webhook', id: webHookId } });
    expect(one('webhook.update')).toMatchObject({
      actor: ownerActor,
      resource: { type: 'webhook', id: webHookId },
      details: { enabled: false },
    });
    // Members.
    expect(one('member.invite')).toMatchObject({
      actor: ownerActor,
      resource: { type: 'invitation' },
      details: { email: joinerEmail, invitedRole: 'editor' },
    });
    const joiner = one('member.invitation_accept');
    expect(joiner).toMatchObject({
      actor: { type: 'member', name: joinerEmail, id: expect.stringMatching(/^usr_/) },
      resource: { type: 'invitation', id: one('member.invite').resource.id },
      details: { role: 'editor', accountCreated: true },
      ip: '198.51.100.7',
    });
    expect(one('member.invitation_decline')).toMatchObject({
      actor: { type: 'invitee', id: null, name: declinerEmail },
      resource: { type: 'invitation', id: one('member.invite', 1).resource.id },
    });
    expect(one('member.role_change')).toMatchObject({
      actor: ownerActor,
      resource: { type: 'member', id: member.id },
      details: { newRole: 'contributor' },
    });
    expect(one('member.remove')).toMatchObject({ actor: ownerActor, resource: { type: 'member', id: member.id } });
    // The MCP server's: the key, from the MCP client; the CLI's: the operator, no address.
    expect(one('post.create', 1)).toMatchObject({
      actor: keyActor,
      resource: { type: 'post', id: mcpPostId },
      ip: '203.0.113.77',
      userAgent: 'AuditTest-MCP/1.0',
      details: { tool: 'create_post', memberUserId: owner.user.id },
    });
    expect(one('post.delete', 1)).toMatchObject({ resource: { type: 'post', id: mcpPostId }, details: { tool: 'cancel_post' } });
    expect(one('organization.plan_change')).toMatchObject({
      actor: { type: 'operator', id: null },
      resource: { type: 'organization', id: org.id },
      ip: null,
      userAgent: null,
      details: { command: 'org set-plan', plan: 'ENTERPRISE' },
    });

    // Filters.
    const actions = (list: Json[]) => list.map((e) => e.action);
    expect(actions(await allEvents(key, '&action=post.update'))).toEqual(['post.update']);
    expect(actions(await allEvents(key, `&resourceId=${postId}`))).toEqual([
      'post.delete',
      'post.reschedule',
      'post.update',
      'post.create',
    ]);
    expect(actions(await allEvents(key, '&resourceType=webhook'))).toEqual([
      'webhook.update',
      'webhook.create',
      'webhook.delete',
      'webhook.create',
    ]);
    expect((await allEvents(key, `&actorId=${keyRow!.id}`)).length).toBe(7);
    expect((await allEvents(key, '&actorType=member')).length).toBe(events.filter((e) => e.actor.type === 'member').length);
    expect(actions(await allEvents(key, '&actorType=operator'))).toEqual(['organization.plan_change']);
    const inviteAt = one('member.invite').occurredAt as string;
    const since = await allEvents(key, `&from=${encodeURIComponent(inviteAt)}`);
    expect(since.every((e) => e.occurredAt >= inviteAt)).toBe(true);
    expect(actions(since)).toContain('member.invite');
    const before = await allEvents(key, `&to=${encodeURIComponent(inviteAt)}`);
    expect(before.every((e) => e.occurredAt < inviteAt)).toBe(true);
    expect(since.length + before.length).toBe(events.length);

    // Cursor pages: the same events, a page at a time.
    expect(await allEvents(key, '', 3)).toEqual(events);
    const page = await api(key, 'GET', '/v1/audit-events?limit=5&action=post.create');
    expect(page.body).toEqual({ data: events.filter((e) => e.action === 'post.create'), nextCursor: null });

    // Another organization sees none of it.
    const other = await makeKey((await makeOrg('PRO')).id);
    expect((await api(other.key, 'GET', '/v1/audit-events')).body).toEqual({ data: [], nextCursor: null });

    // The web page: newest first, filtered; only owners and admins.
    const pageAll = await owner.browser.get('/settings/audit');
    expect(pageAll.status).toBe(200);
    expect((await pageAll.query('[data-testid="audit-row"]')).map((r) => r.attrs['data-action'])).toEqual(actions(events));
    expect(await pageAll.query('[data-testid="nav-audit"]')).toHaveLength(1);
    const removed = await owner.browser.get('/settings/audit?action=member.remove');
    const rows = await removed.query('[data-testid="audit-row"]');
    expect(rows.map((r) => [r.attrs['data-action'], r.attrs['data-resource-id']])).toEqual([['member.remove', member.id]]);
    expect((await removed.one('[data-testid="audit-actor"]')).text).toContain(owner.email);
    const viewer = await createUser(em, {
      organizationId: org.id,
      email: `viewer-${newId('req')}@example.com`,
      password: 'long enough',
      role: 'viewer',
    });
    const viewerBrowser = new Browser(web);
    expect((await viewerBrowser.signIn(viewer.email, 'long enough')).status).toBe(303);
    expect((await viewerBrowser.get('/settings/audit')).status).toBe(403);
    expect(await (await viewerBrowser.get('/calendar')).query('[data-testid="nav-audit"]')).toHaveLength(0);
  }, 120_000);
});

describe('GET /v1/audit-events', () => {
  test('a limit outside 1–100 or a cursor it did not give is 422; there is no way to change an event', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    const bad = await api(key, 'GET', '/v1/audit-events?limit=0');
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields).toEqual([{ path: 'limit', message: 'must be an integer from 1 to 100' }]);
    const cursor = await api(key, 'GET', `/v1/audit-events?cursor=${Buffer.from('["nope"]').toString('base64url')}`);
    expect(cursor.status).toBe(422);
    expect(cursor.body.error.details.fields).toEqual([{ path: 'cursor', message: 'is not a cursor returned by this API' }]);
    expect((await api(key, 'GET', '/v1/audit-events?actorType=robot')).status).toBe(422);
    // A read key reads it; nothing writes it.
    expect((await api(key, 'GET', '/v1/audit-events')).status).toBe(200);
    const patch = await api(key, 'PATCH', '/v1/audit-events', { action: 'x' });
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await api(key, 'DELETE', '/v1/audit-events/aud_x')).status).toBe(404);
  });

  test('reading the log is an owner’s or an admin’s: a read key made by a viewer, a contributor or an editor gets 403, in the web app too', async () => {
    const org = await makeOrg('PRO');
    for (const role of ROLES) {
      const user = await createUser(stack.h.orm.em.fork(), {
        organizationId: org.id,
        email: `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`,
        password: 'correct horse battery',
        role,
      });
      const { key } = await createApiKey(stack.h.orm.em.fork(), {
        organizationId: org.id,
        name: role,
        scopes: ['read'],
        channels: 'all',
        createdBy: { userId: user.id, role },
      });
      const r = await api(key, 'GET', '/v1/audit-events');
      if (role === 'owner' || role === 'admin') expect({ role, status: r.status }).toEqual({ role, status: 200 });
      else {
        expect({ role, status: r.status }).toEqual({ role, status: 403 });
        expect(r.body.error).toMatchObject({ code: 'forbidden_scope', details: { requiredScope: 'read', role, action: 'audit.read' } });
      }
    }
    const { browser } = await signedInUser(stack.app, { role: 'viewer' });
    expect((await browser.get('/settings/audit')).status).toBe(403);
  });
});

describe('from where', () => {
  test('over a real socket without a proxy header, the address is the socket peer’s', async () => {
    const org = await makeOrg('PRO');
    const { key, id } = await makeKey(org.id);
    const server = stack.app.listen({ port: 0, hostname: '127.0.0.1' });
    try {
      const r = await fetch(`http://127.0.0.1:${server.server!.port}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'user-agent': 'socket-client' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/socket', events: 'all' }),
      });
      expect(r.status).toBe(201);
    } finally {
      await server.stop(true);
    }
    const [event] = (await api(key, 'GET', '/v1/audit-events')).body.data;
    // A key made by an operator belongs to no member.
    expect(event).toMatchObject({ action: 'webhook.create', actor: { type: 'api_key', id }, ip: '127.0.0.1', userAgent: 'socket-client' });
    expect(event.details.memberUserId).toBeUndefined();
  });
});

describe('immutability', () => {
  test('Postgres refuses an UPDATE, a DELETE of a row younger than 90 days and a TRUNCATE; an older row may be pruned', async () => {
    const org = await makeOrg('PRO');
    const conn = stack.h.orm.em.fork().getConnection();
    const insert = (id: string, age: string) =>
      conn.execute(
        `insert into audit_events (id, organization_id, occurred_at, actor_type, actor_name, action, resource_type)
         values (?, ?, now() - ?::interval, 'operator', 'test', 'post.create', 'post')`,
        [id, org.id, age],
      );
    await insert('aud_young', '89 days');
    await insert('aud_old', '91 days');
    await expect(conn.execute(`update audit_events set action = 'post.delete' where id = 'aud_young'`)).rejects.toThrow(
      /cannot be changed/,
    );
    await expect(conn.execute(`update audit_events set actor_name = 'someone else' where id = 'aud_old'`)).rejects.toThrow(
      /cannot be changed/,
    );
    await expect(conn.execute(`delete from audit_events where id = 'aud_young'`)).rejects.toThrow(/cannot be changed/);
    await expect(conn.execute('truncate audit_events')).rejects.toThrow(/cannot be changed/);
    await conn.execute(`delete from audit_events where id = 'aud_old'`);
    const left = await conn.execute<{ id: string; action: string }[]>('select id, action from audit_events where organization_id = ?', [
      org.id,
    ]);
    expect(left).toEqual([{ id: 'aud_young', action: 'post.create' }]);
  });
});

describe('every interface names the action of each operation that changes something', () => {
  test('/v1: every operation but GET names its audit action (or null) in its entry', () => {
    const missing = (stack.app.routes as { method: string; path: string; hooks?: Record<string, unknown> }[])
      .filter((r) => r.path.startsWith('/v1/') && !['GET', 'HEAD', 'OPTIONS'].includes(r.method.toUpperCase()))
      .filter((r) => operationDoc(r.hooks?.detail)?.audit === undefined)
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
    // Reads record nothing: none names an action.
    const reads = (stack.app.routes as { method: string; path: string; hooks?: Record<string, unknown> }[])
      .filter((r) => r.path.startsWith('/v1/') && r.method === 'GET')
      .filter((r) => operationDoc(r.hooks?.detail)?.audit);
    expect(reads).toEqual([]);
  });

  test('MCP: exactly the tools that are not read-only name an audit action', () => {
    const changing = TOOLS.filter((t) => !t.annotations.readOnlyHint).map((t) => t.name);
    expect(
      TOOLS.filter((t) => t.audit)
        .map((t) => t.name)
        .sort(),
    ).toEqual(changing.sort());
  });

  test('CLI: every command names its audit action, null for those that only read', () => {
    expect(Object.entries(COMMANDS).filter(([, c]) => c.audit === undefined)).toEqual([]);
    expect(
      Object.keys(COMMANDS)
        .filter((n) => COMMANDS[n]!.audit === null)
        .sort(),
    ).toEqual(['channel list', 'key list']);
  });
});
