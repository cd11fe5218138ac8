// The webhook outbox sweep (workflows/webhook-outbox-sweep.ts): an event committed with
// its delivery rows, whose delivery workflows were never started (the process died between the
// commit and the start), is delivered once the sweep runs — and only once, however often it runs.
// The sweep's Temporal Schedule is wired by ensureSchedules (worker/schedules.ts), proven against a
// real `temporal server start-dev` (the time-skipping server has no Schedules).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import { writeWebhookEvent } from '../domain/webhooks/outbox.ts';
import { WebhookDelivery } from '../db/entities/index.ts';
import { createLogger } from '../lib/log.ts';
import { createWorker } from '../worker/index.ts';
import { ensureSchedules, SERVICE_SCHEDULES } from '../worker/schedules.ts';
import { webhookEventWorkflowId } from '../workflows/webhook-delivery-types.ts';
import {
  WEBHOOK_OUTBOX_SWEEP_EVERY,
  WEBHOOK_OUTBOX_SWEEP_INPUT,
  WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID,
  WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
  type WebhookOutboxSweepInput,
  type WebhookOutboxSweepResult,
} from '../workflows/webhook-outbox-sweep-types.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';
import { startPostStack } from './harness/post-stack.ts';
import { startKillableTemporal } from './harness/processes.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let receiver: ReturnType<typeof Bun.serve>;
const received: { path: string; headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response('ok');
    },
  });
  stack = await startPostStack();
});
afterAll(async () => {
  await stack?.stop();
  receiver?.stop(true);
});

const at = (path: string) => received.filter((r) => r.path === path);

async function endpoint(path: string) {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  const res = await call(stack.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: 'all' },
  });
  expect(res.status).toBe(201);
  return { organizationId: org.id, id: res.body.endpoint.id as string, secret: res.body.secret as string };
}

/** Commits an event and its delivery, created `ageMs` ago, and starts nothing: a process that died right after its commit. */
async function commitWithoutDispatch(target: { organizationId: string; id: string }, ageMs: number) {
  const em = (await harness()).orm.em.fork();
  return em.transactional(async (tx) => {
    const written = await writeWebhookEvent(tx, {
      organizationId: target.organizationId,
      type: 'webhook.test',
      endpointId: target.id,
      now: new Date(Date.now() - ageMs),
      data: { endpointId: target.id, message: 'committed, never dispatched' },
    });
    await tx.flush();
    return { eventId: written.eventId, deliveryId: written.deliveryIds[0]! };
  });
}

async function row(deliveryId: string) {
  return (await harness()).orm.em.fork().findOneOrFail(WebhookDelivery, { id: deliveryId });
}

async function workflowStatus(client: Client, eventId: string): Promise<string> {
  try {
    return (await client.workflow.getHandle(webhookEventWorkflowId(eventId)).describe()).status.name;
  } catch {
    return 'NONE';
  }
}

