// The admin CLI (cli/main.ts) run as a real subprocess against the test Postgres: output shape,
// what lands in the database, exit codes (0 ok, 2 bad arguments with nothing written, 1 other),
// and that a key it creates authenticates against the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { decryptJson, hashApiKey } from '../lib/crypto.ts';
import { harness, type Harness } from './harness/index.ts';
import { call, makeChannel, makeOrg, testApp } from './harness/fixtures.ts';
import { startFakeMastodon } from './fakes/mastodon.ts';

const ROOT = resolve(import.meta.dir, '..');
const KEY_HEX = randomBytes(32).toString('hex');
const KEY_BUF = Buffer.from(KEY_HEX, 'hex');

let h: Harness;
const tmpDirs: string[] = [];

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-cli-test-'));
  tmpDirs.push(dir);
  return dir;
}

beforeAll(async () => {
  h = await harness();
});

afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `bun run cli/main.ts …args`; env overrides win, and `undefined` removes a variable. */
async function cli(args: string[], envOverrides: Record<string, string | undefined> = {}): Promise<CliResult> {
  const env: Record<string, string> = {};
  const merged: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: h.databaseUrl,
    CREDENTIALS_KEY: KEY_HEX,
    DATA_DIR: freshDataDir(),
    ...envOverrides,
  };
  for (const [k, v] of Object.entries(merged)) if (v !== undefined) env[k] = v;
  const proc = Bun.spawn([process.execPath, 'run', 'cli/main.ts', ...args], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: any;
  if (args.includes('--json')) {
    // --json promises exactly one JSON object on stdout, on one line.
    const lines = stdout.trim().split('\n');
    if (lines.length !== 1) throw new Error(`--json printed ${lines.length} lines:\n${stdout}\nstderr:\n${stderr}`);
    try {
      json = JSON.parse(lines[0]!);
    } catch {
      throw new Error(`--json printed non-JSON stdout:\n${stdout}\nstderr:\n${stderr}`);
    }
    expect(typeof json).toBe('object');
    expect(json).not.toBeNull();
  }
  return { code, stdout, stderr, json };
}

