// The `npm start` launcher (scripts/dev.ts) killed with SIGKILL, process group and all, as an out
// of memory kill or a crashed terminal does: its Postgres and Temporal dev server, in sessions of
// their own, must not stay behind holding the data folder and its ports. The next start of the
// same folder starts and publishes the posts accepted before the crash, once. Where the children
// do outlive the launcher (a setpriv without --pdeathsig, as util-linux before 2.33 has: a stand-in
// first on PATH), the next start stops what the earlier run left for its folder. A copy in another
// folder on the same ports is refused with the clear message and leaves the running copy alone.
// The tests run in order, one copy's launcher handed from one to the next. Each copy is this tree
// copied into a fresh folder (test/harness/tree-copy.ts), started as `npm start` starts it.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { createOrm } from '../db/orm.ts';
import { addChannel } from '../domain/channels.ts';
import { parseCredentialsKey } from '../lib/config.ts';
import { embeddedDatabaseUrl, readEmbeddedCredentialsKey } from '../lib/embedded.ts';
import { isRunning, tcpListeners, worksIn } from '../lib/process-lifetime.ts';
import { startFakeDiscord, type FakeDiscord } from './fakes/discord.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { closed } from './harness/quiet.ts';
import { BUN, copyTree, distinctFreePorts, groupMembers, listening } from './harness/tree-copy.ts';

interface Ports {
  api: number;
  pg: number;
  temporal: number;
  ui: number;
}

interface Launcher {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  output: () => string;
}

let home = '';
let copyA = '';
let copyB = '';
let portsA: Ports;
/** Free ports for a start that must not get as far as using them. */
let portsB: Ports;
let discord: FakeDiscord;
/** setpriv as util-linux before 2.33 has it: no --pdeathsig. */
let oldSetprivDir = '';
const launchers: Launcher[] = [];
/** The copy's launcher that runs from one test to the next. */
let running: Launcher | undefined;
/** Posts accepted before the first crash. */
const posts: { id: string; content: string }[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'postpilot-crash-'));
  copyA = join(home, 'a');
  copyB = join(home, 'b');
  copyTree(copyA);
  copyTree(copyB);
  const p = await distinctFreePorts(8);
  portsA = { api: p[0]!, pg: p[1]!, temporal: p[2]!, ui: p[3]! };
  portsB = { api: p[4]!, pg: p[5]!, temporal: p[6]!, ui: p[7]! };
  discord = await startFakeDiscord();
  const setpriv = Bun.which('setpriv');
  if (!setpriv) throw new Error('setpriv (util-linux) is missing');
  oldSetprivDir = join(home, 'old-setpriv');
  mkdirSync(oldSetprivDir);
  writeFileSync(
    join(oldSetprivDir, 'setpriv'),
    `#!/bin/sh\nfor a in "$@"; do case "$a" in --pdeathsig*) echo "setpriv: unrecognized option '$a'" >&2; exit 1;; esac; done\nexec ${setpriv} "$@"\n`,
  );
  chmodSync(join(oldSetprivDir, 'setpriv'), 0o755);
});

afterAll(async () => {
  for (const l of launchers) if (l.proc.exitCode === null) killGroup(l.proc.pid, 'SIGKILL');
  // Whatever still runs for the copies (their launchers, Postgres and its backends, Temporal).
  const dataDirs = [copyA, copyB].filter(Boolean).map((c) => join(c, '.data', 'pg'));
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!home || !Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cmdline.includes(home) || cwd.startsWith(home) || dataDirs.some((d) => worksIn(pid, d))) process.kill(pid, 'SIGKILL');
    } catch {
      // gone, or not ours to see
    }
  }
  await discord?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

