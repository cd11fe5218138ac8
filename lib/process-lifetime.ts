// Child processes that do not outlive the process that starts them, and a look at processes that
// an earlier run left behind.
//
// On Linux a child can ask for a signal when its parent dies (prctl PR_SET_PDEATHSIG); Bun cannot
// set it on spawn, so util-linux's `setpriv --pdeathsig` (2.33 and later) sets it and then execs
// the program in the same process. Where that is missing (older util-linux, other systems) a
// child is spawned as it is, and whoever starts it next cleans up after a crash instead
// (scripts/embedded/leftovers.ts). The signal is tied to the thread that spawns the child: here
// the JavaScript thread, which lives as long as the process.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';

export type DeathSignal = 'INT' | 'TERM' | 'KILL';

let pdeathsig: boolean | undefined;

/** Whether `setpriv --pdeathsig` works on this machine (asked once per process). */
export function canSetParentDeathSignal(): boolean {
  if (pdeathsig === undefined) {
    pdeathsig =
      process.platform === 'linux' &&
      spawnSync('setpriv', ['--pdeathsig', 'TERM', '--', 'true'], { cwd: '/', stdio: 'ignore', timeout: 10_000 }).status === 0;
  }
  return pdeathsig;
}

/** The same command, made to receive `signal` when this process dies (where the system allows it). */
export function diesWithParent(argv: string[], signal: DeathSignal): string[] {
  return canSetParentDeathSignal() ? ['setpriv', `--pdeathsig=${signal}`, '--', ...argv] : argv;
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  argv: string[];
}

/** A running process's parent and command line; undefined when it is gone or a zombie. */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (!Number.isInteger(pid) || pid <= 0 || !signalable(pid)) return undefined;
  if (existsSync('/proc/self/stat')) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may itself hold spaces.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') return undefined;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.at(-1) === '') argv.pop();
      return { pid, ppid: Number(ppid), argv };
    } catch {
      return undefined;
    }
  }
  // Without /proc: ps, whose command column joins the arguments with spaces.
  const r = spawnSync('ps', ['-o', 'ppid=,stat=,args=', '-p', String(pid)], { encoding: 'utf8' });
  const m = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(r.stdout ?? '');
  if (r.status !== 0 || !m || m[2]!.startsWith('Z')) return undefined;
  return { pid, ppid: Number(m[1]), argv: m[3]!.trim().split(/\s+/) };
}

export function isRunning(pid: number): boolean {
  return processInfo(pid) !== undefined;
}

function signalable(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process works in `dir` (Postgres works in its data directory). Compared by device
 * and inode, so a process in another mount namespace that sees the folder under another path
 * (a bind mount) counts too. Linux only; false elsewhere.
 */
export function worksIn(pid: number, dir: string): boolean {
  try {
    const a = statSync(`/proc/${pid}/cwd`);
    const b = statSync(dir);
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/**
 * The processes listening on a TCP port of this machine (any address), as far as this user may
 * see them: the socket's inode from /proc/net/tcp{,6}, then the process holding it. Linux only;
 * empty elsewhere.
 */
export function tcpListeners(port: number): number[] {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // f[1] local address "ADDR:PORT" (hex), f[3] state (0A: LISTEN), f[9] inode.
      if (f.length > 9 && f[3] === '0A' && Number.parseInt(f[1]!.split(':')[1]!, 16) === port) inodes.add(`socket:[${f[9]}]`);
    }
  }
  if (!inodes.size) return [];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) {
          pids.push(Number(entry));
          break;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return pids;
}

/**
 * Stops processes: each gets its signal (the one that shuts it down cleanly), then SIGKILL if it
 * is still running after `graceMs`. Returns the pids that still run after that.
 */
export async function stopProcesses(targets: { pid: number; signal: NodeJS.Signals }[], graceMs: number): Promise<number[]> {
  const send = (pid: number, signal: NodeJS.Signals) => {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  };
  const until = async (ms: number) => {
    const deadline = Date.now() + ms;
    let running = targets.filter((t) => isRunning(t.pid));
    while (running.length && Date.now() < deadline) {
      await Bun.sleep(100);
      running = running.filter((t) => isRunning(t.pid));
    }
    return running;
  };
  for (const t of targets) send(t.pid, t.signal);
  const stubborn = await until(graceMs);
  for (const t of stubborn) send(t.pid, 'SIGKILL');
  return (await until(5_000)).map((t) => t.pid);
}