/** Asserts a usage failure: exit 2, an `error:` line on stderr, and (with --json) an error object on stdout. */
function expectUsageError(r: CliResult, messagePart?: string | RegExp) {
  if (r.code !== 2) throw new Error(`expected exit 2, got ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  expect(r.stderr).toContain('error:');
  if (messagePart) expect(r.stderr).toMatch(messagePart);
  if (r.json !== undefined) expect(typeof r.json.error?.message).toBe('string');
}

function expectOk(r: CliResult) {
  if (r.code !== 0) throw new Error(`expected exit 0, got ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return h.orm.em.fork().getConnection().execute<T[]>(query, params);
}

const count = async (query: string, params: unknown[] = []) => Number((await sql<{ n: string }>(query, params))[0]!.n);
/** A timestamptz column `t` of the query's one row as epoch milliseconds (null when NULL or no row). */
async function epochMs(query: string, params: unknown[]): Promise<number | null> {
  const rows = await sql<{ ms: string | null }>(`select (extract(epoch from q.t) * 1000)::bigint as ms from (${query}) q`, params);
  return rows[0]?.ms == null ? null : Number(rows[0].ms);
}
const uniq = (label: string) => `${label} ${randomBytes(6).toString('hex')}`;

describe('cli org', () => {
  test('org create, --plan, org set-plan, and invalid plans', async () => {
    const name = uniq('Acme');
    const created = await cli(['org', 'create', '--name', name, '--json']);
    expectOk(created);
    expect(created.json.id).toMatch(/^org_[0-9a-z]+$/);
    expect(created.json).toEqual({ id: created.json.id, name, plan: 'PRO' });
    const [row] = await sql<{ name: string; plan: string }>('select name, plan from organizations where id = ?', [created.json.id]);
    expect(row).toEqual({ name, plan: 'PRO' });

    // --flag=value form and --plan.
    const teamName = uniq('Team org');
    const team = await cli(['org', 'create', `--name=${teamName}`, '--plan', 'TEAM', '--json']);
    expectOk(team);
    expect(team.json).toMatchObject({ name: teamName, plan: 'TEAM' });
    expect((await sql('select plan from organizations where id = ?', [team.json.id]))[0]).toEqual({ plan: 'TEAM' });

    const setPlan = await cli(['org', 'set-plan', '--org', created.json.id, '--plan', 'ENTERPRISE', '--json']);
    expectOk(setPlan);
    expect(setPlan.json).toEqual({ id: created.json.id, name, plan: 'ENTERPRISE' });
    expect((await sql('select plan from organizations where id = ?', [created.json.id]))[0]).toEqual({ plan: 'ENTERPRISE' });

    // Invalid plan on create: exit 2 and no organization written.
    const badName = uniq('Bad plan org');
    const before = await count('select count(*) as n from organizations');
    const bad = await cli(['org', 'create', '--name', badName, '--plan', 'GOLD', '--json']);
    expectUsageError(bad, /plan/);
    expect(bad.json.error.message).toContain('plan');
    expect(await count('select count(*) as n from organizations where name = ?', [badName])).toBe(0);
    expect(await count('select count(*) as n from organizations')).toBe(before);

    // Invalid plan on set-plan: exit 2, plan unchanged; unknown org: exit 2.
    const badSet = await cli(['org', 'set-plan', '--org', created.json.id, '--plan', 'gold']);
    expectUsageError(badSet, /plan/);
    expect((await sql('select plan from organizations where id = ?', [created.json.id]))[0]).toEqual({ plan: 'ENTERPRISE' });
    const missing = await cli(['org', 'set-plan', '--org', 'org_doesnotexist', '--plan', 'TEAM']);
    expectUsageError(missing, /org_doesnotexist/);
  });
});

describe('cli key', () => {
  test('key create stores only a hash, authenticates against the API, lists without secrets, and revokes', async () => {
    const org = await makeOrg('PRO', uniq('Key org'));
    const created = await cli(['key', 'create', '--org', org.id, '--name', 'ci key', '--scopes', 'read,publish', '--json']);
    expectOk(created);
    const { id, key, prefix } = created.json;
    expect(Object.keys(created.json).sort()).toEqual(['id', 'key', 'prefix']);
    expect(id).toMatch(/^key_/);
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    expect(prefix).toBe(key.slice(0, 12));

    // The database holds the SHA-256 of the key, never the key itself, in any column.
    const rows = await sql<Record<string, unknown>>('select * from api_keys where id = ?', [id]);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.hash).not.toBe(key);
    expect(row.hash).toBe(hashApiKey(key));
    expect(row.organization_id).toBe(org.id);
    expect(row.prefix).toBe(prefix);
    expect(row.scopes).toEqual(['read', 'publish']);
    expect(row.channel_ids).toBeNull();
    expect(row.revoked_at).toBeNull();
    for (const [column, value] of Object.entries(row)) {
      if (value === null || value === undefined) continue;
      const text = value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : JSON.stringify(value);
      if (text.includes(key)) throw new Error(`api_keys.${column} contains the plaintext key`);
    }
    // Nor any part of it past the displayed prefix, anywhere in the table.
    expect(await count('select count(*) as n from api_keys k where position(? in row_to_json(k)::text) > 0', [key.slice(12)])).toBe(0);

    // The key works against the API.
    const app = await testApp();
    const me = await call(app, 'GET', '/v1/me', { key });
    expect(me.status).toBe(200);
    expect(me.body.organization.id).toBe(org.id);
    expect(me.body.key).toMatchObject({ name: 'ci key', prefix, scopes: ['read', 'publish'], channels: 'all', expiresAt: null });

    // key list: prefix and scopes, never the key or its hash.
    const listed = await cli(['key', 'list', '--org', org.id, '--json']);
    expectOk(listed);
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]).toMatchObject({
      id,
      organizationId: org.id,
      name: 'ci key',
      prefix,
      scopes: ['read', 'publish'],
      channels: 'all',
      revokedAt: null,
    });
    expect(listed.json.data[0]).not.toHaveProperty('key');
    expect(listed.json.data[0]).not.toHaveProperty('hash');
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toContain(row.hash as string);

    // key revoke: revokedAt set in output and DB; the API then refuses the key.
    const revoked = await cli(['key', 'revoke', '--id', id, '--json']);
    expectOk(revoked);
    expect(revoked.json.id).toBe(id);
    expect(Number.isNaN(Date.parse(revoked.json.revokedAt))).toBe(false);
    expect(await epochMs('select revoked_at as t from api_keys where id = ?', [id])).toBe(Date.parse(revoked.json.revokedAt));
    const meAfter = await call(app, 'GET', '/v1/me', { key });
    expect(meAfter.status).toBe(401);

    const unknown = await cli(['key', 'revoke', '--id', 'key_doesnotexist']);
    expectUsageError(unknown, /key_doesnotexist/);
  });

  test('key create --channels limits the key; bad channels, scopes, expiry and org are refused with nothing written', async () => {
    const org = await makeOrg('PRO', uniq('Channel key org'));
    const other = await makeOrg('PRO', uniq('Other org'));
    const a = await makeChannel(org.id, 'MASTODON');
    const b = await makeChannel(org.id, 'DISCORD');
    const foreign = await makeChannel(other.id, 'MASTODON');
    const keysOf = (orgId: string) => count('select count(*) as n from api_keys where organization_id = ?', [orgId]);
    const base = ['key', 'create', '--org', org.id, '--name', 'limited'];

    const limited = await cli([...base, '--scopes', 'read', '--channels', `${a.id},${b.id}`, '--json']);
    expectOk(limited);
    const [row] = await sql<{ channel_ids: string[] }>('select channel_ids from api_keys where id = ?', [limited.json.id]);
    expect([...row!.channel_ids].sort()).toEqual([a.id, b.id].sort());
    const me = await call(await testApp(), 'GET', '/v1/me', { key: limited.json.key });
    expect(me.status).toBe(200);
    expect([...me.body.key.channels].sort()).toEqual([a.id, b.id].sort());
    expect(await keysOf(org.id)).toBe(1);

    // A future --expires is stored.
    const expires = new Date(Date.now() + 7 * 86_400_000);
    expires.setUTCMilliseconds(0);
    const expiring = await cli([...base, '--scopes', 'read', '--expires', expires.toISOString(), '--json']);
    expectOk(expiring);
    expect(expiring.json.key).toMatch(/^sk_live_/);
    expect(await epochMs('select expires_at as t from api_keys where id = ?', [expiring.json.id])).toBe(expires.getTime());
    expect(await keysOf(org.id)).toBe(2);

    const unknownChannel = await cli([...base, '--scopes', 'read', '--channels', `${a.id},ch_doesnotexist`, '--json']);
    expectUsageError(unknownChannel, /ch_doesnotexist/);
    expect(unknownChannel.json.error.details.fields[0].path).toBe('channels');

    const foreignChannel = await cli([...base, '--scopes', 'read', '--channels', foreign.id]);
    expectUsageError(foreignChannel, foreign.id);

    const past = await cli([...base, '--scopes', 'read', '--expires', '2020-01-01T00:00:00Z']);
    expectUsageError(past, /expiresAt/);

    const notADate = await cli([...base, '--scopes', 'read', '--expires', 'tomorrow']);
    expectUsageError(notADate, /--expires/);

    const badScope = await cli([...base, '--scopes', 'read,admin']);
    expectUsageError(badScope, /scopes/);

    // An empty value (e.g. `--channels "$IDS"` with IDS unset) must not fall back to an
    // unrestricted, never-expiring key.
    const emptyChannels = await cli([...base, '--scopes', 'read', '--channels', '']);
    expectUsageError(emptyChannels, /--channels/);
    const emptyExpires = await cli([...base, '--scopes', 'read', '--expires=']);
    expectUsageError(emptyExpires, /--expires/);

    expect(await keysOf(org.id)).toBe(2);

    const noOrg = await cli(['key', 'create', '--org', 'org_doesnotexist', '--name', 'x', '--scopes', 'read']);
    expectUsageError(noOrg, /org_doesnotexist/);
    expect(await keysOf('org_doesnotexist')).toBe(0);
  });
});

