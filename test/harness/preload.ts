// bun test preload: hooks here run once for the whole run.
import { afterAll } from 'bun:test';
import { stopHarness } from './index.ts';

afterAll(async () => {
  await stopHarness();
});
