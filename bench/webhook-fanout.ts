// Creates with webhook endpoints subscribed to post.scheduled: POST /v1/posts for one
// organization, BENCH_CONCURRENCY in flight, with 0, then 5, then 20 endpoints (one run, the same
// stack), and the ratio of each to the creates with none (the ceiling). Then how fast the
// deliveries of the 20-endpoint phase reach 20 fast receivers (each verified with the official
// `standardwebhooks` package). Prints figures; asserts nothing.
//
//   .tools/bin/bun run bench/webhook-fanout.ts
//   BENCH_FANOUT_CREATES=300 BENCH_CONCURRENCY=32 .tools/bin/bun run bench/webhook-fanout.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { Webhook } from 'standardwebhooks';
import { createWebhook } from '../services/webhooks.ts';
import { createPost, envInt, machineNote, ms, pool, runBench, say, startBenchStack, summary } from './stack.ts';

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

  async function phase(): Promise<{ perSecond: number; latencies: number[]; failed: number; startedAt: number }> {
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
    return { perSecond: CREATES / ((performance.now() - startedAt) / 1000), latencies, failed, startedAt };
  }

  // Warm-up: the first requests pay for connections and JIT.
  await pool(20, 4, async () => {
    await createPost(stack, `bench ${runId} warm-up #${next++}`, new Date(base + next * 1000).toISOString());
  });

  const rows: { endpoints: number; perSecond: number; p50: number; p99: number; failed: number }[] = [];
  let deliveriesPerSecond = Number.NaN;
  for (const step of ENDPOINT_STEPS) {
    await addEndpoints(step);
    const before = delivered;
    const r = await phase();
    const s = summary(r.latencies);
    rows.push({ endpoints: step, perSecond: r.perSecond, p50: s.p50, p99: s.p99, failed: r.failed });
    say(`${step} endpoints: ${r.perSecond.toFixed(1)} creates/s, p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, ${r.failed} failed`);
    if (step > 0) {
      const want = before + (CREATES - r.failed) * step;
      const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
      while (delivered < want && performance.now() < deadline) await Bun.sleep(50);
      const got = delivered - before;
      deliveriesPerSecond = got / ((lastArrival - r.startedAt) / 1000);
      say(`  ${got}/${want - before} deliveries, ${deliveriesPerSecond.toFixed(1)}/s from the phase's first create to the last arrival`);
    }
  }
  receiver.stop(true);

  const none = rows[0]!.perSecond;
  console.log('');
  console.log(`webhook fan-out: ${CREATES} creates per phase, ${CONCURRENCY} in flight, one organization; ${machineNote()}`);
  console.log('| endpoints | creates/s | ratio to none | p50 | p99 |');
  console.log('|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.endpoints} | ${r.perSecond.toFixed(1)} | ${(r.perSecond / none).toFixed(2)} | ${ms(r.p50)} | ${ms(r.p99)} |`);
  console.log(`deliveries to 20 receivers: ${deliveriesPerSecond.toFixed(1)}/s; unverified ${unverified}`);

  if (JSON_OUT) {
    const metrics = rows.flatMap((r) => [
      { metric: `webhook fan-out: creates with ${r.endpoints} endpoints`, value: Number(r.perSecond.toFixed(1)), unit: 'req/s' },
      { metric: `webhook fan-out: ratio ${r.endpoints} endpoints / none`, value: Number((r.perSecond / none).toFixed(3)), unit: '×' },
    ]);
    metrics.push({ metric: 'webhook fan-out: deliveries to 20 receivers', value: Number(deliveriesPerSecond.toFixed(1)), unit: '/s' });
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'webhook-fanout', creates: CREATES, concurrency: CONCURRENCY, metrics })}\n`);
  }
});
