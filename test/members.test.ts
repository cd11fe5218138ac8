// Members and roles: what each role may do (domain/roles.ts), every existing user made the owner of
// their organization by the migration, and a session that opens only an organization its user is a
// member of.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Membership, User } from '../db/entities/index.ts';
import { createOrm, migrate, type Orm } from '../db/orm.ts';
import { ACTIONS, can, KEY_SCOPES, ROLES, type Action, type Role } from '../domain/roles.ts';
import { parseCommand, type CommandContext } from '../cli/commands.ts';
import { createSession, createUser, findSession } from '../services/users.ts';
import { harness, type Harness } from './harness/index.ts';
import { makeOrg } from './harness/fixtures.ts';

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

describe('what each role may do', () => {
  const EXPECTED: Record<Role, Action[]> = {
    owner: [...ACTIONS],
    admin: ACTIONS.filter((a) => a !== 'owners.manage'),
    editor: ['read', 'posts.write', 'posts.publish', 'posts.approve', 'media.write', 'queues.write', 'series.write'],
    contributor: ['read', 'posts.write', 'media.write'],
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
