// Real service processes for outage tests: a Temporal dev server that a test may kill, and the
// production entry points (api/main.ts, worker/main.ts) as child processes.
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
  /** SIGKILL: an outage, not a shutdown. */
  kill: () => Promise<void>;
}

/** An in-memory Temporal dev server (no UI) on a free port, with the search attributes registered. */
export async function startKillableTemporal(): Promise<KillableTemporal> {
  const port = await freePort();
  const proc = Bun.spawn(
    [
      findTemporalCli(process.env.TEMPORAL_CLI_PATH),
      'server',
      'start-dev',
      '--headless',
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
    { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' },
  );
  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the Temporal dev server exited (code ${proc.exitCode})`);
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
  return {
    address,
    kill: async () => {
      proc.kill('SIGKILL');
      await proc.exited;
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
  void (async () => {
    for await (const chunk of proc.stderr) lines.push(...new TextDecoder().decode(chunk).split('\n').filter(Boolean));
  })();
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
  await Promise.race([isReady, exited]);
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
