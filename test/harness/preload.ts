// bun test preload: hooks here run once for the whole run (in one process), or after each file of a
// parallel worker (scripts/test.ts), which keeps its harness until it ends.
import { afterAll } from 'bun:test';
import { stopHarness } from './index.ts';
import { stopSeaweed } from './seaweed.ts';
import { stopPds } from './pds.ts';
import { setPasswordHashCost } from '../../services/users.ts';

// The fakes listen on 127.0.0.1: config read from the environment (web app, CLI and API child
// processes) may reach private addresses, as in the embedded dev stack (lib/outbound.ts).
process.env.OUTBOUND_ALLOW_PRIVATE ??= 'true';

// People made in the tests' own processes get argon2id at its lowest cost (each hash and each
// sign-in otherwise costs a quarter of a second of CPU); the service's processes keep Bun's.
setPasswordHashCost({ memoryCost: 64, timeCost: 1 });

afterAll(async () => {
  // A parallel worker (scripts/test.ts) runs this after each of its files: its next file keeps the harness.
  if (process.env.BUN_TEST_WORKER_ID) return;
  await stopSeaweed();
  await stopPds();
  await stopHarness();
});
