// Runs every benchmark, one after the other, each as its own child process in its machine-readable
// mode (--json: the human report on stderr, shown here as it runs; one JSON object of figures on
// stdout), and prints one table of the figures at the end. Each benchmark starts and stops its own
// stack (bench/stack.ts); all traffic stays on 127.0.0.1.
//
//   npm run bench                        # the full suite (about 25 minutes on the 2-core machine)
//   BENCH_QUICK=1 npm run bench          # small counts: a smoke run of every benchmark in a few minutes
//   BENCH_ONLY=api-throughput,publish-latency npm run bench
//   BENCH_OUT=results.json npm run bench # also write the figures as JSON
//
// Each benchmark's own knobs (bench/README.md) can still be set; BENCH_QUICK only fills in the
// ones not set. A benchmark that fails or gives no figures shows as such in the table; the exit
// code is then 1.
import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '..');
const QUICK = process.env.BENCH_QUICK === '1';

interface Metric {
  metric: string;
  value: number;
  unit: string;
}

interface Bench {
  name: string;
  file: string;
  /** Knobs for the quick mode (only where the caller set none). */
  quick: Record<string, string>;
  /** Knobs for the full suite (only where the caller set none). */
  full: Record<string, string>;
  /** Upper bound for one run; the child is interrupted (and stops its stack) after it. */
  timeoutMin: number;
  /** A tool it needs that only an optional setup step installs: without it, the benchmark is skipped (not a failure). */
  needs?: { file: string; setup: string };
}

const BENCHES: Bench[] = [
  {
    name: 'api-throughput',
    file: 'bench/api-throughput.ts',
    quick: { BENCH_API_REQUESTS: '300', BENCH_API_POSTS: '100', BENCH_API_WARMUP: '20' },
    full: { BENCH_API_REQUESTS: '3000', BENCH_API_POSTS: '1000', BENCH_API_WARMUP: '200' },
    timeoutMin: 10,
  },
  {
    name: 'publish-latency',
    file: 'bench/publish-latency.ts',
    quick: { BENCH_POSTS: '20', BENCH_WARMUP: '2' },
    full: { BENCH_POSTS: '200', BENCH_WARMUP: '5' },
    timeoutMin: 10,
  },
  {
    name: 'scheduled-lateness',
    file: 'bench/scheduled-lateness.ts',
    quick: { BENCH_SCHEDULED: '10' },
    full: { BENCH_SCHEDULED: '50' },
    timeoutMin: 5,
  },
  {
    name: 'burst-lateness',
    file: 'bench/burst-lateness.ts',
    quick: { BENCH_BURST: '100', BENCH_BURST_LEAD_MS: '20000' },
    full: { BENCH_BURST: '1000', BENCH_BURST_CHANNELS: '10' },
    // Two bursts: the service's, then the bare workflow's (its ceiling).
    timeoutMin: 20,
  },
  {
    name: 'burst-cluster',
    file: 'bench/burst-cluster.ts',
    quick: { BENCH_BURST: '100', BENCH_BURST_LEAD_MS: '20000', BENCH_WORKERS: '2' },
    full: { BENCH_BURST: '1000', BENCH_BURST_CHANNELS: '10', BENCH_WORKERS: '2' },
    // Two bursts, as burst-lateness.
    timeoutMin: 25,
    needs: { file: '.tools/temporal-server/bin/temporal-server', setup: 'sh scripts/setup.sh --cluster' },
  },
  {
    name: 'worker-memory',
    file: 'bench/worker-memory.ts',
    quick: { BENCH_MEMORY_COUNTS: '1000', BENCH_MEMORY_MAX_MIN: '3' },
    // 100,000 starts take longer than the time box on 2 shared cores: it reports what it reached.
    full: { BENCH_MEMORY_COUNTS: '10000,30000,100000', BENCH_MEMORY_MAX_MIN: '15' },
    timeoutMin: 30,
  },
  {
    name: 'create-throughput',
    file: 'bench/create-throughput.ts',
    quick: { BENCH_CREATE: '200', BENCH_SLEEPING: '500', BENCH_WARMUP: '10' },
    full: { BENCH_CREATE: '2000', BENCH_SLEEPING: '10000', BENCH_WARMUP: '20' },
    timeoutMin: 25,
  },
  {
    name: 'webhook-latency',
    file: 'bench/webhook-latency.ts',
    quick: { BENCH_WEBHOOK_EVENTS: '20', BENCH_WARMUP: '2', BENCH_CEILING_RUNS: '10' },
    full: { BENCH_WEBHOOK_EVENTS: '200', BENCH_WARMUP: '5' },
    timeoutMin: 10,
  },
  {
    name: 'webhook-fanout',
    file: 'bench/webhook-fanout.ts',
    quick: { BENCH_FANOUT_CREATES: '60' },
    full: { BENCH_FANOUT_CREATES: '300' },
    timeoutMin: 10,
  },
  {
    name: 'bulk-create',
    file: 'bench/bulk-create.ts',
    quick: { BENCH_BULK_ROWS: '100' },
    full: { BENCH_BULK_ROWS: '500' },
    timeoutMin: 10,
  },
  {
    name: 'metrics-follow',
    file: 'bench/metrics-follow.ts',
    quick: { BENCH_FOLLOWED: '1000' },
    full: { BENCH_FOLLOWED: '10000' },
    timeoutMin: 15,
  },
  {
    name: 'embedded-http',
    file: 'bench/embedded-http.ts',
    quick: { BENCH_HTTP_SECONDS: '3', BENCH_HTTP_ROUNDS: '1', BENCH_KEYS: '100' },
    full: { BENCH_HTTP_SECONDS: '10', BENCH_HTTP_ROUNDS: '2' },
    timeoutMin: 10,
    needs: { file: '.tools/bin/wrk', setup: 'sh scripts/setup.sh --bench' },
  },
  {
    name: 'redirect',
    file: 'bench/redirect.ts',
    quick: { BENCH_REDIRECT_SECONDS: '3', BENCH_REDIRECT_ROUNDS: '1' },
    full: { BENCH_REDIRECT_SECONDS: '10', BENCH_REDIRECT_ROUNDS: '2' },
    timeoutMin: 5,
    needs: { file: '.tools/bin/wrk', setup: 'sh scripts/setup.sh --bench' },
  },
];

