// `npm start` from a clone inside a private (0700) folder, as root's home folder or `mktemp -d`
// give it: as root, Postgres runs as the `postgres` user, who cannot enter such a folder
// (lib/pg-server.ts). The clone here is this working tree copied into a fresh 0700 folder, with
// the installed packages reused (the Postgres binaries copied in, as a real install has them).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './harness/ports.ts';
import { BUN, copyTree, distinctFreePorts, groupMembers, listening } from './harness/tree-copy.ts';

const isRoot = process.geteuid?.() === 0;
let home = '';
let clone = '';

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'postpilot-home-')); // mode 0700, like /root
  clone = join(home, 'postpilot');
  copyTree(clone);
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

test('a clone inside a fresh 0700 folder starts with the `npm start` launcher, answers /v1/me, and Ctrl-C leaves nothing running', async () => {
  expect(statSync(home).mode & 0o777).toBe(0o700);
  const [port, pgPort, temporalPort, uiPort] = (await distinctFreePorts(4)) as [number, number, number, number];
  const dataDir = join(clone, '.data');
  const child = spawn(BUN, ['run', 'scripts/dev.ts'], {
    cwd: clone,
    detached: true, // its own process group, as a terminal gives `npm start`; Ctrl-C goes to all of it
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: home,
      LANG: process.env.LANG ?? 'C.UTF-8',
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
      TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
      TEMPORAL_UI_PORT: String(uiPort),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
  });
  let output = '';
  child.stdout!.on('data', (b) => (output += b));
  child.stderr!.on('data', (b) => (output += b));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const keyFile = join(dataDir, 'dev-api-key');
    let status = 0;
    const deadline = Date.now() + 50_000;
    while (status !== 200) {
      if (child.exitCode !== null) throw new Error(`the launcher exited (code ${child.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`no answer from /v1/me within 50 s:\n${output}`);
      await Bun.sleep(250);
      if (!existsSync(keyFile)) continue;
      const key = readFileSync(keyFile, 'utf8').trim();
      status = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${key}` } })
        .then((r) => r.status)
        .catch(() => 0);
    }
    expect(status).toBe(200);
    expect(output).not.toMatch(/EACCES|fatal/);
    // The data stays in the clone (DATA_DIR/pg) where mount namespaces are allowed, as here.
    if (isRoot && !output.includes('Postgres data is in')) expect(existsSync(join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
    const code = await Promise.race([exited, Bun.sleep(40_000).then(() => 'timeout' as const)]);
    const left = groupMembers(child.pid!);
    if (left.length) process.kill(-child.pid!, 'SIGKILL');
    expect(code).not.toBe('timeout');
    expect(left).toEqual([]);
  }
  // Nothing answers on any of its ports any more, and the private folder is still private.
  for (const p of [port, pgPort, temporalPort]) expect(await listening(p)).toBe(false);
  expect(statSync(home).mode & 0o777).toBe(0o700);
}, 90_000);

test('without mount namespaces, root copies the Postgres binaries and keeps the data where the `postgres` user can reach it; otherwise one clear sentence', async () => {
  const base = mkdtempSync(join(tmpdir(), 'postpilot-fallback-'));
  chmodSync(base, 0o755); // stands for /var/lib, which every user can enter
  try {
    const asked = join(clone, '.data-fallback', 'pg');
    const ok = runFallback(asked, join(base, 'lib'), await freePort());
    expect(ok.stdout + ok.stderr).not.toContain('Postgres cannot');
    expect(ok.status).toBe(0);
    const report = JSON.parse(ok.stdout) as { mode: string; dataDir: string; answer: number };
    expect(report.answer).toBe(1);
    if (isRoot) {
      expect(report.mode).toBe('relocate');
      expect(report.dataDir.startsWith(join(base, 'lib', 'data-'))).toBe(true);
      expect(readdirSync(join(base, 'lib')).some((d) => d.startsWith('postgres-'))).toBe(true);
      // Where even the fallback cannot work: one sentence that says why and what to do, no stack.
      const bad = runFallback(asked, '/dev/null/postpilot', await freePort());
      expect(bad.status).toBe(3);
      expect(bad.stdout.trim()).toMatch(/^Postgres cannot run as root.*\/dev\/null\/postpilot.*ordinary user.*\.$/);
      expect(bad.stdout.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    } else {
      expect(report).toMatchObject({ mode: 'self', dataDir: asked });
    }
    expect(statSync(home).mode & 0o777).toBe(0o700);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}, 60_000);

test('a Postgres that cannot start (its port taken) is one clear sentence, not a stack trace', async () => {
  const blocker = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  try {
    const r = runFallback(join(clone, '.data-busy', 'pg'), join(home, 'unused'), blocker.port, true);
    expect(r.status).toBe(3);
    expect(r.stdout.trim()).toMatch(new RegExp(`^Postgres did not start on port ${blocker.port} \\(.*\\); see .*postgres\\.log\\.$`));
  } finally {
    blocker.stop(true);
  }
}, 60_000);

/** Starts Postgres in the clone through lib/pg-server.ts with namespaces off; prints JSON or the error sentence. */
function runFallback(dataDir: string, fallbackBase: string, port: number, namespaces = false) {
  const script = `
    import { startPgServer, PgStartError } from './lib/pg-server.ts';
    import pg from 'pg';
    try {
      const s = await startPgServer({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, user: 'postgres', password: 'postgres',
        logFile: ${JSON.stringify(join(clone, 'postgres.log'))}, namespaces: ${namespaces}, fallbackBase: ${JSON.stringify(fallbackBase)} });
      const c = new pg.Client({ connectionString: s.url() });
      await c.connect();
      const { rows } = await c.query('select 1 as answer');
      await c.end();
      await s.stop();
      console.log(JSON.stringify({ mode: s.mode, dataDir: s.dataDir, answer: rows[0].answer }));
    } catch (e) {
      if (!(e instanceof PgStartError)) throw e;
      console.log(e.message);
      process.exit(3);
    }`;
  return spawnSync(BUN, ['-e', script], { cwd: clone, encoding: 'utf8', timeout: 50_000 });
}
