// The worker's workflow cache is bounded (flat worker memory): a post's workflow sleeps
// for days, and one kept cached costs memory for nothing. The worker built by createWorker
// (worker/index.ts) carries WORKFLOW_TUNING, and with more workflows asleep than the cache holds,
// the SDK itself reports no more than that many cached — the rest wait on the server only, and
// still run to their end when their timers fire (replayed from their histories).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalTestServer } from '../lib/temporal-binaries.ts';
import { createWorker, WORKFLOW_TUNING, type WorkerGroup } from '../worker/index.ts';
import { PING_WORKFLOW_TYPE, type PingWorkflow } from '../workflows/ping-types.ts';
import { harness } from './harness/index.ts';

let env: TestWorkflowEnvironment;
let client: Client;
let group: WorkerGroup;
let running: Promise<void>;
const taskQueue = `cache-${randomUUID()}`;

beforeAll(async () => {
  const h = await harness();
  // Its own server: the clock moves only when this file says so.
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: findTemporalTestServer() } },
  });
  client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  group = await createWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    deps: { orm: h.orm },
    workflowBundle: await h.workflowBundle(),
  });
  running = group.run();
});
afterAll(async () => {
  group?.shutdown();
  await running?.catch(() => {});
  await env?.teardown();
});

describe('worker: bounded workflow cache', () => {
  test('the main worker has a bounded cache and the tuned pollers; the publish workers cache nothing', () => {
    const [main, ...publishers] = group.workers;
    expect(main!.options.maxCachedWorkflows).toBe(WORKFLOW_TUNING.maxCachedWorkflows);
    expect(WORKFLOW_TUNING.maxCachedWorkflows).toBeLessThanOrEqual(500);
    expect(main!.options.stickyQueueScheduleToStartTimeoutMs).toBe(5000);
    expect(main!.options.nonStickyToStickyPollRatio).toBe(WORKFLOW_TUNING.nonStickyToStickyPollRatio);
    for (const p of publishers) expect(p.options.workflowBundle ?? p.options.workflowsPath).toBeUndefined();
  });

  test('more workflows asleep than the cache holds: at most the cache size stay cached, and every one still finishes', async () => {
    const n = WORKFLOW_TUNING.maxCachedWorkflows + 30;
    const handles = [];
    for (let i = 0; i < n; i += 30) {
      handles.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(30, n - i) }, (_, k) =>
            client.workflow.start<PingWorkflow>(PING_WORKFLOW_TYPE, {
              taskQueue,
              workflowId: `cache-${i + k}-${randomUUID()}`,
              args: [{ message: `asleep ${i + k}`, delay: '1 day' }],
            }),
          ),
        )),
      );
    }
    // Every one has run its first task: asleep on its timer.
    const TIMER_STARTED = temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED;
    let pending = handles;
    for (let round = 0; pending.length && round < 300; round++) {
      const asleep = await Promise.all(
        pending.map(async (h) => ((await h.fetchHistory()).events ?? []).some((e) => e.eventType === TIMER_STARTED)),
      );
      pending = pending.filter((_, i) => !asleep[i]);
      if (pending.length) await Bun.sleep(100);
    }
    expect(pending).toHaveLength(0);
    const cached = group.workers[0]!.getStatus().numCachedWorkflows;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThanOrEqual(WORKFLOW_TUNING.maxCachedWorkflows);

    // A day later every timer fires; those evicted are replayed from their histories and finish too.
    await env.sleep('1 day');
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.every((r, i) => r.echo === `asleep ${i}`)).toBe(true);
  });
});