/** The last line of stdout that is a JSON object with figures (the app's own log lines may precede it). */
function figuresFrom(stdout: string): Metric[] | undefined {
  const lines = stdout.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{"bench"')) continue;
    try {
      const obj = JSON.parse(line) as { metrics?: Metric[] };
      if (Array.isArray(obj.metrics)) return obj.metrics;
    } catch {}
  }
  return undefined;
}

function machine(): string {
  const [a, b, c] = loadavg();
  return `${cpus().length} cores (${cpus()[0]?.model.trim() ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB memory, load average ${a!.toFixed(2)} / ${b!.toFixed(2)} / ${c!.toFixed(2)}, Bun ${Bun.version}`;
}

// --------------------------------------------------------------------------------------------
let current: ReturnType<typeof Bun.spawn> | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    // The child stops its own stack on SIGINT (bench/stack.ts); a second signal is not needed.
    if (current && current.exitCode === null) current.kill('SIGINT');
  });
}

const only = process.env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const selected = BENCHES.filter((b) => !only || only.includes(b.name));
if (only) {
  const unknown = only.filter((n) => !BENCHES.some((b) => b.name === n));
  if (unknown.length) {
    console.error(`BENCH_ONLY: unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
    process.exit(2);
  }
}

const logDir = mkdtempSync(join(tmpdir(), 'postpilot-bench-all-'));
const started = new Date();
const machineAtStart = machine();
console.error(`[all] ${QUICK ? 'QUICK mode (small counts)' : 'full suite'}: ${selected.map((b) => b.name).join(', ')}`);
console.error(`[all] machine: ${machineAtStart}`);
console.error(`[all] each benchmark's full output: ${logDir}/<name>.log`);

interface Outcome {
  bench: Bench;
  seconds: number;
  status: 'ok' | 'failed' | 'timeout' | 'missing' | 'skipped' | 'no figures' | 'interrupted';
  metrics: Metric[];
  knobs: Record<string, string>;
}
const outcomes: Outcome[] = [];

for (const bench of selected) {
  if (interrupted) break;
  const file = join(ROOT, bench.file);
  const knobs = Object.fromEntries(Object.entries(QUICK ? bench.quick : bench.full).filter(([k]) => !process.env[k]));
  if (!(await Bun.file(file).exists())) {
    outcomes.push({ bench, seconds: 0, status: 'missing', metrics: [], knobs });
    continue;
  }
  if (bench.needs && !(await Bun.file(join(ROOT, bench.needs.file)).exists())) {
    console.error(`\n[all] ── ${bench.name}: skipped, ${bench.needs.file} is missing (${bench.needs.setup} builds it)`);
    outcomes.push({ bench, seconds: 0, status: 'skipped', metrics: [], knobs });
    continue;
  }
  console.error(
    `\n[all] ── ${bench.name} ${Object.entries(knobs)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  const logPath = join(logDir, `${bench.name}.log`);
  const log = openSync(logPath, 'w');
  const t0 = performance.now();
  const child = Bun.spawn([process.execPath, 'run', file, '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...knobs, BENCH_JSON: '1' },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  current = child;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    console.error(`[all] ${bench.name}: no result after ${bench.timeoutMin} min; interrupting it`);
    child.kill('SIGINT');
    setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 60_000).unref();
  }, bench.timeoutMin * 60_000);

  // stderr: the human report, shown as it comes and kept in the log; stdout: figures (+ app logs), kept.
  const decoder = new TextDecoder();
  let stdout = '';
  let stderr = '';
  const pump = async (stream: ReadableStream<Uint8Array>, onText: (t: string) => void) => {
    for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
  };
  await Promise.all([
    pump(child.stdout as ReadableStream<Uint8Array>, (t) => {
      stdout += t;
    }),
    pump(child.stderr as ReadableStream<Uint8Array>, (t) => {
      stderr += t;
      process.stderr.write(t);
    }),
  ]);
  const code = await child.exited;
  clearTimeout(timer);
  current = undefined;
  writeFileSync(log, `${stderr}\n----- stdout -----\n${stdout}`);
  closeSync(log);

  const seconds = (performance.now() - t0) / 1000;
  const metrics = figuresFrom(stdout) ?? [];
  const status: Outcome['status'] = interrupted
    ? 'interrupted'
    : timedOut
      ? 'timeout'
      : code !== 0
        ? 'failed'
        : metrics.length
          ? 'ok'
          : 'no figures';
  outcomes.push({ bench, seconds, status, metrics, knobs });
  console.error(`[all] ${bench.name}: ${status} in ${seconds.toFixed(0)} s (exit ${code})`);
}

// --------------------------------------------------------------------------------------------
const rows: [string, string, string][] = [];
for (const o of outcomes) {
  if (o.status !== 'ok' && !o.metrics.length) {
    rows.push([
      `${o.bench.name}`,
      o.status === 'missing'
        ? `not run (${o.bench.file} not found)`
        : o.status === 'skipped'
          ? `skipped (needs ${o.bench.needs?.setup})`
          : `${o.status} (see ${join(logDir, `${o.bench.name}.log`)})`,
      '',
    ]);
    continue;
  }
  for (const m of o.metrics) rows.push([m.metric, formatValue(m.value), m.unit]);
  if (o.status !== 'ok') rows.push([`${o.bench.name}`, o.status, '']);
}

function formatValue(v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(Math.abs(v) >= 1 ? 2 : 3);
}

const widths = [
  Math.max(6, ...rows.map((r) => r[0].length)),
  Math.max(5, ...rows.map((r) => r[1].length)),
  Math.max(4, ...rows.map((r) => r[2].length)),
];
const line = (r: [string, string, string]) => `| ${r[0].padEnd(widths[0]!)} | ${r[1].padStart(widths[1]!)} | ${r[2].padEnd(widths[2]!)} |`;
const total = outcomes.reduce((s, o) => s + o.seconds, 0);
console.log('');
console.log(
  `Postpilot benchmarks — ${QUICK ? 'QUICK mode (small counts: a smoke run, not figures to quote)' : 'full suite'}, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${(total / 60).toFixed(1)} min`,
);
console.log(`machine at start: ${machineAtStart}`);
console.log(`machine at end:   ${machine()}`);
console.log('');
console.log(line(['metric', 'value', 'unit']));
console.log(`|${'-'.repeat(widths[0]! + 2)}|${'-'.repeat(widths[1]! + 1)}:|${'-'.repeat(widths[2]! + 2)}|`);
for (const r of rows) console.log(line(r));
console.log('');
console.log(`runs: ${outcomes.map((o) => `${o.bench.name} ${o.status} ${o.seconds.toFixed(0)} s`).join('; ')}`);
console.log(`full output of each: ${logDir}`);

if (process.env.BENCH_OUT) {
  writeFileSync(
    process.env.BENCH_OUT,
    `${JSON.stringify({ date: started.toISOString(), quick: QUICK, machineAtStart, machineAtEnd: machine(), runs: outcomes.map((o) => ({ name: o.bench.name, status: o.status, seconds: Math.round(o.seconds), knobs: o.knobs, metrics: o.metrics })) }, null, 2)}\n`,
  );
  console.log(`figures written to ${process.env.BENCH_OUT}`);
}
// A failed, missing or interrupted benchmark makes the whole suite fail; one skipped for a tool
// that only an optional setup step installs does not.
process.exit(outcomes.length === selected.length && outcomes.every((o) => o.status === 'ok' || o.status === 'skipped') ? 0 : 1);
