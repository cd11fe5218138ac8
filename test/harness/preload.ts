// bun test preload: hooks here run once for the whole run.
import { afterAll } from 'bun:test';
import { stopHarness } from './index.ts';
import { stopSeaweed } from './seaweed.ts';
import { stopPds } from './pds.ts';

// The fakes listen on 127.0.0.1: config read from the environment (web app, CLI and API child
// processes) may reach private addresses, as in the embedded dev stack (lib/outbound.ts).
process.env.OUTBOUND_ALLOW_PRIVATE ??= 'true';

afterAll(async () => {
  await stopSeaweed();
  await stopPds();
  await stopHarness();
});
