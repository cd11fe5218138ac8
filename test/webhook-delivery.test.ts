// Webhook delivery on the real stack: a receiver on 127.0.0.1 verifies every request
// with the official `standardwebhooks` package; Temporal's time-skipping server proves the retry
// schedule, the final `failed`, 410 disabling the endpoint, and that a deleted endpoint gets nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { addDelivery, lastAttempt } from './harness/webhook-failures.ts';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  WEBHOOK_JITTER,
  WEBHOOK_RETRY_SCHEDULE_MS,
  webhookDeliveryWorkflowId,
  webhookEventWorkflowId,
} from '../workflows/webhook-delivery-types.ts';
import { WEBHOOK_FANOUT_WORKFLOW_TYPE, webhookFanoutWorkflowId } from '../workflows/webhook-fanout-types.ts';
import { WebhookDelivery } from '../db/entities/index.ts';
import { writeWebhookEvent } from '../domain/webhooks/outbox.ts';
import { dispatchWebhookDeliveries } from '../domain/workflow-starts.ts';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/**
 * The retry schedule as docs/api.md ("Delivery") and docs/decisions.md ("Webhooks") state it: the
 * first attempt at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, each
 * wait ±10 %; ten attempts. Written out here rather than read from the code, so a change of the
 * code that the docs do not follow fails.
 */
const DOCUMENTED_SCHEDULE_MS = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
const DOCUMENTED_JITTER = 0.1;
/** How the docs write a wait: `5 s`, `30 min`, `24 h`. */
const spelled = (ms: number) => (ms % HOUR === 0 ? `${ms / HOUR} h` : ms % MINUTE === 0 ? `${ms / MINUTE} min` : `${ms / SECOND} s`);
/** A doc's text with its line breaks as spaces, so a phrase matches wherever the lines wrap. */
const docText = (file: string) => readFileSync(new URL(`../docs/${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
/** How long the previous secret signs after a rotation, as docs/api.md states it ("the old secret signs 24 h more"). */
const DOCUMENTED_OVERLAP_MS = 24 * HOUR;

/**
 * What the receiver answers next on a path: a status (with headers), 'hang' (never answers in
 * time), or 200 once `hold` settles (at most 400 ms: within the attempt's time limit).
 */
type Answer = number | 'hang' | { status: number; headers: Record<string, string> } | { hold: Promise<void> };

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

let stack: Awaited<ReturnType<typeof startPostStack>>;
let server: ReturnType<typeof Bun.serve>;
const script = new Map<string, Answer[]>();
const received: Received[] = [];
const TIMEOUT_MS = 500;

beforeAll(async () => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const body = await req.text();
      received.push({ path, headers: Object.fromEntries(req.headers), body });
      const next = script.get(path)?.shift() ?? 200;
      if (next === 'hang') {
        await Bun.sleep(TIMEOUT_MS * 4);
        return new Response('late');
      }
      if (typeof next === 'object' && 'hold' in next) {
        await Promise.race([next.hold, Bun.sleep(400)]);
        return new Response('ok');
      }
      return typeof next === 'number' ? new Response('ok', { status: next }) : new Response('', next);
    },
  });
  // No workflow cache: the time-skipping server keeps a stopped worker's sticky tasks (the restart test; see test/posts.test.ts).
  stack = await startPostStack({ webhookTimeoutMs: TIMEOUT_MS, maxCachedWorkflows: 0 });
});
afterAll(async () => {
  await stack?.stop();
  server?.stop(true);
});

async function setup(path: string, answers: Answer[] = []) {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  script.set(path, answers);
  const res = await call(stack.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: `http://127.0.0.1:${server.port}${path}`, events: 'all' },
  });
  expect(res.status).toBe(201);
  return { key, id: res.body.endpoint.id as string, secret: res.body.secret as string };
}

const at = (path: string) => received.filter((r) => r.path === path);

/** Polls in real time; when nothing changes, moves Temporal's clock forward (retry timers). */
async function until(check: () => boolean | Promise<boolean>, step = '1 minute', maxSteps = 400) {
  for (let i = 0; i < maxSteps; i++) {
    for (let j = 0; j < 10; j++) {
      if (await check()) return;
      await Bun.sleep(20);
    }
    await stack.env.sleep(step);
  }
  throw new Error('condition never held');
}

