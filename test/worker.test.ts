// The Temporal wiring, proven before posts arrive: the real worker (createWorker) runs a
// workflow with a durable timer and an activity that reaches Postgres, on the time-skipping server.
import { describe, expect, test } from 'bun:test';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalTestServer } from '../lib/temporal-binaries.ts';
import { createWorker } from '../worker/index.ts';
import { ensureSearchAttributes } from '../worker/temporal.ts';
import { PING_WORKFLOW_TYPE, type PingWorkflow } from '../workflows/ping-types.ts';
import { harness } from './harness/index.ts';

describe('worker', () => {
  test('pingWorkflow: sleeps 2 days of workflow time, then its activity queries Postgres', async () => {
    const h = await harness();
    // A time-skipping server of its own: the shared one's clock is held back by any workflow another
    // file of the same worker process left waiting on a worker that is gone.
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: findTemporalTestServer() } },
    });
    await ensureSearchAttributes(env.connection, env.namespace ?? 'default');
    try {
      const taskQueue = `test-${randomUUID()}`;
      const worker = await createWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        deps: { orm: h.orm },
        workflowBundle: await h.workflowBundle(),
      });
      const started = Date.now();
      const result = await worker.runUntil(
        env.client.workflow.execute<PingWorkflow>(PING_WORKFLOW_TYPE, {
          taskQueue,
          workflowId: `ping-${randomUUID()}`,
          args: [{ message: 'hello', delay: '2 days' }],
        }),
      );
      expect(result.echo).toBe('hello');
      expect(result.database).toMatch(/^PostgreSQL \d+/);
      // Time skipping: two days of workflow time passed in (much) less than a minute of real time.
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      await env.teardown();
    }
  });
});