/** Runs the sweep's workflow once on the stack's worker (what the Schedule does every 30 s). */
function sweep(input: Partial<WebhookOutboxSweepInput> = {}): Promise<WebhookOutboxSweepResult> {
  return stack.client.workflow.execute(WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE, {
    taskQueue: stack.taskQueue,
    workflowId: `sweep-${crypto.randomUUID()}`,
    args: [{ ...WEBHOOK_OUTBOX_SWEEP_INPUT, ...input }],
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

describe('webhook outbox sweep', () => {
  test('a delivery committed but never dispatched is started by the sweep and delivered, once; a fresh one is left to its dispatcher', async () => {
    const target = await endpoint('/swept');
    const lost = await commitWithoutDispatch(target, 60_000);
    const fresh = await commitWithoutDispatch(await endpoint('/fresh'), 0);
    expect(await workflowStatus(stack.client, lost.eventId)).toBe('NONE');
    expect((await row(lost.deliveryId)).workflowPending).toBe(true);

    const result = await sweep();
    expect(result.started).toBeGreaterThanOrEqual(1);
    // Younger than the grace period: its own dispatcher may still be starting it.
    expect((await row(fresh.deliveryId)).workflowPending).toBe(true);
    expect(await workflowStatus(stack.client, fresh.eventId)).toBe('NONE');
    await until('the swept delivery to arrive', () => at('/swept').length === 1);
    const got = at('/swept')[0]!;
    expect(got.headers['webhook-id']).toBe(lost.eventId);
    expect(new Webhook(target.secret).verify(got.body, got.headers)).toMatchObject({ type: 'webhook.test' });
    await until('the delivery to be recorded', async () => (await row(lost.deliveryId)).status === 'delivered');
    expect((await row(lost.deliveryId)).workflowPending).toBe(false);

    // A row whose dispatch record was lost after its workflow ran is started again, harmlessly:
    // the new run finds it delivered and sends nothing.
    await (await harness()).orm.em.fork().nativeUpdate(WebhookDelivery, { id: lost.deliveryId }, { workflowPending: true });
    const rerun = await sweep();
    expect(rerun.started + rerun.alreadyStarted).toBeGreaterThanOrEqual(1);
    expect((await row(lost.deliveryId)).workflowPending).toBe(false);
    const again = stack.client.workflow.getHandle(webhookEventWorkflowId(lost.eventId));
    expect(await again.result()).toEqual({ [lost.deliveryId]: 'delivered' });
    expect(at('/swept')).toHaveLength(1);
  });

  test("an event's three deliveries, all lost: the sweep starts the event's one workflow, and each endpoint gets the event once", async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    const paths = ['/lost-a', '/lost-b', '/lost-c'];
    for (const path of paths) {
      const res = await call(stack.app, 'POST', '/v1/webhooks', {
        key,
        body: { url: `http://127.0.0.1:${receiver.port}${path}`, events: 'all' },
      });
      expect(res.status).toBe(201);
    }
    const written = await (await harness()).orm.em.fork().transactional(async (tx) => {
      const w = await writeWebhookEvent(tx, {
        organizationId: org.id,
        type: 'webhook.test',
        // The oldest marked rows are swept first: a year old, these come before any other test's.
        now: new Date(Date.now() - 365 * 86_400_000),
        data: { message: 'committed, never dispatched' },
      });
      await tx.flush();
      return w;
    });
    expect(written.deliveryIds).toHaveLength(3);
    // One row per run: the first row's start is the whole event's.
    const result = await sweep({ limit: 1 });
    expect(result.started).toBeGreaterThanOrEqual(1);
    const outcomes = await stack.client.workflow.getHandle(webhookEventWorkflowId(written.eventId)).result();
    expect(outcomes).toEqual(Object.fromEntries(written.deliveryIds.map((id) => [id, 'delivered'])));
    for (const path of paths) expect(at(path).map((r) => r.headers['webhook-id'])).toEqual([written.eventId]);
    // One start clears the event's three marks (the sweep does not start its workflow again for the others).
    for (const id of written.deliveryIds) expect((await row(id)).workflowPending).toBe(false);
  });

  test("ensureSchedules creates the sweep's Schedule on a real Temporal server; triggered, it delivers a lost row", async () => {
    const temporal = await startKillableTemporal();
    const connection = await NativeConnection.connect({ address: temporal.address });
    const client = new Client({ connection: await Connection.connect({ address: temporal.address }) });
    const taskQueue = `sweep-${crypto.randomUUID()}`;
    const logger = createLogger({ level: 'error', write: () => {} });
    const h = await harness();
    const worker = await createWorker({
      connection,
      namespace: 'default',
      taskQueue,
      deps: { orm: h.orm, credentialsKey: h.credentialsKey, outbound: { allowPrivate: true } },
      workflowBundle: await h.workflowBundle(),
    });
    const running = worker.run();
    try {
      expect(SERVICE_SCHEDULES.map((s) => s.id)).toContain(WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID);
      // Twice: the second start of a worker updates the schedule it finds.
      await ensureSchedules(client, { taskQueue, logger });
      await ensureSchedules(client, { taskQueue, logger });
      const handle = client.schedule.getHandle(WEBHOOK_OUTBOX_SWEEP_SCHEDULE_ID);
      const d = await handle.describe();
      if (d.action.type !== 'startWorkflow') throw new Error(`unexpected action ${d.action.type}`);
      expect(d.action.workflowType).toBe(WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE);
      expect(d.action.taskQueue).toBe(taskQueue);
      expect(d.action.args).toEqual([WEBHOOK_OUTBOX_SWEEP_INPUT]);
      expect(WEBHOOK_OUTBOX_SWEEP_EVERY).toBe('30 seconds');
      expect(d.spec.intervals?.[0]?.every).toBe(30_000);

      const target = await endpoint('/scheduled');
      const lost = await commitWithoutDispatch(target, 60_000);
      await handle.trigger();
      await until('the scheduled sweep to deliver the lost row', () => at('/scheduled').length === 1);
      expect(at('/scheduled')[0]!.headers['webhook-id']).toBe(lost.eventId);
      await until('the delivery to be recorded', async () => (await row(lost.deliveryId)).status === 'delivered');
      // The row is written by the delivery's activity; the workflow completes just after it.
      await until('the delivery workflow to complete', async () => (await workflowStatus(client, lost.eventId)) === 'COMPLETED');
    } finally {
      for (const s of SERVICE_SCHEDULES)
        await client.schedule
          .getHandle(s.id)
          .delete()
          .catch(() => {});
      worker.shutdown();
      await running.catch(() => {});
      await connection.close();
      await client.connection.close();
      await temporal.kill();
    }
  }, 120_000);
});
