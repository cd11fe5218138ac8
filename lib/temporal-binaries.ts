// Finds the Temporal CLI (dev server) and the time-skipping test server (DESIGN.md §2):
// an explicit path first, then PATH, then the project's own copy installed by scripts/setup.sh.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const PROJECT_ROOT = resolve(import.meta.dir, '..');
const LOCAL_BIN = resolve(PROJECT_ROOT, '.tools/temporal/bin');

function find(explicit: string | undefined, onPath: string, local: string, hint: string): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`${hint} points at ${explicit}, which does not exist`);
    return explicit;
  }
  const which = Bun.which(onPath);
  if (which) return which;
  const path = resolve(LOCAL_BIN, local);
  if (existsSync(path)) return path;
  throw new Error(`cannot find the ${onPath} binary: set ${hint}, put it on PATH, or run scripts/setup.sh`);
}

/** `explicit`: TEMPORAL_CLI_PATH, as lib/config.ts read it (Config.temporal.cliPath). */
export function findTemporalCli(explicit?: string): string {
  return find(explicit, 'temporal', 'temporal', 'TEMPORAL_CLI_PATH');
}

export function findTemporalTestServer(explicit = process.env.TEMPORAL_TEST_SERVER_PATH): string {
  return find(explicit, 'temporal-test-server', 'temporal-test-server', 'TEMPORAL_TEST_SERVER_PATH');
}
