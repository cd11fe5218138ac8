// bun test preload: hooks here run once for the whole run.
import { afterAll } from 'bun:test';
import { stopHarness } from './index.ts';
import { stopSeaweed } from './seaweed.ts';
import { stopPds } from './pds.ts';

afterAll(async () => {
  await stopSeaweed();
  await stopPds();
  await stopHarness();
});
