// Real service processes for outage tests: a Temporal dev server that a test may kill (and start
// again on its SQLite file), the production entry points (api/main.ts, worker/main.ts) as child
// processes, and a worker process that a test may SIGKILL and replace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import type { Subprocess } from 'bun';
import { findTemporalCli } from '../../lib/temporal-binaries.ts';
import { freePort } from './ports.ts';

const ROOT = resolve(import.meta.dir, '../..');

export interface KillableTemporal {
  address: string;
  /** Whether the server process runs (not killed, not exited). */
  alive: () => boolean;
  /** Its last lines on stderr (errors only: it runs with --log-level error), for failure messages. */
  lines: string[];
  /** SIGKILL: an outage, not a shutdown. */
  kill: () => Promise<void>;
  /**
   * A new dev server on the same address (after kill). With `persistent`, it opens the same
   * SQLite file: workflows, timers and histories are as the killed one left them; without it, an
   * empty server.
   */
  restart: () => Promise<void>;
}

/** A dev server that exited before it answered (a start worth trying again). */
class ServerExited extends Error {}

/**
 * A Temporal dev server takes its HTTP, metrics and internal service ports as random free ports
 * at start: beside other servers starting at the same moment, one of them can be taken before it
 * binds, and the server exits. `start` is tried up to three times while `retryable` says so of
 * its failure; `before(attempt)` runs before each try after the first.
 */
export async function startDevServerTries<T>(
  start: () => Promise<T>,
  retryable: (e: unknown) => boolean,
  before: (attempt: number) => Promise<void> = async () => {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (attempt > 1) await before(attempt);
      return await start();
    } catch (e) {
      if (!retryable(e) || attempt === 3) throw e;
      await Bun.sleep(200 * attempt);
    }
  }
}

/**
 * A Temporal dev server (no UI) on a free port, with the search attributes registered: in memory,
 * or with `persistent` in a throwaway SQLite file that outlives a kill (the embedded stack's way).
 */
export async function startKillableTemporal(opts: { persistent?: boolean } = {}): Promise<KillableTemporal> {
  let port = await freePort();
  const dir = opts.persistent ? mkdtempSync(join(tmpdir(), 'postpilot-temporal-')) : undefined;
  let address = `127.0.0.1:${port}`;
  let proc: Subprocess<'ignore', 'ignore', 'pipe'>;
  const lines: string[] = [];
  const spawnOnce = async () => {
    proc = Bun.spawn(
      [
        findTemporalCli(process.env.TEMPORAL_CLI_PATH),
        'server',
        'start-dev',
        '--headless',
        ...(dir ? ['--db-filename', join(dir, 'temporal.db')] : []),
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--log-level',
        'error',
        '--search-attribute',
        'OrganizationId=Keyword',
        '--search-attribute',
        'PostId=Keyword',
      ],
      { stdout: 'ignore', stderr: 'pipe', stdin: 'ignore' },
    );
    keepTail(proc.stderr, lines);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (proc.exitCode !== null)
        throw new ServerExited(`the Temporal dev server exited (code ${proc.exitCode}): ${lines.slice(-5).join(' | ')}`);
      try {
        const conn = await Connection.connect({ address, connectTimeout: 1000 });
        await conn.workflowService.describeNamespace({ namespace: 'default' });
        await conn.close();
        break;
      } catch (e) {
        if (Date.now() > deadline) {
          proc.kill('SIGKILL');
          throw new Error(`the Temporal dev server did not come up: ${(e as Error).message}`);
        }
        await Bun.sleep(200);
      }
    }
  };
  // A server that exits before it answers is started again: on a new port when `move` allows
  // (a restart keeps its address).
  const spawn = (move: boolean) =>
    startDevServerTries(
      spawnOnce,
      (e) => e instanceof ServerExited,
      async () => {
        if (!move) return;
        port = await freePort();
        address = `127.0.0.1:${port}`;
      },
    );
  const kill = async () => {
    proc.kill('SIGKILL');
    await proc.exited;
  };
  await spawn(true);
  // Ends with the test process even when a test forgets it.
  process.once('exit', () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get address() {
      return address;
    },
    alive: () => proc.exitCode === null && proc.signalCode === null,
    lines,
    kill,
    restart: async () => {
      if (proc.exitCode === null && proc.signalCode === null) await kill();
      await spawn(false);
    },
  };
}