test('after a SIGKILL of the launcher, Postgres and Temporal go too; the next start of the folder publishes the posts accepted before, once', async () => {
  const first = launch(copyA, portsA);
  const key = await ready(first, copyA, portsA);
  const servers = serverPids(portsA);
  expect(servers.length).toBeGreaterThanOrEqual(2);

  const channelId = await discordChannel(copyA, portsA, key);
  const publishAt = new Date(Date.now() + 4000).toISOString();
  for (const n of [1, 2, 3]) {
    const content = `accepted before the crash #${n}`;
    const r = await api(portsA, key, 'POST', '/v1/posts', { content, channelIds: [channelId], publishAt });
    expect(r.status).toBe(201);
    posts.push({ id: (r.body as { id: string }).id, content });
  }
  await crash(first);
  expect(discord.messages).toEqual([]); // nothing was published before the crash

  // Postgres (a fast shutdown) and the Temporal dev server stop with their launcher.
  await waitFor(() => !servers.some(isRunning), 20_000);
  expect(servers.filter(isRunning)).toEqual([]);

  // The next start runs its children without the parent-death signal, for the second test.
  const second = launch(copyA, portsA, oldSetprivDir);
  running = second;
  expect(await ready(second, copyA, portsA)).toBe(key);
  expect(second.output()).not.toContain('already in use');
  await waitFor(async () => (await postStatuses(key)).every((s) => s === 'published'), 40_000, 1000);
  expect(await postStatuses(key)).toEqual(['published', 'published', 'published']);
  // Each post's workflow has closed: none can publish again.
  await withTemporal(portsA, async (client) => {
    for (const p of posts) expect(await closed(client, postWorkflowId(p.id))).toBe('COMPLETED');
  });
  expect(discord.messages.map((m) => m.content).sort()).toEqual(posts.map((p) => p.content).sort());
}, 150_000);

test('where they outlive the launcher (no parent-death signal), the next start stops what the earlier run left for its folder', async () => {
  if (!running) throw new Error('the first test left no copy running');
  const key = readFileSync(join(copyA, '.data', 'dev-api-key'), 'utf8').trim();
  const orphans = serverPids(portsA);
  expect(orphans.length).toBeGreaterThanOrEqual(2);
  await crash(running);
  // As on a system without the signal: the launcher is gone (crash waits for its exit), so a
  // parent-death signal would have been sent by now, and a server that got it would refuse new
  // sessions. They take them and answer.
  expect(orphans.filter(isRunning)).toEqual(orphans);
  await expectServing(portsA);

  running = launch(copyA, portsA);
  await ready(running, copyA, portsA);
  expect(running.output()).toContain(`stopping what an earlier run left running for ${join(copyA, '.data')}`);
  expect(orphans.filter(isRunning)).toEqual([]);
  expect(serverPids(portsA).length).toBeGreaterThanOrEqual(2);
  expect(await postStatuses(key)).toEqual(['published', 'published', 'published']);
  expect(discord.messages).toHaveLength(posts.length);
}, 90_000);

test("another copy on the same ports is refused with the clear message, another start of the same folder too; neither touches the running copy's processes; Ctrl-C leaves nothing", async () => {
  if (!running) throw new Error('the second test left no copy running');
  const servers = serverPids(portsA);
  expect(servers.length).toBeGreaterThanOrEqual(2);
  const key = readFileSync(join(copyA, '.data', 'dev-api-key'), 'utf8').trim();

  const other = launch(copyB, portsA);
  expect(await exitCode(other)).toBe(1);
  expect(other.output()).toContain(
    `port(s) already in use: ${portsA.api} (API), ${portsA.pg} (Postgres), ${portsA.temporal} (Temporal), ${portsA.ui} (Temporal UI). Is another copy of the service running?`,
  );
  expect(other.output()).not.toContain('stopping what');

  const sameFolder = launch(copyA, portsB);
  expect(await exitCode(sameFolder)).toBe(1);
  expect(sameFolder.output()).toMatch(
    new RegExp(`the service is already running from ${join(copyA, '.data')} \\(launcher pid ${running.proc.pid}\\)`),
  );

  expect(servers.filter(isRunning)).toEqual(servers);
  expect((await api(portsA, key, 'GET', '/v1/me')).status).toBe(200);

  await interrupt(running);
  expect(servers.filter(isRunning)).toEqual([]);
  for (const p of Object.values(portsA)) expect(await listening(p)).toBe(false);
}, 90_000);

function launch(copy: string, ports: Ports, pathFirst?: string): Launcher {
  const proc = Bun.spawn([BUN, 'run', 'scripts/dev.ts'], {
    cwd: copy,
    detached: true, // its own process group, as a terminal gives `npm start`
    env: {
      PATH: [pathFirst, process.env.PATH].filter(Boolean).join(':'),
      HOME: home,
      LANG: process.env.LANG ?? 'C.UTF-8',
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(ports.pg),
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      TEMPORAL_UI_PORT: String(ports.ui),
      DATA_DIR: join(copy, '.data'),
      DISCORD_API_URL: discord.apiBase,
      LOG_LEVEL: 'warn',
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let output = '';
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      for await (const chunk of stream) output += new TextDecoder().decode(chunk);
    })();
  }
  const launcher = { proc, output: () => output };
  launchers.push(launcher);
  return launcher;
}