async function deliveries(key: string, id: string) {
  const res = await call(stack.app, 'GET', `/v1/webhooks/${id}/deliveries`, { key });
  expect(res.status).toBe(200);
  return res.body.data as Record<string, any>[];
}

function verify(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, r.headers) as Record<string, any>;
}

describe('webhook delivery', () => {
  test('webhook.test arrives signed as Standard Webhooks says', async () => {
    const { key, id, secret } = await setup('/test');
    const sent = await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    expect(sent.status).toBe(202);
    await until(() => at('/test').length === 1);
    const r = at('/test')[0]!;
    expect(r.headers['webhook-id']).toBe(sent.body.eventId);
    expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = verify(secret, r);
    expect(payload).toMatchObject({ type: 'webhook.test', data: { endpointId: id } });
    expect(Number.isNaN(Date.parse(payload.timestamp))).toBe(false);
    // A wrong secret does not verify: the check is real.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(r.body, r.headers)).toThrow();
    await until(async () => (await deliveries(key, id))[0]?.status === 'delivered');
    expect((await deliveries(key, id))[0]).toMatchObject({
      eventId: sent.body.eventId,
      eventType: 'webhook.test',
      status: 'delivered',
      attempts: 1,
      statusCode: 200,
      error: null,
      nextRetryAt: null,
    });
  });

  test('during a rotation both secrets sign, and each verifies', async () => {
    const { key, id, secret: old } = await setup('/rotate');
    const rotated = await call(stack.app, 'POST', `/v1/webhooks/${id}/rotate-secret`, { key });
    await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(() => at('/rotate').length === 1);
    const r = at('/rotate')[0]!;
    expect(r.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, r).type).toBe('webhook.test');
    expect(verify(old, r).type).toBe('webhook.test');
  });

  test('the previous secret signs until 24 h after the rotation, and not a second longer', async () => {
    // The attempt is made now, at the receiver's clock (standardwebhooks refuses a timestamp 5 min
    // off), and the rotation is put that long before it.
    const attemptAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const deliverAfterRotation = async (path: string, sinceRotation: number) => {
      const { key, id, secret: previous } = await setup(path);
      const rotatedAt = new Date(attemptAt.getTime() - sinceRotation);
      const rotated = await call(await testApp({ now: () => rotatedAt }), 'POST', `/v1/webhooks/${id}/rotate-secret`, { key });
      expect(rotated.status).toBe(200);
      expect(Date.parse(rotated.body.previousSecretExpiresAt)).toBe(rotatedAt.getTime() + DOCUMENTED_OVERLAP_MS);
      const deliveryId = await addDelivery(id, { createdAt: attemptAt, status: 'pending' });
      expect(await lastAttempt(deliveryId, attemptAt)).toEqual({ outcome: 'delivered' });
      expect(at(path)).toHaveLength(1);
      const r = at(path)[0]!;
      return { r, previous, current: rotated.body.secret as string, signatures: r.headers['webhook-signature']!.split(' ') };
    };
    // A second before the 24 hours end: both sign, and each verifies.
    const before = await deliverAfterRotation('/overlap-before', DOCUMENTED_OVERLAP_MS - 1_000);
    expect(before.signatures).toHaveLength(2);
    expect(verify(before.current, before.r).type).toBe('webhook.test');
    expect(verify(before.previous, before.r).type).toBe('webhook.test');
    // A second after: only the new secret signs, and the old one no longer verifies.
    const after = await deliverAfterRotation('/overlap-after', DOCUMENTED_OVERLAP_MS + 1_000);
    expect(after.signatures).toHaveLength(1);
    expect(verify(after.current, after.r).type).toBe('webhook.test');
    expect(() => verify(after.previous, after.r)).toThrow();
  });

  test('500 twice then 200: delivered on the third attempt, same webhook-id each time', async () => {
    const { key, id, secret } = await setup('/flaky', [500, 500, 200]);
    await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(async () => (await deliveries(key, id))[0]?.status === 'delivered', '30 seconds');
    const got = at('/flaky');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) verify(secret, r);
    expect((await deliveries(key, id))[0]).toMatchObject({ attempts: 3, statusCode: 200, status: 'delivered' });
  });

  test('a receiver that does not answer in time is retried', async () => {
    const { key, id } = await setup('/hang', ['hang', 200]);
    await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(async () => (await deliveries(key, id))[0]?.attempts === 1, '1 second');
    const first = (await deliveries(key, id))[0]!;
    expect(first).toMatchObject({ status: 'pending', statusCode: null });
    expect(first.error).toContain(`no answer within ${TIMEOUT_MS} ms`);
    expect(first.nextRetryAt).not.toBeNull();
    await until(async () => (await deliveries(key, id))[0]?.status === 'delivered', '10 seconds');
    expect((await deliveries(key, id))[0]).toMatchObject({ attempts: 2, statusCode: 200 });
  });

  test('410 Gone disables the endpoint and says why', async () => {
    const { key, id } = await setup('/gone', [410]);
    await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(async () => (await deliveries(key, id))[0]?.status === 'failed');
    const endpoint = (await call(stack.app, 'GET', `/v1/webhooks/${id}`, { key })).body;
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabledReason).toContain('410');
    expect(Number.isNaN(Date.parse(endpoint.disabledAt))).toBe(false);
    expect(at('/gone')).toHaveLength(1);
    // Nothing more is sent to it.
    const test2 = await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    expect(test2.status).toBe(409);
  });

  test('the docs state the retry schedule this file checks, and the code has it', () => {
    const waits = DOCUMENTED_SCHEDULE_MS.slice(1).map(spelled);
    expect(docText('api.md')).toContain(
      `retried: at once, then after ${waits.slice(0, -1).join(', ')} and ${waits.at(-1)} (each wait ±${DOCUMENTED_JITTER * 100} % jitter;`,
    );
    expect(docText('api.md')).toContain('ten attempts over about three days');
    expect(docText('decisions.md')).toContain(`per the schedule (0, ${waits.join(', ')}, ±${DOCUMENTED_JITTER * 100} % jitter;`);
    expect(DOCUMENTED_SCHEDULE_MS).toHaveLength(10);
    expect(WEBHOOK_RETRY_SCHEDULE_MS).toEqual(DOCUMENTED_SCHEDULE_MS);
    expect(WEBHOOK_JITTER).toBe(DOCUMENTED_JITTER);
  });

  test('the whole retry schedule, with jitter, then failed; Retry-After is honoured', async () => {
    const { key, id } = await setup('/down', [
      { status: 429, headers: { 'retry-after': '3600' } },
      ...Array<Answer>(DOCUMENTED_SCHEDULE_MS.length).fill(503),
    ]);
    await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(async () => (await deliveries(key, id))[0]?.status === 'failed', '6 hours');
    const [d] = await deliveries(key, id);
    expect(d).toMatchObject({ status: 'failed', attempts: DOCUMENTED_SCHEDULE_MS.length, statusCode: 503, nextRetryAt: null });
    expect(at('/down')).toHaveLength(DOCUMENTED_SCHEDULE_MS.length);
    // The timers the workflow set, from its history: the schedule, each within the jitter.
    const history = await stack.client.workflow.getHandle(webhookEventWorkflowId(d!.eventId)).fetchHistory();
    const timers = history
      .events!.filter((e) => e.timerStartedEventAttributes)
      .map((e) => {
        const t = e.timerStartedEventAttributes!.startToFireTimeout!;
        return Number(t.seconds) * 1000 + Math.round((t.nanos ?? 0) / 1e6);
      });
    expect(timers).toHaveLength(DOCUMENTED_SCHEDULE_MS.length - 1);
    // The first wait is the receiver's Retry-After (an hour), longer than the scheduled 5 s.
    expect(timers[0]).toBe(3_600_000);
    DOCUMENTED_SCHEDULE_MS.slice(2).forEach((planned, i) => {
      expect(timers[i + 1]!).toBeGreaterThanOrEqual(Math.floor(planned * (1 - DOCUMENTED_JITTER)));
      expect(timers[i + 1]!).toBeLessThanOrEqual(Math.ceil(planned * (1 + DOCUMENTED_JITTER)));
    });
    // Jittered: not exactly the schedule.
    expect(timers.slice(1).some((t, i) => t !== DOCUMENTED_SCHEDULE_MS[i + 2])).toBe(true);
  });

  test("one event to two endpoints, one of them down twice: each keeps its own place in the schedule, in the event's one workflow", async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    script.set('/pair-up', []);
    script.set('/pair-down', [503, 503]);
    for (const path of ['/pair-up', '/pair-down']) {
      const res = await call(stack.app, 'POST', '/v1/webhooks', {
        key,
        body: { url: `http://127.0.0.1:${server.port}${path}`, events: 'all' },
      });
      expect(res.status).toBe(201);
    }
    const em = stack.h.orm.em.fork();
    const { eventId, deliveryIds } = await em.transactional(async (tx) => {
      const written = await writeWebhookEvent(tx, {
        organizationId: org.id,
        type: 'webhook.test',
        now: new Date(),
        data: { message: 'to two' },
      });
      await tx.flush();
      return written;
    });
    expect(deliveryIds).toHaveLength(2);
    // What the code that commits an event does next.
    await dispatchWebhookDeliveries(em, { client: stack.client, taskQueue: stack.taskQueue }, deliveryIds);
    const handle = stack.client.workflow.getHandle(webhookEventWorkflowId(eventId));
    await until(async () => (await handle.describe()).status.name !== 'RUNNING');
    expect(Object.values(await handle.result())).toEqual(['delivered', 'delivered']);
    expect(at('/pair-up').map((r) => r.headers['webhook-id'])).toEqual([eventId]);
    expect(at('/pair-down').map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    const rows = await stack.h.orm.em.fork().find(WebhookDelivery, { id: { $in: deliveryIds } });
    expect(rows.map((r) => [r.status, r.attempts]).sort()).toEqual([
      ['delivered', 1],
      ['delivered', 3],
    ]);
    // The down one waited the schedule's 5 s, then its 5 min, each within the jitter.
    const timers = (await handle.fetchHistory()).events!.flatMap((e) => {
      const t = e.timerStartedEventAttributes?.startToFireTimeout;
      return t ? [Number(t.seconds) * 1000 + Math.round((t.nanos ?? 0) / 1e6)] : [];
    });
    expect(timers).toHaveLength(2);
    timers.forEach((t, i) => {
      expect(t).toBeGreaterThanOrEqual(Math.floor(DOCUMENTED_SCHEDULE_MS[i + 1]! * (1 - DOCUMENTED_JITTER)));
      expect(t).toBeLessThanOrEqual(Math.ceil(DOCUMENTED_SCHEDULE_MS[i + 1]! * (1 + DOCUMENTED_JITTER)));
    });
  });

  test('executions started before the deliveries workflow still deliver: a single-delivery workflow, and a fan-out', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { key } = await makeKey(org.id);
    script.set('/before-single', []);
    script.set('/before-fanout', []);
    for (const path of ['/before-single', '/before-fanout']) {
      const res = await call(stack.app, 'POST', '/v1/webhooks', {
        key,
        body: { url: `http://127.0.0.1:${server.port}${path}`, events: 'all' },
      });
      expect(res.status).toBe(201);
    }
    const write = () =>
      stack.h.orm.em.fork().transactional(async (tx) => {
        const written = await writeWebhookEvent(tx, {
          organizationId: org.id,
          type: 'webhook.test',
          now: new Date(),
          data: { message: 'before' },
        });
        await tx.flush();
        return written;
      });
    const single = await write();
    // A webhookDeliveryWorkflow as the code before started it, for one delivery of the event .
    const target = { id: single.deliveryIds[0]! };
    const singleHandle = await stack.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: webhookDeliveryWorkflowId(target.id),
      args: [{ deliveryId: target.id }],
    });
    await until(async () => (await singleHandle.describe()).status.name !== 'RUNNING');
    expect(await singleHandle.result()).toBe('delivered');
    expect((await stack.h.orm.em.fork().findOneOrFail(WebhookDelivery, { id: target.id })).status).toBe('delivered');
    // A webhookFanoutWorkflow as the code before started it: its activity dispatches the event's one workflow.
    const fanned = await write();
    const fanout = await stack.client.workflow.start(WEBHOOK_FANOUT_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: webhookFanoutWorkflowId(fanned.deliveryIds[0]!),
      args: [{ deliveryIds: fanned.deliveryIds }],
    });
    await fanout.result();
    const event = stack.client.workflow.getHandle(webhookEventWorkflowId(fanned.eventId));
    await until(async () => (await event.describe()).status.name !== 'RUNNING');
    expect(Object.values(await event.result())).toEqual(['delivered', 'delivered']);
    const after = await stack.h.orm.em.fork().find(WebhookDelivery, { id: { $in: fanned.deliveryIds } });
    expect(after.map((d) => [d.status, d.workflowPending])).toEqual([
      ['delivered', false],
      ['delivered', false],
    ]);
  });

  test('a delivery to an endpoint deleted before its retry is not sent', async () => {
    const { key, id } = await setup('/deleted', [500]);
    const sent = await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    await until(() => at('/deleted').length === 1, '1 second');
    expect((await call(stack.app, 'DELETE', `/v1/webhooks/${id}`, { key })).status).toBe(204);
    const handle = stack.client.workflow.getHandle(webhookEventWorkflowId(sent.body.eventId));
    await until(async () => (await handle.describe()).status.name !== 'RUNNING', '10 seconds');
    expect(await handle.result()).toEqual({ [sent.body.deliveryId]: 'skipped' });
    expect(at('/deleted')).toHaveLength(1);
  });

  test('deliveries waiting for a retry survive a worker restart: all delivered, none lost', async () => {
    const { key, id } = await setup('/restart', [500, 500, 500]);
    const sent = await Promise.all([0, 1, 2].map(() => call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key })));
    await until(() => at('/restart').length >= 3, '1 second');
    await stack.restartWorker();
    await until(async () => (await deliveries(key, id)).every((d) => d.status === 'delivered'), '10 seconds');
    const ids = new Set(at('/restart').map((r) => r.headers['webhook-id']));
    expect([...ids].sort()).toEqual(sent.map((s) => s.body.eventId).sort());
    // The receiver refused three requests, then took each delivery once: six attempts in all, none
    // lost or sent again (which delivery met which refusal depends on the timing of the restart).
    const attempts = (await deliveries(key, id)).map((d) => d.attempts);
    expect(attempts.reduce((a, b) => a + b, 0)).toBe(6);
    expect(at('/restart')).toHaveLength(6);
  });

  test('redeliver sends the same event again', async () => {
    const { key, id, secret } = await setup('/again');
    const sent = await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    const handle = stack.client.workflow.getHandle(webhookEventWorkflowId(sent.body.eventId));
    await until(async () => (await handle.describe()).status.name !== 'RUNNING');
    const res = await call(stack.app, 'POST', `/v1/webhooks/${id}/deliveries/${sent.body.deliveryId}/redeliver`, { key });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('pending');
    await until(() => at('/again').length === 2);
    expect(at('/again').map((r) => r.headers['webhook-id'])).toEqual([sent.body.eventId, sent.body.eventId]);
    verify(secret, at('/again')[1]!);
    await until(async () => (await deliveries(key, id))[0]?.status === 'delivered');
    expect((await deliveries(key, id))[0]!.attempts).toBe(2);
  });

  test('eight redeliveries of one delivery at once: one 202, the others 409; sent once more, its status never put back', async () => {
    // The redelivery's attempt is held until the eight have answered: each of them meets it pending.
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { key, id } = await setup('/again-at-once', [200, { hold }]);
    const sent = await call(stack.app, 'POST', `/v1/webhooks/${id}/test`, { key });
    const handle = stack.client.workflow.getHandle(webhookEventWorkflowId(sent.body.eventId));
    await until(async () => (await handle.describe()).status.name !== 'RUNNING');
    const path = `/v1/webhooks/${id}/deliveries/${sent.body.deliveryId}/redeliver`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(stack.app, 'POST', path, { key })));
    release();
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error.code).toBe('conflict');
    // Right after: pending (or already sent again), never the old status put back by a loser.
    const now = (await deliveries(key, id))[0]!;
    expect(now.status === 'pending' || now.attempts === 2).toBe(true);
    await until(async () => (await deliveries(key, id))[0]?.status === 'delivered');
    expect(at('/again-at-once')).toHaveLength(2);
    expect((await deliveries(key, id))[0]!.attempts).toBe(2);
  });
});
