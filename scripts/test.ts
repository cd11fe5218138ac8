// The test suite, as `npm test` runs it: `bun test` in two worker processes (`--parallel=2
// --no-isolate`), each keeping one shared harness (Postgres, the Temporal test server, SeaweedFS,
// the PDS) across the files it runs, slowest files first (test/timings.json).
//
// A parallel worker runs the preload's afterAll after each of its files, so the harness is not
// stopped there (test/harness/preload.ts); a worker is ended without an exit event, and its
// children stop with it: Postgres through its parent-death signal, SeaweedFS and the PDS through
// their watchdogs. The SDK's time-skipping test servers have no such link (the SDK spawns them
// from a thread of its own, which a parent-death signal would follow), so this script ends those
// the run's workers left behind (this checkout's binary, parent gone) once the run is over.
//
// `bun scripts/test.ts [bun test arguments]`: e.g. `bun scripts/test.ts test/feeds.test.ts`.
// TEST_WORKERS=1 runs the files one after another in one process (the harness stopped at the end).
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { processInfo } from '../lib/process-lifetime.ts';

const ROOT = resolve(import.meta.dir, '..');
const WORKERS = Number(process.env.TEST_WORKERS ?? 2);
const TEST_SERVER = join(ROOT, '.tools', 'temporal', 'bin', 'temporal-test-server');

/** Test servers of this checkout whose parent is gone (their worker ended). Linux (/proc) only. */
function orphanedTestServers(): number[] {
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((e) => /^\d+$/.test(e))
    .map((e) => processInfo(Number(e)))
    .filter((p) => p !== undefined && p.ppid === 1 && p.argv[0] === TEST_SERVER)
    .map((p) => p!.pid);
}

const args = [
  join(ROOT, '.tools', 'bin', 'bun'),
  'test',
  '--timeout',
  '60000',
  ...(WORKERS > 1 ? [`--parallel=${WORKERS}`, '--no-isolate', `--timings=${join(ROOT, 'test', 'timings.json')}`] : []),
  ...process.argv.slice(2),
];
const before = new Set(orphanedTestServers());
const run = Bun.spawn(args, { cwd: ROOT, stdio: ['inherit', 'inherit', 'inherit'] });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => run.kill(signal));
const code = await run.exited;
for (const pid of orphanedTestServers()) {
  if (before.has(pid)) continue;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
process.exit(code);
