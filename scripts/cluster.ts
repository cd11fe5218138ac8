// `npm run cluster`: the production topology on this machine, without Docker (docs/operations.md
// "The production topology on one machine"): Postgres, the real Temporal server on it (built from
// source by scripts/build-temporal.sh), the Temporal UI, SeaweedFS, two API processes and two
// workers.
// State in DATA_DIR/cluster (`.data/cluster`), kept across starts; `--fresh` starts from nothing.
// The Temporal UI listens on 127.0.0.1 (it has no sign-in); `--ui-host=ADDRESS` chooses another
// address (docs/operations.md "The Temporal UI").
// Ctrl-C stops everything: the APIs, the workers (they finish running activities), the UI,
// Temporal, SeaweedFS, Postgres.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../lib/config.ts';
import { assertPortsFree } from './embedded/ports.ts';
import { DEFAULT_PORTS, DEFAULT_UI_HOST, startCluster, uiUrl, type Cluster } from './cluster/stack.ts';

const say = (m: string) => console.log(`[cluster] ${m}`);
const args = process.argv.slice(2);
const dir = join(resolve(loadConfig(process.env).dataDir), 'cluster');
if (args.includes('--fresh')) rmSync(dir, { recursive: true, force: true });
const ports = DEFAULT_PORTS;
const uiHost = args.find((a) => a.startsWith('--ui-host='))?.slice('--ui-host='.length) || DEFAULT_UI_HOST;
const uiNote =
  uiHost === DEFAULT_UI_HOST
    ? '(this machine only: docs/operations.md)'
    : process.env.TEMPORAL_AUTH_ENABLED === 'true'
      ? `(listening on ${uiHost}, OIDC sign-in)`
      : `(listening on ${uiHost} WITHOUT sign-in: whoever reaches it sees every organization's workflows)`;

let cluster: Cluster | undefined;
let stopping = false;
async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  // Nothing else may hold the event loop open while the workers drain.
  const keepAlive = setInterval(() => {}, 1000);
  await cluster?.stop();
  clearInterval(keepAlive);
  say('stopped');
  process.exit(code);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(0));

try {
  await assertPortsFree({
    'API 1': ports.apis[0]!,
    'API 2': ports.apis[1]!,
    Postgres: ports.postgres,
    'Temporal frontend': ports.temporal,
    'Temporal HTTP': ports.temporalHttp,
    'Temporal history': ports.history,
    'Temporal matching': ports.matching,
    'Temporal worker': ports.temporalWorker,
    'Temporal UI': ports.ui,
    'SeaweedFS S3': ports.s3,
  });
  const t0 = performance.now();
  cluster = await startCluster({ dir, ports, workers: 2, uiHost, say });
  say(`ready in ${((performance.now() - t0) / 1000).toFixed(1)} s — state and logs in ${dir}`);
  console.log(
    [
      '',
      `  API 1              http://localhost:${ports.apis[0]}/v1`,
      `  API 2              http://localhost:${ports.apis[1]}/v1`,
      `  Temporal frontend  127.0.0.1:${ports.temporal} (gRPC), http://localhost:${ports.temporalHttp} (HTTP)`,
      cluster.ui
        ? `  Temporal UI        ${uiUrl(ports.ui, uiHost)} ${uiNote}`
        : '  Temporal UI        (not built: see scripts/build-temporal.sh)',
      `  Postgres           127.0.0.1:${ports.postgres} (databases postpilot, temporal, temporal_visibility)`,
      `  SeaweedFS S3       http://127.0.0.1:${ports.s3}`,
      `  workers            ${cluster.workers.length} (logs in ${cluster.logs})`,
      '',
      `  An organization and key:  DATABASE_URL=${cluster.appEnv.DATABASE_URL} \\`,
      '    .tools/bin/bun cli/main.ts org create --name Acme --plan PRO',
      '',
    ].join('\n'),
  );
} catch (e) {
  console.error(`[cluster] failed to start: ${(e as Error).message}`);
  await shutdown(1);
}