describe('cli channel', () => {
  const creds = { instanceUrl: 'https://m.example', accessToken: 'tok-plaintext-7f3a9c' };

  test('channel add reads a Mastodon instance’s max_characters; an unreachable instance keeps 500 with a warning', async () => {
    const fake = await startFakeMastodon({ maxCharacters: 1000 });
    try {
      const org = await makeOrg('PRO', uniq('Mastodon org'));
      const ok = await cli([
        'channel',
        'add',
        '--org',
        org.id,
        '--platform',
        'MASTODON',
        '--name',
        'Big',
        '--credentials',
        JSON.stringify({ instanceUrl: fake.url, accessToken: 'good-token' }),
        '--json',
      ]);
      expectOk(ok);
      expect(ok.json.rules.maxChars).toBe(1000);
      expect(fake.requests.some((q) => q.path === '/api/v2/instance')).toBe(true);
      const down = await cli([
        'channel',
        'add',
        '--org',
        org.id,
        '--platform',
        'MASTODON',
        '--name',
        'Down',
        '--credentials',
        JSON.stringify({ instanceUrl: 'http://127.0.0.1:9', accessToken: 't' }),
        '--json',
      ]);
      expectOk(down);
      expect(down.json.rules.maxChars).toBe(500);
      expect(down.stderr).toMatch(/warning: could not read the account's limits/);
    } finally {
      await fake.stop();
    }
  });

  test('channel add: an instance on a loopback address is refused (exit 2, the field named, nothing written or sent) unless OUTBOUND_ALLOW_PRIVATE', async () => {
    const fake = await startFakeMastodon({ maxCharacters: 1000 });
    try {
      const org = await makeOrg('PRO', uniq('Outbound org'));
      const args = [
        'channel',
        'add',
        '--org',
        org.id,
        '--platform',
        'MASTODON',
        '--name',
        'Internal',
        '--credentials',
        JSON.stringify({ instanceUrl: fake.url, accessToken: 'good-token' }),
        '--json',
      ];
      const host = new URL(fake.url).host;
      // Unset: production's default. --max-chars skips the limits read, not the address check.
      for (const extra of [[], ['--max-chars', '800']]) {
        const refused = await cli([...args, ...extra], { OUTBOUND_ALLOW_PRIVATE: undefined });
        expectUsageError(refused, new RegExp(`credentials\\.instanceUrl: ${host.replaceAll('.', '\\.')} is a loopback address`));
        expect(refused.json.error.details.fields[0].path).toBe('credentials.instanceUrl');
      }
      expectUsageError(await cli(args, { OUTBOUND_ALLOW_PRIVATE: 'false' }), /loopback address/);
      expect(fake.requests).toHaveLength(0);
      expect(await count('select count(*) as n from channels where organization_id = ?', [org.id])).toBe(0);

      const allowed = await cli(args, { OUTBOUND_ALLOW_PRIVATE: 'true' });
      expectOk(allowed);
      expect(allowed.json.rules.maxChars).toBe(1000);
    } finally {
      await fake.stop();
    }
  });

  test('channel add encrypts credentials; list and set-status; invalid input writes nothing', async () => {
    const org = await makeOrg('PRO', uniq('Channel org'));
    const channelsOf = () => count('select count(*) as n from channels where organization_id = ?', [org.id]);
    const add = (extra: string[], platform = 'MASTODON', credentials = JSON.stringify(creds)) =>
      cli(['channel', 'add', '--org', org.id, '--platform', platform, '--name', 'Main', '--credentials', credentials, ...extra]);

    const added = await add(['--json']);
    expectOk(added);
    expect(added.json.id).toMatch(/^ch_/);
    expect(added.json).toMatchObject({
      platform: 'MASTODON',
      name: 'Main',
      status: 'active',
      organizationId: org.id,
      rules: { requiresMedia: false, maxChars: 500, requiredFields: [] },
    });
    expect(added.stdout).not.toContain(creds.accessToken);
    const [row] = await sql<{ credentials_encrypted: string; platform: string; status: string }>(
      'select credentials_encrypted, platform, status from channels where id = ?',
      [added.json.id],
    );
    expect(row).toMatchObject({ platform: 'MASTODON', status: 'active' });
    expect(row!.credentials_encrypted).not.toContain(creds.accessToken);
    expect(row!.credentials_encrypted).not.toContain('accessToken');
    expect(row!.credentials_encrypted).not.toContain(Buffer.from(creds.accessToken).toString('base64').slice(0, 12));
    // Encrypted with CREDENTIALS_KEY, and it round-trips.
    expect(decryptJson(KEY_BUF, row!.credentials_encrypted)).toEqual(creds);

    // Lower-case platform and --max-chars.
    const custom = await add(['--max-chars', '11000', '--json'], 'mastodon');
    expectOk(custom);
    expect(custom.json).toMatchObject({ platform: 'MASTODON', rules: { maxChars: 11000 } });
    expect(await channelsOf()).toBe(2);

    // Refusals, none of which writes a channel.
    const missingCred = await add(['--json'], 'MASTODON', JSON.stringify({ instanceUrl: 'https://m.example' }));
    expectUsageError(missingCred, /credentials\.accessToken/);
    const notJson = await add([], 'MASTODON', '{instanceUrl: nope');
    expectUsageError(notJson, /--credentials must be a JSON object/);
    const arrayJson = await add([], 'MASTODON', '["a"]');
    expectUsageError(arrayJson, /--credentials must be a JSON object/);
    const badPlatform = await add([], 'MYSPACE');
    expectUsageError(badPlatform, /platform/);
    const badMaxChars = await add(['--max-chars', '0']);
    expectUsageError(badMaxChars, /--max-chars/);
    expect(await channelsOf()).toBe(2);

    // channel list: both channels, oldest first, without credentials.
    const listed = await cli(['channel', 'list', '--org', org.id, '--json']);
    expectOk(listed);
    expect(listed.json.data.map((c: { id: string }) => c.id)).toEqual([added.json.id, custom.json.id]);
    expect(listed.json.data[0]).toEqual({
      id: added.json.id,
      platform: 'MASTODON',
      name: 'Main',
      status: 'active',
      rules: { requiresMedia: false, maxChars: 500, requiredFields: [] },
    });
    expect(listed.stdout).not.toContain(creds.accessToken);
    expect(listed.stdout).not.toContain('credentials');

    // set-status.
    const status = await cli(['channel', 'set-status', '--id', added.json.id, '--status', 'reauth_required', '--json']);
    expectOk(status);
    expect(status.json).toMatchObject({ id: added.json.id, status: 'reauth_required' });
    expect((await sql('select status from channels where id = ?', [added.json.id]))[0]).toEqual({ status: 'reauth_required' });
    const badStatus = await cli(['channel', 'set-status', '--id', added.json.id, '--status', 'paused']);
    expectUsageError(badStatus, /status/);
    expect((await sql('select status from channels where id = ?', [added.json.id]))[0]).toEqual({ status: 'reauth_required' });
    const unknownChannel = await cli(['channel', 'set-status', '--id', 'ch_doesnotexist', '--status', 'disabled']);
    expectUsageError(unknownChannel, /ch_doesnotexist/);
  });

  test('channel add: unknown org, and the credentials key from env, DATA_DIR, or neither', async () => {
    const org = await makeOrg('PRO', uniq('Key source org'));
    const channelsOf = () => count('select count(*) as n from channels where organization_id = ?', [org.id]);
    const args = [
      'channel',
      'add',
      '--org',
      org.id,
      '--platform',
      'MASTODON',
      '--name',
      'Main',
      '--credentials',
      JSON.stringify(creds),
      '--json',
    ];

    const noOrg = await cli(['channel', 'add', '--org', 'org_doesnotexist', ...args.slice(4)]);
    expectUsageError(noOrg, /org_doesnotexist/);
    expect(await count("select count(*) as n from channels where organization_id = 'org_doesnotexist'")).toBe(0);

    // Neither CREDENTIALS_KEY nor DATA_DIR/credentials-key: exit 2, nothing written.
    const noKey = await cli(args, { CREDENTIALS_KEY: undefined, DATA_DIR: freshDataDir() });
    expectUsageError(noKey, /CREDENTIALS_KEY/);
    expect(await channelsOf()).toBe(0);

    // Without CREDENTIALS_KEY the embedded stack's DATA_DIR/credentials-key is used.
    const dataDir = freshDataDir();
    const fileKey = randomBytes(32).toString('hex');
    writeFileSync(join(dataDir, 'credentials-key'), `${fileKey}\n`);
    const fromFile = await cli(args, { CREDENTIALS_KEY: undefined, DATA_DIR: dataDir });
    expectOk(fromFile);
    const [row] = await sql<{ credentials_encrypted: string }>('select credentials_encrypted from channels where id = ?', [
      fromFile.json.id,
    ]);
    expect(decryptJson(Buffer.from(fileKey, 'hex'), row!.credentials_encrypted)).toEqual(creds);
    expect(() => decryptJson(KEY_BUF, row!.credentials_encrypted)).toThrow();
    expect(await channelsOf()).toBe(1);

    // unknown org for channel list, too.
    const listNoOrg = await cli(['channel', 'list', '--org', 'org_doesnotexist']);
    expectUsageError(listNoOrg, /org_doesnotexist/);
  });
});

describe('cli usage and failures', () => {
  test('unknown command, unknown flag, missing flag, stray argument: exit 2 and nothing written', async () => {
    const unknownCommand = await cli(['org', 'destroy', '--json']);
    expectUsageError(unknownCommand, /unknown command "org destroy"/);
    expect(unknownCommand.json.error.message).toContain('unknown command');

    const name = uniq('Flag org');
    const unknownFlag = await cli(['org', 'create', '--name', name, '--colour', 'red']);
    expectUsageError(unknownFlag, /unknown flag --colour/);
    expect(unknownFlag.stdout).toBe('');
    expect(await count('select count(*) as n from organizations where name = ?', [name])).toBe(0);

    const missingFlag = await cli(['key', 'create', '--org', 'org_x', '--name', 'n']);
    expectUsageError(missingFlag, /missing --scopes/);

    const noValue = await cli(['org', 'create', '--name', '--json']);
    expectUsageError(noValue, /--name needs a value/);

    const stray = await cli(['org', 'create', '--name', name, 'extra']);
    expectUsageError(stray, /unexpected argument "extra"/);
    expect(await count('select count(*) as n from organizations where name = ?', [name])).toBe(0);
  });

  test('the package script runs it: `bun run cli --help` and a command through it', async () => {
    const help = Bun.spawnSync([process.execPath, 'run', 'cli', '--help'], { cwd: ROOT, env: { ...process.env, PATH: '/usr/bin:/bin' } });
    expect(help.exitCode).toBe(0);
    expect(help.stdout.toString()).toContain('usage: bun run cli');
    const viaScript = Bun.spawnSync([process.execPath, 'run', 'cli', 'org', 'create', '--name', uniq('Script org'), '--json'], {
      cwd: ROOT,
      env: { ...process.env, PATH: '/usr/bin:/bin', DATABASE_URL: h.databaseUrl },
    });
    expect(viaScript.exitCode).toBe(0);
    expect(JSON.parse(viaScript.stdout.toString()).id).toMatch(/^org_/);
  });

  test('unreachable database: exit 1 with a message that hides the password', async () => {
    const r = await cli(['org', 'create', '--name', 'nowhere', '--json'], {
      DATABASE_URL: 'postgres://postgres:s3cretpw@127.0.0.1:1/x',
    });
    if (r.code !== 1) throw new Error(`expected exit 1, got ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    expect(r.stderr).toContain('cannot reach the database');
    expect(r.stderr).toContain('127.0.0.1:1');
    expect(r.stderr).not.toContain('s3cretpw');
    expect(r.stdout).not.toContain('s3cretpw');
    expect(r.json.error.message).toContain('cannot reach the database');
  });
});