/** Waits until the launcher answers /v1/me with its demo key; returns the key. */
async function ready(l: Launcher, copy: string, ports: Ports): Promise<string> {
  const keyFile = join(copy, '.data', 'dev-api-key');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (l.proc.exitCode !== null) throw new Error(`the launcher exited (code ${l.proc.exitCode}):\n${l.output()}`);
    if (Date.now() > deadline) throw new Error(`no answer from /v1/me within 60 s:\n${l.output()}`);
    if (existsSync(keyFile) && l.output().includes('API on http')) {
      const key = readFileSync(keyFile, 'utf8').trim();
      if ((await api(ports, key, 'GET', '/v1/me').catch(() => ({ status: 0 }))).status === 200) return key;
    }
    await Bun.sleep(200);
  }
}

/** SIGKILL of the launcher's whole process group, as an OOM kill of it or a crashed terminal leaves it. */
async function crash(l: Launcher): Promise<void> {
  killGroup(l.proc.pid, 'SIGKILL');
  await l.proc.exited;
}

/** Ctrl-C in its terminal (SIGINT to the group): an orderly stop that leaves nothing running. */
async function interrupt(l: Launcher): Promise<void> {
  killGroup(l.proc.pid, 'SIGINT');
  expect(await exitCode(l)).toBe(0);
  expect(l.output()).toContain('[postpilot] stopped');
  expect(groupMembers(l.proc.pid)).toEqual([]);
}

async function exitCode(l: Launcher): Promise<number | 'timeout'> {
  return Promise.race([l.proc.exited, Bun.sleep(45_000).then(() => 'timeout' as const)]);
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone
  }
}

/** A client of the copy's Temporal server, for the time of fn. */
async function withTemporal<T>(ports: Ports, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
  try {
    return await fn(new Client({ connection }));
  } finally {
    await connection.close();
  }
}

/** The copy's Postgres takes a new session and answers it; its Temporal server answers. */
async function expectServing(ports: Ports): Promise<void> {
  const db = new pg.Client({ connectionString: embeddedDatabaseUrl({ embeddedPgPort: ports.pg }) });
  await db.connect();
  try {
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await db.end();
  }
  await withTemporal(ports, async (client) => {
    expect((await client.workflowService.getSystemInfo({})).serverVersion).toBeTruthy();
  });
}

/** The processes listening on a copy's Postgres and Temporal ports. */
function serverPids(ports: Ports): number[] {
  return [...new Set([...tcpListeners(ports.pg), ...tcpListeners(ports.temporal), ...tcpListeners(ports.ui)])].sort();
}

/** A Discord channel on the fake in the copy's demo organization, written to its database as the CLI's `channel add` does. */
async function discordChannel(copy: string, ports: Ports, key: string): Promise<string> {
  const me = (await api(ports, key, 'GET', '/v1/me')).body as { organization: { id: string } };
  const orm = await createOrm(embeddedDatabaseUrl({ embeddedPgPort: ports.pg }), 1);
  try {
    const channel = await addChannel(orm.em.fork(), parseCredentialsKey(readEmbeddedCredentialsKey({ dataDir: join(copy, '.data') })!), {
      organizationId: me.organization.id,
      platform: 'DISCORD',
      name: 'announcements',
      credentials: { webhookUrl: discord.webhookUrl() },
      maxChars: 2000,
    });
    return channel.id;
  } finally {
    await orm.close();
  }
}

/**
 * The posts' statuses in one request: the demo key's plan allows 60 requests a minute, and the
 * tests poll (a refused request shows as undefined).
 */
async function postStatuses(key: string): Promise<(string | undefined)[]> {
  const page = (await api(portsA, key, 'GET', '/v1/posts?limit=100')).body as { data?: { id: string; status: string }[] } | null;
  return posts.map((p) => page?.data?.find((d) => d.id === p.id)?.status);
}

async function api(ports: Ports, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const r = await fetch(`http://127.0.0.1:${ports.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

async function waitFor(check: () => boolean | Promise<boolean>, ms: number, everyMs = 200): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) await Bun.sleep(everyMs);
}
