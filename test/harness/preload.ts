// bun test preload: hooks here run once for the whole run (in one process), or after each file of a
// parallel worker (scripts/test.ts), which keeps its harness until it ends.
import { afterAll } from 'bun:test';
import { stopHarness } from './index.ts';
import { stopSeaweed } from './seaweed.ts';
import { stopPds } from './pds.ts';

// The fakes listen on 127.0.0.1: config read from the environment (web app, CLI and API child
// processes) may reach private addresses, as in the embedded dev stack (lib/outbound.ts).
process.env.OUTBOUND_ALLOW_PRIVATE ??= 'true';

afterAll(async () => {
  // A parallel worker (scripts/test.ts) runs this after each of its files: its next file keeps the harness.
  if (process.env.BUN_TEST_WORKER_ID) return;
  await stopSeaweed();
  await stopPds();
  await stopHarness();
});
