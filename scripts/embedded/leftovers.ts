// A start after a launcher that did not stop its children (killed with SIGKILL, out of memory, its
// terminal gone) on a system where they do not die with it (no parent-death signal: see
// lib/process-lifetime.ts): that run's Postgres and Temporal dev server may still run for this
// data folder, holding their ports. They are found through their pid files (Postgres's
// postmaster.pid, DATA_DIR/temporal.pid) and the processes listening on the ports, and stopped
// only when they are provably this folder's: a Postgres working in this folder's data directory, a
// Temporal dev server on this folder's SQLite file. Anything else on a port is another copy's and
// stays untouched; the port check then refuses the start.
import { readFileSync, rmSync } from 'node:fs';
import { clearStoppedPostmaster, readPostmasterPid } from '../../lib/pg-server.ts';
import { processInfo, stopProcesses, tcpListeners, worksIn, type ProcessInfo } from '../../lib/process-lifetime.ts';

interface Leftover {
  pid: number;
  what: 'Postgres' | 'the Temporal dev server';
  /** The signal that shuts it down cleanly: a fast shutdown for Postgres. */
  signal: NodeJS.Signals;
  /** Postgres: its data directory, and what its postmaster.pid said. */
  pg?: { dataDir: string; pid: number; seenAs: string };
}

export interface LeftoverSearch {
  /** DATA_DIR, for messages. */
  dataRoot: string;
  /** Where this folder's Postgres data may be (lib/pg-server.ts postgresDataDirs). */
  pgDataDirs: string[];
  temporalDb: string;
  temporalPidFile: string;
  /** Postgres's, Temporal's and the Temporal UI's ports. */
  ports: number[];
  say: (message: string) => void;
}

/** Longer than a fast shutdown or a Temporal dev server's stop take. */
const GRACE_MS = 15_000;

export async function stopLeftovers(o: LeftoverSearch): Promise<void> {
  const found = new Map<number, Leftover>();
  const consider = (pid: number | undefined) => {
    if (pid === undefined || pid === process.pid || found.has(pid)) return;
    const info = processInfo(pid);
    if (!info) return;
    const pgDataDir = o.pgDataDirs.find((dir) => isPostgresOf(info, dir));
    if (pgDataDir) {
      const said = readPostmasterPid(pgDataDir);
      const seenAs = said?.pid === pid ? said.seenAs : '';
      found.set(pid, { pid, what: 'Postgres', signal: 'SIGINT', pg: { dataDir: pgDataDir, pid, seenAs } });
    } else if (isTemporalOf(info, o.temporalDb)) found.set(pid, { pid, what: 'the Temporal dev server', signal: 'SIGTERM' });
  };
  for (const dir of o.pgDataDirs) consider(readPostmasterPid(dir)?.pid);
  consider(readPidFile(o.temporalPidFile));
  for (const port of o.ports) for (const pid of tcpListeners(port)) consider(pid);
  if (!found.size) return;

  // A launcher that still runs for this folder owns them: two launchers must not share one folder.
  for (const l of found.values()) {
    const ppid = processInfo(l.pid)?.ppid;
    const parent = ppid && ppid > 1 ? processInfo(ppid) : undefined;
    if (parent?.argv.some((a) => /(^|\/)dev\.ts$/.test(a))) {
      throw new Error(
        `the service is already running from ${o.dataRoot} (launcher pid ${parent.pid}). ` +
          'Stop it first, or give this copy a DATA_DIR of its own.',
      );
    }
  }

  const list = [...found.values()];
  o.say(`stopping what an earlier run left running for ${o.dataRoot}: ${list.map((l) => `${l.what} (pid ${l.pid})`).join(', ')}`);
  const still = await stopProcesses(list, GRACE_MS);
  if (still.length)
    throw new Error(`could not stop the process(es) an earlier run left running for ${o.dataRoot}: pid ${still.join(', ')}`);
  for (const l of list) if (l.pg) clearStoppedPostmaster(l.pg.dataDir, l.pg);
  rmSync(o.temporalPidFile, { force: true });
}

/** The postmaster of `dir`: it works in its data directory (or, elsewhere than Linux, names it with -D). */
function isPostgresOf(p: ProcessInfo, dir: string): boolean {
  if (!p.argv.some((a) => /(^|\/)postgres$/.test(a))) return false;
  const d = p.argv.indexOf('-D');
  return worksIn(p.pid, dir) || (d >= 0 && p.argv[d + 1] === dir);
}

function isTemporalOf(p: ProcessInfo, dbFile: string): boolean {
  const i = p.argv.indexOf('--db-filename');
  return (i >= 0 && p.argv[i + 1] === dbFile) || p.argv.includes(`--db-filename=${dbFile}`);
}

function readPidFile(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
