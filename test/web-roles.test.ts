// Every route of the web application names the action it performs, and each role is allowed or
// refused it as domain/access.ts says: a refused page is a 403 page, a refused JSON endpoint a 403
// `forbidden_role` body, and a refused request changes nothing. The table below is the whole list:
// a web route missing from it fails here.
import { beforeAll, describe, expect, test } from 'bun:test';
import { ROLES, can, type Action, type Role } from '../domain/access.ts';
import { listApiKeys } from '../services/api-keys.ts';
import { WEB_AUDIT } from '../web/audit.ts';
import { harness } from './harness/index.ts';
import { testApp } from './harness/fixtures.ts';
import { signedInUser } from './harness/web-browser.ts';

let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  const h = await harness();
  app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
});

/** `json`: a JSON endpoint, with a body its schema takes (the schema is checked before the role). */
type Route = { method: 'GET' | 'POST' | 'PATCH' | 'PUT'; path: string; action: Action; json?: Record<string, unknown> };
const ROUTES: Route[] = [
  { method: 'GET', path: '/calendar', action: 'read' },
  { method: 'GET', path: '/analytics', action: 'read' },
  { method: 'POST', path: '/sign-out', action: 'read' },
  { method: 'POST', path: '/session/organization', action: 'read' },
  { method: 'GET', path: '/web/api/posts', action: 'read', json: {} },
  { method: 'GET', path: '/web/api/posts/:id', action: 'read', json: {} },
  { method: 'PATCH', path: '/web/api/posts/:id', action: 'posts.write', json: { date: '2030-01-01' } },
  { method: 'GET', path: '/channels', action: 'read' },
  { method: 'GET', path: '/channels/connect/:platform', action: 'channels.manage' },
  { method: 'POST', path: '/channels/connect/:platform', action: 'channels.manage' },
  { method: 'POST', path: '/channels/oauth/:platform/start', action: 'channels.manage' },
  { method: 'GET', path: '/channels/oauth/:platform/callback', action: 'channels.manage' },
  { method: 'GET', path: '/channels/oauth/finish/:grant', action: 'channels.manage' },
  { method: 'POST', path: '/channels/oauth/finish/:grant', action: 'channels.manage' },
  { method: 'GET', path: '/channels/:id/queue', action: 'read' },
  { method: 'POST', path: '/channels/:id/queue', action: 'queues.write' },
  { method: 'GET', path: '/feeds', action: 'read' },
  { method: 'POST', path: '/feeds', action: 'feeds.write' },
  { method: 'GET', path: '/feeds/:id', action: 'read' },
  { method: 'POST', path: '/feeds/:id', action: 'feeds.write' },
  { method: 'POST', path: '/feeds/:id/poll', action: 'feeds.write' },
  { method: 'GET', path: '/feeds/:id/delete', action: 'feeds.write' },
  { method: 'POST', path: '/feeds/:id/delete', action: 'feeds.write' },
  { method: 'POST', path: '/web/api/text-lengths', action: 'read', json: {} },
  { method: 'POST', path: '/web/api/composer/preview', action: 'posts.write', json: { form: '' } },
  { method: 'GET', path: '/web/api/channels/:id/capabilities', action: 'read', json: {} },
  { method: 'GET', path: '/posts/new', action: 'posts.write' },
  { method: 'POST', path: '/posts', action: 'posts.write' },
  { method: 'GET', path: '/posts/import', action: 'posts.write' },
  { method: 'POST', path: '/posts/import/preview', action: 'posts.write' },
  { method: 'POST', path: '/posts/import', action: 'posts.write' },
  { method: 'GET', path: '/posts/:id', action: 'read' },
  { method: 'GET', path: '/posts/:id/edit', action: 'posts.write' },
  { method: 'POST', path: '/posts/:id/edit', action: 'posts.write' },
  { method: 'GET', path: '/posts/:id/delete', action: 'posts.publish' },
  { method: 'POST', path: '/posts/:id/delete', action: 'posts.publish' },
  { method: 'POST', path: '/posts/:id/retry', action: 'posts.publish' },
  { method: 'GET', path: '/approvals', action: 'posts.approve' },
  { method: 'POST', path: '/posts/:id/approve', action: 'posts.approve' },
  { method: 'POST', path: '/posts/:id/reject', action: 'posts.approve' },
  { method: 'POST', path: '/posts/:id/preview-link', action: 'posts.write' },
  { method: 'POST', path: '/posts/:id/preview-links/:linkId/revoke', action: 'posts.write' },
  { method: 'GET', path: '/drafts', action: 'read' },
  { method: 'POST', path: '/drafts', action: 'posts.write' },
  { method: 'GET', path: '/drafts/:id/edit', action: 'posts.write' },
  { method: 'POST', path: '/drafts/:id', action: 'posts.write' },
  { method: 'POST', path: '/drafts/:id/schedule', action: 'posts.write' },
  { method: 'POST', path: '/drafts/:id/intended', action: 'posts.write' },
  { method: 'GET', path: '/drafts/:id/delete', action: 'posts.write' },
  { method: 'POST', path: '/drafts/:id/delete', action: 'posts.write' },
  { method: 'PATCH', path: '/web/api/drafts/:id', action: 'posts.write', json: { date: '2030-01-01' } },
  { method: 'GET', path: '/inbox', action: 'read' },
  { method: 'GET', path: '/inbox/live', action: 'read' },
  { method: 'POST', path: '/inbox/comments/:id/reply', action: 'comments.reply' },
  { method: 'POST', path: '/inbox/comments/:id/status', action: 'comments.manage' },
  { method: 'POST', path: '/inbox/comments/:id/assign', action: 'comments.manage' },
  { method: 'POST', path: '/inbox/comments/:id/hide', action: 'comments.manage' },
  { method: 'POST', path: '/inbox/comments/:id/unhide', action: 'comments.manage' },
  { method: 'POST', path: '/inbox/replies/:id/approve', action: 'posts.approve' },
  { method: 'POST', path: '/inbox/replies/:id/reject', action: 'posts.approve' },
  { method: 'GET', path: '/inbox/replies/:id/delete', action: 'comments.manage' },
  { method: 'POST', path: '/inbox/replies/:id/delete', action: 'comments.manage' },
  { method: 'GET', path: '/settings/approval', action: 'settings.manage' },
  { method: 'POST', path: '/settings/approval', action: 'settings.manage' },
  { method: 'GET', path: '/settings/links', action: 'settings.manage' },
  { method: 'POST', path: '/settings/links', action: 'settings.manage' },
  { method: 'GET', path: '/settings/tags', action: 'read' },
  { method: 'POST', path: '/settings/tags', action: 'tags.manage' },
  { method: 'POST', path: '/settings/tags/:id', action: 'tags.manage' },
  { method: 'GET', path: '/settings/tags/:id/delete', action: 'tags.manage' },
  { method: 'POST', path: '/settings/tags/:id/delete', action: 'tags.manage' },
  { method: 'POST', path: '/posts/:id/tags', action: 'posts.write' },
  { method: 'GET', path: '/media', action: 'read' },
  {
    method: 'POST',
    path: '/web/api/media/uploads',
    action: 'media.write',
    json: { fileName: 'a.png', mimeType: 'image/png', fileSize: 10 },
  },
  { method: 'POST', path: '/web/api/media/:id/complete', action: 'media.write', json: {} },
  { method: 'GET', path: '/web/api/media/:id', action: 'read', json: {} },
  { method: 'GET', path: '/settings/time-zone', action: 'read' },
  { method: 'POST', path: '/settings/time-zone', action: 'read' },
  { method: 'PUT', path: '/web/api/me/time-zone', action: 'read', json: { timeZone: 'UTC' } },
  { method: 'GET', path: '/settings/api-keys', action: 'keys.manage' },
  { method: 'POST', path: '/settings/api-keys', action: 'keys.manage' },
  { method: 'POST', path: '/settings/api-keys/:id/revoke', action: 'keys.manage' },
  { method: 'GET', path: '/settings/members', action: 'read' },
  { method: 'POST', path: '/settings/members/:userId/role', action: 'members.manage' },
  { method: 'POST', path: '/settings/members/:userId/remove', action: 'members.manage' },
  { method: 'POST', path: '/settings/members/invitations', action: 'members.manage' },
  { method: 'POST', path: '/settings/members/invitations/:id/revoke', action: 'members.manage' },
  { method: 'POST', path: '/invitations/:token/accept', action: 'read' },
  { method: 'GET', path: '/settings/audit', action: 'audit.read' },
  { method: 'GET', path: '/settings/webhooks', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks', action: 'webhooks.manage' },
  { method: 'GET', path: '/settings/webhooks/:id', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/disable', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/test', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/rotate-secret', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/enable', action: 'webhooks.manage' },
  { method: 'GET', path: '/settings/webhooks/:id/delete', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/delete', action: 'webhooks.manage' },
  { method: 'POST', path: '/settings/webhooks/:id/deliveries/:deliveryId/redeliver', action: 'webhooks.manage' },
];

/** The web app's own routes: pages and /web/api, without the public ones (sign-in, static files). */
function webRoutes(): string[] {
  // Public: the sign-in form, an invitation's page and a preview link's, whose token is their proof.
  const PUBLIC = new Set([
    'GET /',
    'GET /*',
    'GET /sign-in',
    'POST /sign-in',
    'GET /invitations/:token',
    'POST /invitations/:token/decline',
    'POST /invitations/:token/register',
    'GET /preview/:token',
    'POST /preview/:token/approve',
    'POST /preview/:token/reject',
  ]);
  // Not the web app's: the API, MCP, stored files, the short links' redirect (/l), the server's own.
  return (app.routes as { method: string; path: string }[])
    .filter((r) => !/^\/(v1|mcp|storage|static|l|openapi|docs|health|ready|metrics|\.well-known)(\/|$)/.test(r.path))
    .map((r) => `${r.method} ${r.path}`)
    .filter((r) => !PUBLIC.has(r) && !r.startsWith('GET /static'));
}

describe('roles in the web application', () => {
  test('the table names every route of the web app', () => {
    expect(webRoutes().sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  test('every route that is not a GET, public ones too, names its audit action (web/audit.ts), and the table names no other', () => {
    const changing = (app.routes as { method: string; path: string }[])
      .filter((r) => !/^\/(v1|mcp|storage|static|l)(\/|$)/.test(r.path) && r.method !== 'GET')
      .map((r) => `${r.method} ${r.path}`);
    const gets = Object.keys(WEB_AUDIT).filter((k) => k.startsWith('GET '));
    expect(Object.keys(WEB_AUDIT).sort()).toEqual([...changing, ...gets].sort());
    // The one GET that changes something: the OAuth callback, where the platform sends the browser back.
    expect(gets).toEqual(['GET /channels/oauth/:platform/callback']);
  });

  test('every route × every role: allowed as domain/access.ts says, else 403', async () => {
    const wrong: string[] = [];
    for (const role of ROLES) {
      const { browser } = await signedInUser(app, { role: role as Role });
      for (const r of ROUTES) {
        if (r.path === '/sign-out') continue; // ends the session: tried last, below
        const path = r.path.replace(/:[A-Za-z]+/g, (m) => (m === ':platform' ? 'mastodon' : 'x_unknown'));
        const res =
          r.method === 'GET'
            ? await browser.get(path)
            : r.json
              ? await browser.json(r.method, path, r.json)
              : await browser.request(r.method, path, { form: {} });
        const allowed = can(role as Role, r.action);
        const refused = res.status === 403;
        if (allowed === refused) wrong.push(`${role} ${r.method} ${r.path}: ${res.status}`);
        if (refused && r.json && res.json().error?.code !== 'forbidden_role') wrong.push(`${role} ${r.path}: ${res.html.slice(0, 100)}`);
      }
      const out = await browser.request('POST', '/sign-out', { form: {} });
      if (out.status !== 303) wrong.push(`${role} POST /sign-out: ${out.status}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  test('a refused request changes nothing: a viewer’s new API key is not created, and the page says why', async () => {
    const { browser, org } = await signedInUser(app, { role: 'viewer' });
    const res = await browser.post('/settings/api-keys', { name: 'sneaky', scopes: ['read', 'publish'], channels: 'all', expiry: 'never' });
    expect(res.status).toBe(403);
    expect(res.html).toContain('Your role in this organization (viewer) does not allow this (keys.manage).');
    expect(await listApiKeys((await harness()).orm.em.fork(), org.id)).toEqual([]);
  });
});
