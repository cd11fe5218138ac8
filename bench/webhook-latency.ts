// Webhook event-to-delivery latency: from the moment a state change is committed (a publish-now
// post becomes `published`; the event's `timestamp` is taken inside that transaction) to the
// moment the receiver gets the signed `post.published` request. Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/webhook-latency.ts
//   BENCH_WEBHOOK_EVENTS=200 BENCH_WEBHOOK_CONCURRENCY=1 BENCH_WARMUP=5 .tools/bin/bun run bench/webhook-latency.ts
// Beside it, a ceiling measured in the same run: a raw Temporal workflow start until its one
// activity is running (pingWorkflow), plus one HTTP POST to the same receiver (BENCH_CEILING_RUNS times).
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { randomUUID } from 'node:crypto';
import { temporal as proto } from '@temporalio/proto';
import { Webhook } from 'standardwebhooks';
import { createWebhook } from '../services/webhooks.ts';
import { PING_WORKFLOW_TYPE, type PingWorkflow } from '../workflows/ping-types.ts';
import { webhookEventWorkflowId } from '../workflows/webhook-delivery-types.ts';
import {
  createPost,
  envInt,
  isStopping,
  machineNote,
  ms,
  pool,
  runBench,
  say,
  startBenchStack,
  summary,
  type BenchStack,
} from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
// In JSON mode the human report (and the stack's progress lines) go to stderr.
if (JSON_OUT) console.log = console.error;

const EVENTS = envInt('BENCH_WEBHOOK_EVENTS', 200);
const CONCURRENCY = envInt('BENCH_WEBHOOK_CONCURRENCY', 1, 1, 100);
const WARMUP = envInt('BENCH_WARMUP', 5, 0, 1000);
const TIMEOUT_MS = envInt('BENCH_TIMEOUT_MS', 60_000, 100, 600_000);
const CEILING_RUNS = envInt('BENCH_CEILING_RUNS', 50, 1, 10_000);

/** Wall-clock ms with sub-ms resolution (comparable with the worker's Date and Temporal's event times on this machine). */
const wall = () => performance.timeOrigin + performance.now();

interface Arrival {
  at: number;
  eventId: string;
  /** The event's `timestamp`: taken in the transaction that published the post. */
  committedAt: number;
}