export interface ServiceProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** The API's port (API processes only). */
  port: number;
  /** Every line written to stdout and stderr so far (for failure messages). */
  lines: string[];
  alive: () => boolean;
  stop: () => Promise<void>;
}

/** How long a service process may take to log that it is ready (a worker bundles its workflows first). */
const READY_MS = 60_000;

/** Appends a stream's lines to `lines`, keeping the last 200. */
function keepTail(stream: ReadableStream<Uint8Array>, lines: string[]): void {
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      lines.push(...decoder.decode(chunk, { stream: true }).split('\n').filter(Boolean));
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    }
  })();
}

/**
 * Runs api/main.ts or worker/main.ts with the given environment and waits until it logs
 * `listening` (API) or `polling` (worker).
 */
export async function startService(kind: 'api' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
  const storageDir = mkdtempSync(join(tmpdir(), 'postpilot-outage-'));
  const proc = Bun.spawn([process.execPath, `${kind}/main.ts`], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      STORAGE_DIR: storageDir,
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const lines: string[] = [];
  keepTail(proc.stderr, lines);
  const ready = kind === 'api' ? 'listening' : 'polling';
  let port = 0;
  let resolveReady!: () => void;
  const isReady = new Promise<void>((r) => (resolveReady = r));
  void (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; port?: number };
          if (entry.msg === ready) {
            port = entry.port ?? 0;
            resolveReady();
          }
        } catch {
          /* not a log line */
        }
      }
    }
  })();
  const exited = proc.exited.then((code) => {
    throw new Error(`${kind} process exited (code ${code}) before it was ready:\n${lines.join('\n')}`);
  });
  // A process that neither gets ready nor exits (a server it cannot reach, a start that hangs)
  // fails the test here, with what it logged, rather than at the test's own timeout.
  let timer: Timer | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${kind} process not ${ready} after ${READY_MS / 1000} s:\n${lines.slice(-40).join('\n')}`));
    }, READY_MS);
  });
  try {
    await Promise.race([isReady, exited, stuck]);
  } finally {
    clearTimeout(timer);
  }
  exited.catch(() => {});
  return {
    proc,
    get port() {
      return port;
    },
    lines,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
      if (!done) proc.kill('SIGKILL');
      await proc.exited;
      rmSync(storageDir, { recursive: true, force: true });
    },
  };
}

export interface KillableWorker {
  /** The worker process running now. */
  readonly current: ServiceProcess;
  /**
   * SIGKILL, as a crash or an OOM kill does: no shutdown, running activities are neither finished
   * nor reported (Temporal retries them once their heartbeat or start-to-close timeout passes).
   */
  kill: () => Promise<void>;
  /** kill() (when still alive), then a new worker process with the same environment, once it polls. */
  killAndRestart: () => Promise<ServiceProcess>;
  stop: () => Promise<void>;
}

/**
 * worker/main.ts as a child process that a test may kill for real (SIGKILL) and replace. For a
 * graceful stop (SIGTERM: running activities finish) use `current.stop()` or, in process,
 * post-stack.ts's restartWorker.
 */
export async function startKillableWorker(env: Record<string, string>): Promise<KillableWorker> {
  let current = await startService('worker', env);
  const gone: ServiceProcess[] = [];
  const kill = async () => {
    if (current.alive()) current.proc.kill('SIGKILL');
    await current.proc.exited;
  };
  const killAndRestart = async () => {
    await kill();
    gone.push(current);
    current = await startService('worker', env);
    return current;
  };
  return {
    get current() {
      return current;
    },
    kill,
    killAndRestart,
    stop: async () => {
      await Promise.all([...gone, current].map((p) => p.stop()));
    },
  };
}
