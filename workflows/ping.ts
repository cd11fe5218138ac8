// A trivial workflow that proves the Temporal wiring end to end: a durable timer, then an
// activity that touches Postgres.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { PingInput } from './ping-types.ts';

const { ping } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  // Safe to retry: ping only reads.
  retry: { maximumAttempts: 3 },
});

export async function pingWorkflow(input: PingInput): Promise<{ echo: string; database: string }> {
  if (input.delay !== undefined) await sleep(input.delay as number);
  return ping(input.message);
}
