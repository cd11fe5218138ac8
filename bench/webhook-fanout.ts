// Creates with webhook endpoints subscribed to post.scheduled: POST /v1/posts for one
// organization, BENCH_CONCURRENCY in flight, with 0, then 5, then 20 endpoints (one run, the same
// stack), and the ratio of each to the creates with none (the ceiling): while the creates are
// made, and through their deliveries (first create to last arrival at the receivers, each
// verified with the official `standardwebhooks` package), with the CPU per create of each process.
// Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/webhook-fanout.ts
//   BENCH_FANOUT_CREATES=300 BENCH_CONCURRENCY=32 .tools/bin/bun run bench/webhook-fanout.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { Webhook } from 'standardwebhooks';
import { createWebhook } from '../services/webhooks.ts';
import { postgresCpuMs } from './cpu.ts';
import { createPost, envInt, machineNote, ms, pool, procCpuMs, runBench, say, startBenchStack, summary } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
// In JSON mode the human report (and the stack's progress lines) go to stderr.
if (JSON_OUT) console.log = console.error;

const QUICK = process.env.BENCH_QUICK === '1';
const CREATES = envInt('BENCH_FANOUT_CREATES', QUICK ? 60 : 300);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 32, 1, 500);
const DELIVERY_TIMEOUT_MS = envInt('BENCH_TIMEOUT_MS', 300_000, 1000, 3_600_000);
const ENDPOINT_STEPS = [0, 5, 20];

await runBench(async () => {
  const stack = await startBenchStack();
  const runId = Math.random().toString(36).slice(2, 8);
  const base = Date.now() + 3 * 86_400_000;
  let next = 0;

  const verifiers = new Map<string, Webhook>();
  let delivered = 0;
  let unverified = 0;
  let lastArrival = 0;
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = await req.text();
      try {
        verifiers.get(new URL(req.url).pathname)!.verify(body, Object.fromEntries(req.headers));
        delivered++;
        lastArrival = performance.now();
      } catch {
        unverified++;
      }
      return new Response(null, { status: 204 });
    },
  });
  let endpoints = 0;
  async function addEndpoints(upTo: number): Promise<void> {
    for (; endpoints < upTo; endpoints++) {
      const path = `/hook-${endpoints}`;
      const { secret } = await createWebhook(
        stack.orm.em.fork(),
        { credentialsKey: stack.credentialsKey, outbound: { allowPrivate: true } },
        { id: stack.organizationId, plan: 'ENTERPRISE' },
        { url: `http://127.0.0.1:${receiver.port}${path}`, events: ['post.scheduled'] },
        new Date(),
      );
      verifiers.set(path, new Webhook(secret));
    }
  }

  // CPU of each process (ms so far): this one (the API, the load and the receivers), the worker, Temporal, Postgres.
  const cpu = () => [
    procCpuMs(process.pid),
    stack.worker.cpuMs(),
    stack.temporalPid ? procCpuMs(stack.temporalPid) : Number.NaN,
    postgresCpuMs(),
  ];

  async function phase(): Promise<{ perSecond: number; latencies: number[]; failed: number; startedAt: number; endedAt: number }> {
    const latencies: number[] = [];
    let failed = 0;
    const startedAt = performance.now();
    await pool(CREATES, CONCURRENCY, async () => {
      const i = next++;
      const t = performance.now();
      const res = await createPost(stack, `bench ${runId} fan-out #${i}`, new Date(base + i * 1000).toISOString());
      latencies.push(performance.now() - t);
      if (res.status !== 201) failed++;
    });
    const endedAt = performance.now();
    return { perSecond: CREATES / ((endedAt - startedAt) / 1000), latencies, failed, startedAt, endedAt };
  }

  // Warm-up: the first requests pay for connections and JIT.
  await pool(20, 4, async () => {
    await createPost(stack, `bench ${runId} warm-up #${next++}`, new Date(base + next * 1000).toISOString());
  });

  interface Row {
    endpoints: number;
    /** Creates per second while they are made. */
    perSecond: number;
    /** Creates per second from the first create to the last delivery's arrival: what the stack sustains with its deliveries. */
    throughDeliveries: number;
    p50: number;
    p99: number;
    failed: number;
    cpuPerCreate: number[];
  }
  const rows: Row[] = [];
  let deliveriesPerSecond = Number.NaN;
  for (const step of ENDPOINT_STEPS) {
    await addEndpoints(step);
    const before = delivered;
    const cpuBefore = cpu();
    const r = await phase();
    // Per create, over the phase and the deliveries it leaves (up to their last arrival).
    const s = summary(r.latencies);
    const row: Row = {
      endpoints: step,
      perSecond: r.perSecond,
      throughDeliveries: r.perSecond,
      p50: s.p50,
      p99: s.p99,
      failed: r.failed,
      cpuPerCreate: [],
    };
    rows.push(row);
    say(`${step} endpoints: ${r.perSecond.toFixed(1)} creates/s, p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, ${r.failed} failed`);
    if (step > 0) {
      const want = before + (CREATES - r.failed) * step;
      const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
      while (delivered < want && performance.now() < deadline) await Bun.sleep(50);
      const got = delivered - before;
      deliveriesPerSecond = got / ((lastArrival - r.startedAt) / 1000);
      row.throughDeliveries = got < want - before ? Number.NaN : CREATES / ((Math.max(lastArrival, r.endedAt) - r.startedAt) / 1000);
      say(`  ${got}/${want - before} deliveries, ${deliveriesPerSecond.toFixed(1)}/s from the phase's first create to the last arrival`);
    }
    row.cpuPerCreate = cpu().map((v, i) => (v - cpuBefore[i]!) / CREATES);
  }
  receiver.stop(true);

  const none = rows[0]!.perSecond;
  console.log('');
  console.log(`webhook fan-out: ${CREATES} creates per phase, ${CONCURRENCY} in flight, one organization; ${machineNote()}`);
  console.log(
    '| endpoints | creates/s | ratio to none | through their deliveries: creates/s, ratio | p50 | p99 | CPU per create, with its deliveries: API and load / worker / Temporal / Postgres |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.endpoints} | ${r.perSecond.toFixed(1)} | ${(r.perSecond / none).toFixed(2)} | ${r.throughDeliveries.toFixed(1)}, ${(r.throughDeliveries / none).toFixed(2)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.cpuPerCreate.map((c) => c.toFixed(1)).join(' / ')} ms |`,
    );
  console.log(`deliveries to 20 receivers: ${deliveriesPerSecond.toFixed(1)}/s; unverified ${unverified}`);

  if (JSON_OUT) {
    const metrics = rows.flatMap((r) => [
      { metric: `webhook fan-out: creates with ${r.endpoints} endpoints`, value: Number(r.perSecond.toFixed(1)), unit: 'req/s' },
      { metric: `webhook fan-out: ratio ${r.endpoints} endpoints / none`, value: Number((r.perSecond / none).toFixed(3)), unit: '×' },
      {
        metric: `webhook fan-out: ratio ${r.endpoints} endpoints / none, through the deliveries`,
        value: Number((r.throughDeliveries / none).toFixed(3)),
        unit: '×',
      },
    ]);
    metrics.push({ metric: 'webhook fan-out: deliveries to 20 receivers', value: Number(deliveriesPerSecond.toFixed(1)), unit: '/s' });
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'webhook-fanout', creates: CREATES, concurrency: CONCURRENCY, metrics })}\n`);
  }
});
