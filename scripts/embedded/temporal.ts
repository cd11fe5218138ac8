// The embedded default's Temporal: the Temporal CLI dev server with a persistent SQLite file
// and the web UI. It gets SIGTERM when the launcher dies, where the system allows it
// (lib/process-lifetime.ts); its pid file lets the next start find it where not
// (scripts/embedded/leftovers.ts).
import { openSync, rmSync, writeFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { diesWithParent } from '../../lib/process-lifetime.ts';

export interface RunningTemporal {
  address: string;
  stop: () => Promise<void>;
}

export async function startTemporalDevServer(opts: {
  cli: string;
  dbFile: string;
  port: number;
  uiPort: number;
  namespace: string;
  logFile: string;
  /** Holds the server's pid while it runs (the launcher's; a throwaway server needs none). */
  pidFile?: string;
  /** `PRAGMA=VALUE` settings of the SQLite file (lib/embedded.ts EMBEDDED_TEMPORAL_SQLITE_PRAGMAS); none: the CLI's defaults. */
  sqlitePragmas?: string[];
  /** `KEY=JSON_VALUE` dynamic config values (benchmarks only; the embedded default sets none). */
  dynamicConfig?: string[];
}): Promise<RunningTemporal> {
  const out = openSync(opts.logFile, 'a');
  const proc = Bun.spawn(
    diesWithParent(
      [
        opts.cli,
        'server',
        'start-dev',
        '--db-filename',
        opts.dbFile,
        ...(opts.sqlitePragmas ?? []).flatMap((p) => ['--sqlite-pragma', p]),
        ...(opts.dynamicConfig ?? []).flatMap((v) => ['--dynamic-config-value', v]),
        '--ip',
        '127.0.0.1',
        '--port',
        String(opts.port),
        '--ui-port',
        String(opts.uiPort),
        '--namespace',
        opts.namespace,
        '--log-level',
        'warn',
        // Find posts in the web UI: PostId = "post_…" or OrganizationId = "org_…".
        '--search-attribute',
        'OrganizationId=Keyword',
        '--search-attribute',
        'PostId=Keyword',
      ],
      'TERM',
    ),
    // A session of its own: a terminal's Ctrl-C reaches only the launcher, which stops this server
    // after the worker has drained (a worker that loses its server mid-shutdown complains).
    { stdout: out, stderr: out, stdin: 'ignore', detached: true },
  );
  if (opts.pidFile) writeFileSync(opts.pidFile, `${proc.pid}\n`);
  const forgetPid = () => opts.pidFile && rmSync(opts.pidFile, { force: true });
  // …and should the launcher exit without stopping it (a failed start, a crash), it goes too.
  const orphan = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    forgetPid();
  };
  process.once('exit', orphan);
  const address = `127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the Temporal dev server exited (code ${proc.exitCode}); see ${opts.logFile}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      await conn.workflowService.describeNamespace({ namespace: opts.namespace });
      await conn.close();
      break;
    } catch (e) {
      if (Date.now() > deadline) {
        proc.kill();
        throw new Error(`the Temporal dev server did not come up on ${address}: ${(e as Error).message}; see ${opts.logFile}`);
      }
      await Bun.sleep(250);
    }
  }
  return {
    address,
    stop: async () => {
      process.off('exit', orphan);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) {
        proc.kill('SIGKILL');
        await proc.exited;
      }
      forgetPid();
    },
  };
}
