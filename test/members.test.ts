// Members and roles: what each role may do (domain/access.ts), every existing user made the owner of
// their organization by the migration, and a session that opens only an organization its user is a
// member of.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Membership, User } from '../db/entities/index.ts';
import { createOrm, migrate, type Orm } from '../db/orm.ts';
import { ACTIONS, can, KEY_SCOPES, ROLES, type Action, type MemberPrincipal, type Role } from '../domain/access.ts';
import { parseCommand, type CommandContext } from '../cli/commands.ts';
import { createSession, createUser, findSession } from '../services/users.ts';
import { harness, type Harness } from './harness/index.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { createApiKey } from '../services/api-keys.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';
import { listMembers, setMemberRole } from '../domain/members.ts';

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

describe('what each role may do', () => {
  const EXPECTED: Record<Role, Action[]> = {
    owner: [...ACTIONS],
    admin: ACTIONS.filter((a) => a !== 'owners.manage'),
    editor: [
      'read',
      'posts.write',
      'posts.publish',
      'posts.approve',
      'posts.generate',
      'media.write',
      'queues.write',
      'series.write',
      'feeds.write',
      'comments.reply',
      'comments.manage',
      'tags.manage',
    ],
    contributor: ['read', 'posts.write', 'posts.generate', 'media.write', 'comments.reply'],
    viewer: ['read'],
  };

  test('every role × action, allowed or forbidden', () => {
    for (const role of ROLES) {
      for (const action of ACTIONS) {
        expect({ role, action, allowed: can(role, action) }).toEqual({ role, action, allowed: EXPECTED[role].includes(action) });
      }
    }
  });

  test('a key made by a member never holds more than the member: a viewer’s keys only read', () => {
    expect(KEY_SCOPES.viewer).toEqual(['read']);
    for (const role of ROLES) expect(KEY_SCOPES[role]).toContain('read');
  });
});

