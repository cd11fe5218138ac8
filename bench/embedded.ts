// The process users start: `npm start` (scripts/dev.ts: embedded Postgres, the Temporal dev
// server, and the API and the worker in ONE Bun process), launched in a throwaway data folder on
// free ports. The benchmark reaches its Postgres and its Temporal server as any client would.
// BENCH_PROFILE=<dir>: the launcher runs under Bun's CPU profiler (markdown, written at its stop).
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createOrm, type Orm } from '../db/orm.ts';
import { embeddedDatabaseUrl } from '../lib/embedded.ts';
import { loadConfig } from '../lib/config.ts';
import { distinctFreePorts, onStop, procCpuMs, profileFlags, say } from './stack.ts';

const ROOT = resolve(import.meta.dir, '..');

export interface EmbeddedService {
  apiUrl: string;
  /** The launcher's pid: the API and the worker run in it. */
  pid: number;
  orm: Orm;
  client: Client;
  taskQueue: string;
  /** CPU ms so far of the launcher process (API + worker). */
  cpuMs: () => number;
  dir: string;
}

export async function startEmbeddedService(): Promise<EmbeddedService> {
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-bench-embedded-'));
  onStop('embedded data folder', async () => {
    if (process.env.BENCH_KEEP === '1') say(`kept ${dir} (BENCH_KEEP=1)`);
    else rmSync(dir, { recursive: true, force: true });
  });
  const [port, pgPort, temporalPort, uiPort] = (await distinctFreePorts(4)) as [number, number, number, number];
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATA_DIR: join(dir, 'data'),
    PORT: String(port),
    EMBEDDED_PG_PORT: String(pgPort),
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_UI_PORT: String(uiPort),
  };
  const log = join(dir, 'launcher.log');
  const out = openSync(log, 'a');
  const profile = process.env.BENCH_PROFILE;
  const argv = [process.execPath, ...profileFlags(), 'scripts/dev.ts'];
  say(`npm start's launcher (scripts/dev.ts) on port ${port}, data in ${dir}${profile ? `, CPU profile into ${profile}` : ''}`);
  const proc = Bun.spawn(argv, { cwd: ROOT, env, stdin: 'ignore', stdout: out, stderr: out });
  onStop('embedded launcher', async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGINT');
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(60_000).then(() => false)]);
    if (!exited) proc.kill('SIGKILL');
    await proc.exited;
  });
  const deadline = Date.now() + 180_000;
  while (!/API on http/.test(readFileSync(log, 'utf8'))) {
    if (proc.exitCode !== null) throw new Error(`the launcher exited (${proc.exitCode}):\n${readFileSync(log, 'utf8').slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`the launcher did not start within 3 minutes; see ${log}`);
    await Bun.sleep(100);
  }
  const config = loadConfig(env);
  const orm = await createOrm(embeddedDatabaseUrl(config), 4);
  onStop('ORM (embedded)', () => orm.close());
  const connection = await Connection.connect({ address: config.temporal.address });
  onStop('Temporal client (embedded)', () => connection.close());
  const client = new Client({ connection, namespace: config.temporal.namespace });
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    pid: proc.pid,
    orm,
    client,
    taskQueue: config.temporal.taskQueue,
    cpuMs: () => procCpuMs(proc.pid),
    dir,
  };
}

/** A bare Elysia route in a Bun process of its own (bench/bare-server.ts): the HTTP ceiling. */
export async function startBareServer(): Promise<{ url: string; pid: number; cpuMs: () => number }> {
  const proc = Bun.spawn([process.execPath, join(ROOT, 'bench/bare-server.ts')], { cwd: ROOT, stdout: 'pipe', stderr: 'inherit' });
  onStop('bare server', async () => {
    proc.kill('SIGTERM');
    await proc.exited;
  });
  const reader = proc.stdout.getReader();
  let text = '';
  while (!/listening (\d+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the bare server exited before listening');
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const port = /listening (\d+)/.exec(text)![1];
  return { url: `http://127.0.0.1:${port}/bare`, pid: proc.pid, cpuMs: () => procCpuMs(proc.pid) };
}