interface Sample {
  postId?: string;
  arrival?: Arrival;
}

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);

  // The receiver: arrival is taken first thing in its handler (same process, no polling), then
  // the request is verified with the official `standardwebhooks` package as a real receiver would.
  let wh: Webhook | undefined;
  const arrivals = new Map<string, Arrival>();
  const waiters = new Map<string, (a: Arrival) => void>();
  let unverified = 0;
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const at = wall();
      const body = await req.text();
      if (new URL(req.url).pathname === '/ceiling') return new Response(null, { status: 204 });
      let event: { type: string; timestamp: string; data: { id: string } };
      try {
        event = wh!.verify(body, Object.fromEntries(req.headers)) as typeof event;
      } catch {
        unverified++;
        return new Response('bad signature', { status: 400 });
      }
      const arrival = { at, eventId: req.headers.get('webhook-id')!, committedAt: Date.parse(event.timestamp) };
      if (event.type === 'post.published' && !arrivals.has(event.data.id)) {
        arrivals.set(event.data.id, arrival);
        waiters.get(event.data.id)?.(arrival);
      }
      return new Response(null, { status: 204 });
    },
  });
  const receiverUrl = `http://127.0.0.1:${receiver.port}`;

  const { secret } = await createWebhook(
    stack.orm.em.fork(),
    { credentialsKey: stack.credentialsKey, outbound: { allowPrivate: true } },
    { id: stack.organizationId, plan: 'ENTERPRISE' },
    { url: `${receiverUrl}/hooks`, events: ['post.published'] },
    new Date(),
  );
  wh = new Webhook(secret);
  say(`receiver on ${receiverUrl}, subscribed to post.published`);

  const arrivalOf = (postId: string) =>
    new Promise<Arrival | undefined>((resolve) => {
      const known = arrivals.get(postId);
      if (known) return resolve(known);
      const timer = setTimeout(() => {
        waiters.delete(postId);
        resolve(undefined);
      }, TIMEOUT_MS);
      waiters.set(postId, (a) => {
        clearTimeout(timer);
        waiters.delete(postId);
        resolve(a);
      });
    });

  async function one(label: string): Promise<Sample> {
    const res = await createPost(stack, `bench ${runId} ${label}: webhook latency probe`);
    if (res.status !== 201 || !res.id) {
      console.error(`[bench] POST /v1/posts answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      return {};
    }
    return { postId: res.id, arrival: await arrivalOf(res.id) };
  }

  if (WARMUP) {
    say(`warm-up: ${WARMUP} event(s), not counted`);
    await pool(WARMUP, 1, async (i) => void (await one(`warmup-${i}`)));
  }
  say(
    `measuring ${EVENTS} post.published events (one per publish-now post), ${CONCURRENCY === 1 ? 'sequentially' : `${CONCURRENCY} posts in flight`}`,
  );
  const samples: Sample[] = [];
  const started = performance.now();
  await pool(EVENTS, CONCURRENCY, async (i) => {
    samples.push(await one(`#${i}`));
    if ((i + 1) % 50 === 0) say(`  ${i + 1}/${EVENTS}`);
  });
  const elapsed = (performance.now() - started) / 1000;
  if (isStopping()) return;

  // The ceiling, same run, same stack: a raw Temporal workflow start until its one activity is
  // running (pingWorkflow; the activity's start time from its history), plus one HTTP POST round
  // trip to the same receiver — the least a delivery started as a workflow can take here.
  const E = proto.api.enums.v1.EventType;
  const raw: number[] = [];
  for (let i = 0; i < CEILING_RUNS && !isStopping(); i++) {
    const t0 = wall();
    const handle = await stack.client.workflow.start<PingWorkflow>(PING_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: `bench-ping-${randomUUID()}`,
      args: [{ message: 'ceiling' }],
    });
    await handle.result();
    const history = (await handle.fetchHistory()).events ?? [];
    const activityStarted = tsMs(history.find((e) => e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_STARTED)?.eventTime);
    const p0 = performance.now();
    await (await fetch(`${receiverUrl}/ceiling`, { method: 'POST', body: '{}' })).arrayBuffer();
    const post = performance.now() - p0;
    if (Number.isFinite(activityStarted)) raw.push(activityStarted - t0 + post);
  }
  const ceiling = summary(raw);
  receiver.stop(true);

  const ok = samples.filter((s) => s.arrival);
  const latency = summary(ok.map((s) => s.arrival!.at - s.arrival!.committedAt));
  const missing = samples.length - ok.length + (EVENTS - samples.length);
  const breakdown = await historyBreakdown(stack, ok);

  const line = (name: string, v: ReturnType<typeof summary>) =>
    `  ${name.padEnd(56)} p50 ${ms(v.p50).padStart(10)}  p90 ${ms(v.p90).padStart(10)}  p99 ${ms(v.p99).padStart(10)}  max ${ms(v.max).padStart(10)}  (n=${v.n})`;
  console.log('');
  console.log('== webhook event-to-delivery latency (post published, committed → receiver got post.published) ==');
  console.log(`  events ${EVENTS} (+${WARMUP} warm-up), concurrency ${CONCURRENCY}, ${elapsed.toFixed(1)} s`);
  console.log(`  machine: ${machineNote()}; Temporal dev server with a SQLite file`);
  console.log(`  delivered ${ok.length}, missing after ${TIMEOUT_MS} ms ${missing}, signatures that did not verify ${unverified}`);
  console.log("  start: the event's timestamp, taken in the transaction that commits the change (worker clock = this machine)");
  console.log(line('committed → received', latency));
  console.log(line('ceiling: raw start → its activity running, + one POST', ceiling));
  console.log(`  ratio webhook / ceiling: p50 ${(latency.p50 / ceiling.p50).toFixed(2)}, p99 ${(latency.p99 / ceiling.p99).toFixed(2)}`);
  console.log("  where it goes (the delivery workflow's history, server clock = this machine):");
  for (const [name, values] of breakdown) console.log(line(`  ${name}`, summary(values)));
  console.log('');

  if (JSON_OUT) {
    const r1 = (v: number) => Math.round(v * 10) / 10;
    const metrics = [
      { metric: 'webhook event-to-delivery latency p50', value: r1(latency.p50), unit: 'ms' },
      { metric: 'webhook event-to-delivery latency p99', value: r1(latency.p99), unit: 'ms' },
      { metric: 'webhook event-to-delivery latency max', value: r1(latency.max), unit: 'ms' },
      { metric: 'ceiling: raw workflow start → activity running + one POST p50', value: r1(ceiling.p50), unit: 'ms' },
      { metric: 'ceiling: raw workflow start → activity running + one POST p99', value: r1(ceiling.p99), unit: 'ms' },
      { metric: 'webhook latency p99 / ceiling p99', value: Math.round((latency.p99 / ceiling.p99) * 100) / 100, unit: '×' },
      { metric: 'webhook events not delivered', value: missing, unit: 'events' },
    ];
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'webhook-latency', events: EVENTS, concurrency: CONCURRENCY, metrics })}\n`);
  }
});

/** A Temporal event time in wall-clock ms. */
function tsMs(t: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : Number.NaN;
}

/** Splits each event's latency with its delivery workflow's history: commit → dispatch → attempt → arrival. */
async function historyBreakdown(stack: BenchStack, samples: Sample[]): Promise<[string, number[]][]> {
  const E = proto.api.enums.v1.EventType;
  const names = [
    'committed → delivery workflow started (dispatch)',
    'workflow started → its first workflow task (the attempt runs in it, a local activity)',
    'task started → received',
  ];
  const seg = names.map((n) => [n, [] as number[]] as [string, number[]]);
  for (const s of samples) {
    let events;
    try {
      events = (await stack.client.workflow.getHandle(webhookEventWorkflowId(s.arrival!.eventId)).fetchHistory()).events ?? [];
    } catch {
      continue;
    }
    const started = tsMs(events.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)?.eventTime);
    const taskStarted = tsMs(events.find((e) => e.eventType === E.EVENT_TYPE_WORKFLOW_TASK_STARTED)?.eventTime);
    const values = [started - s.arrival!.committedAt, taskStarted - started, s.arrival!.at - taskStarted];
    values.forEach((v, k) => Number.isFinite(v) && seg[k]![1].push(v));
  }
  return seg;
}