describe('memberships', () => {
  test('a user created for an organization is its owner unless another role is given', async () => {
    const em = h.orm.em.fork();
    const org = await makeOrg();
    const owner = await createUser(em, { organizationId: org.id, email: `owner-${org.id}@example.com`, password: 'long enough' });
    const viewer = await createUser(em, {
      organizationId: org.id,
      email: `viewer-${org.id}@example.com`,
      password: 'long enough',
      role: 'viewer',
    });
    const roles = await h.orm.em.fork().find(Membership, { organization: org.id }, { orderBy: { role: 'asc' } });
    expect(roles.map((m) => [m.user, m.role])).toEqual([
      [owner.id, 'owner'],
      [viewer.id, 'viewer'],
    ]);
  });

  test('the CLI takes --role and refuses one that does not exist', async () => {
    const org = await makeOrg();
    const ctx: CommandContext = { em: h.orm.em.fork(), credentialsKey: () => h.credentialsKey };
    const runCommand = (_: CommandContext, argv: string[]) => {
      const { command, flags } = parseCommand(argv);
      return command.run(ctx, flags);
    };
    const made = (await runCommand(ctx, [
      'user',
      'create',
      '--org',
      org.id,
      '--email',
      `ed-${org.id}@example.com`,
      '--password',
      'long enough',
      '--role',
      'editor',
    ])) as { id: string };
    expect((await h.orm.em.fork().findOneOrFail(Membership, { user: made.id })).role).toBe('editor');
    await expect(
      runCommand(ctx, [
        'user',
        'create',
        '--org',
        org.id,
        '--email',
        `x-${org.id}@example.com`,
        '--password',
        'long enough',
        '--role',
        'boss',
      ]),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });

  test('a session carries the role; once the membership is gone it opens nothing', async () => {
    const em = h.orm.em.fork();
    const org = await makeOrg();
    const made = await createUser(em, {
      organizationId: org.id,
      email: `c-${org.id}@example.com`,
      password: 'long enough',
      role: 'contributor',
    });
    const session = await createSession(em, await em.findOneOrFail(User, { id: made.id }));
    expect((await findSession(h.orm.em.fork(), session.token))?.role).toBe('contributor');
    await h.orm.em.fork().nativeDelete(Membership, { user: made.id });
    expect(await findSession(h.orm.em.fork(), session.token)).toBeNull();
  });
});

describe('the members page', () => {
  let app: Awaited<ReturnType<typeof testApp>>;
  beforeAll(async () => {
    app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
  });

  /** Another person of the same organization, signed in. */
  async function join(orgId: string, role: Role) {
    const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const user = await createUser(h.orm.em.fork(), { organizationId: orgId, email, password: 'long enough', role });
    const browser = new Browser(app);
    expect((await browser.signIn(email, 'long enough')).status).toBe(303);
    return { user, browser };
  }
  const rolesOf = async (browser: Browser) =>
    Object.fromEntries(
      (await (await browser.get('/settings/members')).query('[data-testid="member-row"]')).map((r) => [
        r.attrs['data-user-id'],
        r.attrs['data-role'],
      ]),
    );

  test('every member sees the list; the navigation shows each role what it may use', async () => {
    const { browser: owner, org, user } = await signedInUser(app);
    const viewer = await join(org.id, 'viewer');
    expect(await rolesOf(viewer.browser)).toEqual({ [user.id]: 'owner', [viewer.user.id]: 'viewer' });
    const nav = async (b: Browser) =>
      (await (await b.get('/calendar')).query('[data-testid="main-nav"] a')).map((a) => a.attrs['data-testid']);
    expect(await nav(owner)).toEqual([
      'nav-calendar',
      'nav-compose',
      'nav-drafts',
      'nav-import',
      'nav-approvals',
      'nav-inbox',
      'nav-analytics',
      'nav-channels',
      'nav-feeds',
      'nav-tags',
      'nav-media',
      'nav-keys',
      'nav-webhooks',
      'nav-members',
      'nav-audit',
    ]);
    expect(await nav(viewer.browser)).toEqual([
      'nav-calendar',
      'nav-drafts',
      'nav-inbox',
      'nav-analytics',
      'nav-channels',
      'nav-feeds',
      'nav-tags',
      'nav-media',
      'nav-members',
    ]);
  });

  test('an admin changes and removes members but never touches an owner; a removed member is signed out there', async () => {
    const { org, user: owner } = await signedInUser(app);
    const admin = await join(org.id, 'admin');
    const editor = await join(org.id, 'editor');
    const changed = await admin.browser.post(`/settings/members/${editor.user.id}/role`, { role: 'contributor' });
    expect(changed.status).toBe(303);
    expect((await rolesOf(admin.browser))[editor.user.id]).toBe('contributor');
    // The editor's session now has the new role: the composer is still theirs, API keys are not.
    expect((await editor.browser.get('/settings/api-keys')).status).toBe(403);
    for (const attempt of [
      admin.browser.post(`/settings/members/${editor.user.id}/role`, { role: 'owner' }),
      admin.browser.post(`/settings/members/${owner.id}/role`, { role: 'viewer' }),
      admin.browser.post(`/settings/members/${owner.id}/remove`),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(403);
      expect(res.html).toContain('owners.manage');
    }
    expect((await admin.browser.post(`/settings/members/${editor.user.id}/remove`)).status).toBe(303);
    const after = await editor.browser.get('/calendar');
    expect({ status: after.status, location: after.location }).toEqual({ status: 303, location: '/sign-in?next=%2Fcalendar' });
  });

  test('API keys go with their member: a key never holds more than its maker’s role; a new role revokes what it no longer allows; leaving revokes the rest', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const admin = await join(org.id, 'admin');
    const made = async (scopes: string[]) => {
      const res = await admin.browser.post('/settings/api-keys', { name: scopes.join('+'), scopes, channels: 'all', expiry: 'never' });
      expect(res.status).toBe(303);
      return (await (await admin.browser.get(res.location!)).one('[data-testid="new-api-key"]')).attrs.value!;
    };
    const publishing = await made(['read', 'publish']);
    const reading = await made(['read']);
    // The key says whose it is (GET /v1/me keeps SPEC's fields: an endpoint of its own).
    const member = await call(app, 'GET', '/v1/me/member', { key: reading });
    expect(member.body).toEqual({ member: { userId: admin.user.id, email: expect.stringContaining('admin-'), role: 'admin' } });
    const operators = await makeKey(org.id);
    expect((await call(app, 'GET', '/v1/me/member', { key: operators.key })).body).toEqual({ member: null });
    const me = async (key: string) => (await call(app, 'GET', '/v1/me', { key })).status;
    expect([await me(publishing), await me(reading)]).toEqual([200, 200]);
    // Demoted to viewer: the key that publishes is revoked, the read-only one stays.
    expect((await owner.post(`/settings/members/${admin.user.id}/role`, { role: 'viewer' })).status).toBe(303);
    expect([await me(publishing), await me(reading)]).toEqual([401, 200]);
    // Removed: every key they made is revoked.
    expect((await owner.post(`/settings/members/${admin.user.id}/remove`)).status).toBe(303);
    expect(await me(reading)).toBe(401);
    // A key is made within its maker's role.
    await expect(
      createApiKey(h.orm.em.fork(), {
        organizationId: org.id,
        name: 'too much',
        scopes: ['read', 'publish'],
        channels: 'all',
        createdBy: { userId: admin.user.id, role: 'viewer' },
      }),
    ).rejects.toMatchObject({ details: { fields: [{ path: 'scopes', message: 'your role (viewer) gives a key at most: read' }] } });
  });

  test('the last owner can be neither demoted nor removed; with a second owner, either can step down', async () => {
    const { browser, org, user } = await signedInUser(app);
    const demote = await browser.post(`/settings/members/${user.id}/role`, { role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.html).toContain('The organization needs an owner');
    expect((await browser.post(`/settings/members/${user.id}/remove`)).status).toBe(409);
    const second = await join(org.id, 'editor');
    expect((await browser.post(`/settings/members/${second.user.id}/role`, { role: 'owner' })).status).toBe(303);
    expect((await second.browser.post(`/settings/members/${user.id}/role`, { role: 'viewer' })).status).toBe(303);
    expect(await rolesOf(second.browser)).toEqual({ [user.id]: 'viewer', [second.user.id]: 'owner' });
    // Two owners demoting each other at once: one of them stays owner.
    const third = await join(org.id, 'viewer');
    const owner = (userId: string): MemberPrincipal => ({ type: 'member', organizationId: org.id, name: '', userId, role: 'owner' });
    await setMemberRole(h.orm.em.fork(), org.id, owner(second.user.id), third.user.id, 'owner');
    const both = await Promise.allSettled([
      setMemberRole(h.orm.em.fork(), org.id, owner(second.user.id), third.user.id, 'viewer'),
      setMemberRole(h.orm.em.fork(), org.id, owner(third.user.id), second.user.id, 'viewer'),
    ]);
    expect(both.map((b) => b.status).sort()).toEqual(['fulfilled', 'rejected']);
    const owners = (await listMembers(h.orm.em.fork(), org.id)).filter((m) => m.role === 'owner');
    expect(owners).toHaveLength(1);
  });
});

describe('a person in several organizations', () => {
  let app: Awaited<ReturnType<typeof testApp>>;
  beforeAll(async () => {
    app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
  });

  test('added to a second organization (CLI member add), they switch between them; each with its own role and data', async () => {
    const { browser, email, org: first, user } = await signedInUser(app);
    const second = await makeOrg('PRO', `Second ${crypto.randomUUID().slice(0, 6)}`);
    const ctx: CommandContext = { em: h.orm.em.fork(), credentialsKey: () => h.credentialsKey };
    const add = (argv: string[]) => {
      const { command, flags } = parseCommand(argv);
      return command.run(ctx, flags);
    };
    expect(await add(['member', 'add', '--org', second.id, '--email', email, '--role', 'viewer'])).toMatchObject({
      userId: user.id,
      role: 'viewer',
    });
    await expect(add(['member', 'add', '--org', second.id, '--email', email, '--role', 'editor'])).rejects.toMatchObject({
      code: 'conflict',
    });
    await expect(add(['member', 'add', '--org', second.id, '--email', 'nobody@example.com', '--role', 'editor'])).rejects.toMatchObject({
      code: 'validation_failed',
    });

    const page = await browser.get('/calendar');
    const options = (await page.query('[data-testid="org-select"] option')).map((o) => o.attrs.value);
    expect(options.sort()).toEqual([first.id, second.id].sort());
    expect((await browser.get('/settings/api-keys')).status).toBe(200); // owner of the first
    const switched = await browser.post('/session/organization', { organizationId: second.id });
    expect({ status: switched.status, location: switched.location }).toEqual({ status: 303, location: '/calendar' });
    expect((await (await browser.get('/settings/members')).one('[data-testid="my-role"]')).text).toBe('viewer');
    expect((await browser.get('/settings/api-keys')).status).toBe(403); // a viewer in the second
    // An organization they do not belong to cannot be opened.
    const other = await makeOrg();
    expect((await browser.post('/session/organization', { organizationId: other.id })).status).toBe(404);
    expect((await (await browser.get('/settings/members')).one('[data-testid="my-role"]')).text).toBe('viewer');
  });
});

describe('the memberships migration', () => {
  let orm: Orm;

  afterAll(async () => {
    await orm?.close(true);
  });

  test('every existing user becomes the owner of their organization', async () => {
    await h.pg.createDatabase('postpilot_members_migration');
    orm = await createOrm(h.pg.url('postpilot_members_migration'), 2);
    await orm.migrator.up({ to: 'Migration20261127120000_series_options' });
    const conn = orm.em.fork().getConnection();
    await conn.execute(
      `insert into organizations (id, name, plan, created_at, updated_at) values ('org_a', 'A', 'FREE', now(), now()), ('org_b', 'B', 'PRO', now(), now())`,
    );
    await conn.execute(
      `insert into users (id, organization_id, email, password_hash, created_at, updated_at)
       values ('usr_1', 'org_a', 'one@example.com', 'x', now(), now()), ('usr_2', 'org_a', 'two@example.com', 'x', now(), now()),
              ('usr_3', 'org_b', 'three@example.com', 'x', now(), now())`,
    );
    await migrate(orm);
    const rows = await conn.execute<{ organization_id: string; user_id: string; role: string }[]>(
      'select organization_id, user_id, role from memberships order by user_id',
    );
    expect(rows.map((r) => [r.organization_id, r.user_id, r.role])).toEqual([
      ['org_a', 'usr_1', 'owner'],
      ['org_a', 'usr_2', 'owner'],
      ['org_b', 'usr_3', 'owner'],
    ]);
  });
});
