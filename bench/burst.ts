// What the burst benchmarks share (bench/burst-lateness.ts on the embedded default's Temporal dev
// server, bench/burst-cluster.ts on the real Temporal server): N posts due at the same instant
// across C channels on one fake Mastodon, seeded fast (bench/seed-posts.ts: rows, then raw workflow
// starts) well before they are due, so every workflow is asleep on its timer when the instant
// comes. Lateness is the moment the fake receives a post's status minus its publishAt, taken in
// the fake's handler (same process: no polling interval). Beside it, in the same run, the floor:
// a few posts due alone; after it, a sample of the workflows' history events. The same burst runs
// the bare workflow too (bench/burst-ceiling.ts). Prints figures; asserts nothing.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { temporal as proto } from '@temporalio/proto';
import type { FakeMastodon } from '../test/fakes/mastodon.ts';
import { eventTypeName } from '../test/harness/history-events.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { runTag, seedScheduledPosts, type SeedOptions, type SeedTarget } from './seed-posts.ts';
import { childrenOf, envInt, isStopping, ms, procCpuMs, say, summary } from './stack.ts';

export interface BurstOptions {
  posts: number;
  channels: number;
  /** How far ahead of the seeding's start the burst is due (seeding and every workflow asleep before it). */
  leadMs: number;
  /** Posts due alone before the burst, one after the other (the floor; one more as a warm-up). */
  singles: number;
  /** Workflow starts in flight while seeding. */
  concurrency: number;
  /** How long after the due instant the burst may take to arrive. */
  timeoutMs: number;
}

/** The knobs both burst benchmarks read (bench/README.md "Bursts"). */
export function burstOptions(): BurstOptions {
  return {
    posts: envInt('BENCH_BURST', 1000, 1, 100_000),
    channels: envInt('BENCH_BURST_CHANNELS', 10, 1, 100),
    leadMs: envInt('BENCH_BURST_LEAD_MS', 90_000, 1000, 3_600_000),
    singles: envInt('BENCH_BURST_SINGLES', 5, 0, 100),
    concurrency: envInt('BENCH_BURST_CONCURRENCY', 32, 1, 500),
    timeoutMs: envInt('BENCH_TIMEOUT_MS', 120_000, 1000, 3_600_000),
  };
}

/** The targets: p99 ≤ 2 s up to 1,000 posts due at once, ≤ 10 s beyond (10,000); max ≤ 5 s up to 1,000. */
export const targetP99Ms = (posts: number) => (posts > 1000 ? 10_000 : 2000);
export const targetMaxMs = (posts: number) => (posts > 1000 ? undefined : 5000);

/**
 * What a burst starts: the service's post workflows (`servicePosts`) or the bare workflow
 * (bench/burst-ceiling.ts). Each workflow sends the status text(i) to the fake at publishAt(i).
 */
export interface BurstSubject {
  /** Starts workflows [0, count); their workflow ids in the same order, and the starts that failed. */
  seed(o: SeedOptions): Promise<{ workflowIds: string[]; startErrors: number }>;
  /** The rows by status once `expect` of them are published; absent when the subject writes no rows. */
  rows?(like: string, expect: number): Promise<Record<string, number>>;
}

/** The service's posts: rows and workflow starts as POST /v1/posts makes them (bench/seed-posts.ts). */
export const servicePosts = (t: SeedTarget): BurstSubject => ({
  async seed(o) {
    const r = await seedScheduledPosts(t, o);
    return { workflowIds: r.ids.map(postWorkflowId), startErrors: r.startErrors };
  },
  // The workflow writes the row after the status is out: a few seconds for the last ones.
  rows: (like, expect) => burstRows(t, like, expect, 15_000),
});

/** Published workflows whose history events are counted, once closed. */
export const EVENTS_SAMPLE = 20;

export interface BurstTarget extends SeedTarget {
  fake: FakeMastodon;
  /** The channels the posts go to, in turn (all on `fake`). */
  channelIds: string[];
}

export interface BurstResult {
  lateness: ReturnType<typeof summary>;
  floor: ReturnType<typeof summary>;
  /** Burst posts whose status did not reach the fake within the timeout. */
  missing: number;
  /** Burst posts with more than one status at the fake (published twice). */
  duplicates: number;
  /** Burst posts whose publish request reached the fake more than once (a re-send; the fake's Idempotency-Key answers it). */
  resent: number;
  /** The burst's posts rows by status, read once the statuses have arrived (none for the bare workflow). */
  rows: Record<string, number> | undefined;
  /** History events of a sample of the burst's published workflows, once each had closed. */
  events: ReturnType<typeof summary>;
  /** The same sample's events by type (EVENT_TYPE_ left off): the mean count per workflow. */
  eventTypes: [string, number][];
  /** The machine's 1-minute load average just before the burst was due. */
  loadAtDue: number;
  seededIn: number;
  startErrors: number;
  /** Milliseconds left between the end of the seeding and the due instant. */
  spareMs: number;
  /** From 1 s before the due instant to the last arrival, in seconds. */
  span: number;
  /** CPU seconds of each part over `span`. */
  cpu: [string, number][];
  /** CPU seconds of each part over the `restSeconds` just before the burst (every workflow asleep). */
  cpuAtRest: [string, number][];
  restSeconds: number;
  where: { n: number; segments: [string, number[]][] };
}

const wall = () => performance.timeOrigin + performance.now();

/** Runs the floor, then the burst, against a started stack. Undefined when the run was interrupted. */
export async function runBurst(
  t: BurstTarget,
  o: BurstOptions,
  cpuByPart: () => Record<string, number>,
  subject: BurstSubject = servicePosts(t),
): Promise<BurstResult | undefined> {
  const tag = runTag();
  const arrivals = new Map<string, number>();
  const statuses = t.fake.statuses;
  statuses.push = (...items) => {
    const at = wall();
    for (const s of items) if (!arrivals.has(s.text)) arrivals.set(s.text, at);
    return Array.prototype.push.apply(statuses, items);
  };
  const waitFor = async (texts: string[], until: number) => {
    while (!isStopping() && Date.now() < until && texts.some((x) => !arrivals.has(x))) await Bun.sleep(50);
  };

  const singles: number[] = [];
  for (let i = 0; i < o.singles + 1 && !isStopping(); i++) {
    const due = new Date(Date.now() + 3000);
    const text = `bench ${tag} single #${i}`;
    await subject.seed({ count: 1, channelIds: t.channelIds, publishAt: () => due, text: () => text, concurrency: 1 });
    await waitFor([text], due.getTime() + 30_000);
    const at = arrivals.get(text);
    if (i > 0 && at !== undefined) singles.push(at - due.getTime());
  }

  const due = Date.now() + o.leadMs;
  const text = (i: number) => `bench ${tag} burst #${i}`;
  say(`seeding ${o.posts} posts across ${t.channelIds.length} channels, all due in ${(o.leadMs / 1000).toFixed(0)} s`);
  const t0 = performance.now();
  const seed = await subject.seed({
    count: o.posts,
    channelIds: t.channelIds,
    publishAt: () => new Date(due),
    text,
    concurrency: o.concurrency,
    onProgress: (n) => say(`  ${n} started`),
  });
  const seededIn = (performance.now() - t0) / 1000;
  say(`seeded in ${seededIn.toFixed(1)} s (${(o.posts / seededIn).toFixed(0)} posts/s); ${seed.startErrors} start(s) failed`);
  const spareMs = due - Date.now();
  if (spareMs < 5000) say(`warning: only ${spareMs} ms left before the burst (raise BENCH_BURST_LEAD_MS)`);
  // The stack at rest, asleep workflows and all: the second half of the wait (the first is the
  // worker catching up with the starts).
  await Bun.sleep(Math.max(0, (due - Date.now() - 1000) / 2));
  const rest0 = { parts: cpuByPart(), machine: machineBusyMs(), at: performance.now() };
  await Bun.sleep(Math.max(0, due - Date.now() - 1000));
  const loadAtDue = loadavg()[0]!;
  const cpu0 = cpuByPart();
  const machine0 = machineBusyMs();
  const restSeconds = (performance.now() - rest0.at) / 1000;
  const texts = Array.from({ length: o.posts }, (_, i) => text(i));
  await waitFor(texts, due + o.timeoutMs);
  if (isStopping()) return undefined;
  const cpu1 = cpuByPart();
  const machine1 = machineBusyMs();

  const lateness = texts.map((x) => arrivals.get(x)).flatMap((x) => (x === undefined ? [] : [x - due]));
  const span = ((lateness.length ? Math.max(...lateness) : o.timeoutMs) + 1000) / 1000;
  const count = (list: { text: string }[]) => {
    const n = new Map<string, number>();
    for (const s of list) n.set(s.text, (n.get(s.text) ?? 0) + 1);
    return texts.filter((x) => (n.get(x) ?? 0) > 1).length;
  };
  const rows = await subject.rows?.(`bench ${tag} burst #%`, lateness.length);
  const published = seed.workflowIds.filter((_, i) => arrivals.has(text(i)));
  return {
    lateness: summary(lateness),
    floor: summary(singles),
    missing: o.posts - lateness.length,
    duplicates: count(statuses),
    resent: count(t.fake.sends),
    rows,
    ...(await historyEvents(t, published, EVENTS_SAMPLE)),
    loadAtDue,
    seededIn,
    startErrors: seed.startErrors,
    spareMs,
    span,
    cpu: withRest(
      Object.entries(cpu1).map(([part, v]) => [part, (v - (cpu0[part] ?? 0)) / 1000]),
      (machine1 - machine0) / 1000,
    ),
    restSeconds,
    cpuAtRest: withRest(
      Object.entries(cpu0).map(([part, v]) => [part, (v - (rest0.parts[part] ?? 0)) / 1000]),
      (machine0 - rest0.machine) / 1000,
    ),
    where: await breakdown(t, seed.workflowIds, due, (i) => arrivals.get(text(i))),
  };
}

/**
 * The machine's busy CPU time so far, all processes (/proc/stat: user, nice, system, irq,
 * softirq, steal), in ms: what other work on shared cores took shows beside the benchmark's own.
 */
function machineBusyMs(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / 100;
}

const withRest = (parts: [string, number][], machine: number): [string, number][] => [
  ...parts,
  ['rest of the machine (not this run)', Math.max(0, machine - parts.reduce((s, [, v]) => s + v, 0))],
];

/** The burst's posts rows by status, once `published` reaches `expect` (or after `waitMs`). */
async function burstRows(t: SeedTarget, like: string, expect: number, waitMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const res = (await t.orm.em
      .fork()
      .getConnection()
      .execute('select status, count(*)::int as n from posts where content like ? group by status', [like])) as {
      status: string;
      n: number;
    }[];
    const rows = Object.fromEntries(res.map((r) => [r.status, r.n]));
    if ((rows.published ?? 0) >= expect || Date.now() > deadline || isStopping()) return rows;
    await Bun.sleep(500);
  }
}

/** Prints the report: `about` are the lines that say what ran (machine, Temporal, workers). */
export function printBurst(r: BurstResult, o: BurstOptions, title: string, about: string[]): void {
  const p99Target = targetP99Ms(o.posts);
  const maxTarget = targetMaxMs(o.posts);
  console.log('');
  console.log(`== ${title} (${o.posts} posts due at the same instant, ${o.channels} channels; status at the fake − publishAt) ==`);
  for (const line of about) console.log(`  ${line}`);
  console.log(
    `  seeded (raw workflow starts, ${o.concurrency} in flight) in ${r.seededIn.toFixed(1)} s; ${(r.spareMs / 1000).toFixed(1)} s to spare before the burst; ${r.startErrors} start(s) failed`,
  );
  console.log(
    `  arrived ${r.lateness.n}, not within ${o.timeoutMs} ms ${r.missing}; published twice ${r.duplicates}; publish request re-sent ${r.resent}`,
  );
  if (r.rows) {
    console.log(
      `  posts rows: ${Object.entries(r.rows)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  }
  const s = r.lateness;
  console.log(`  burst lateness p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${ms(s.max)}  (n=${s.n})`);
  console.log(
    `    p99 / target ${p99Target} ms = ${(s.p99 / p99Target).toFixed(2)}${maxTarget ? `; max / target ${maxTarget} ms = ${(s.max / maxTarget).toFixed(2)}` : ''}`,
  );
  console.log(`  floor, a post due alone (same run): p50 ${ms(r.floor.p50)}  max ${ms(r.floor.max)}  (n=${r.floor.n})`);
  console.log(`  where it goes, from ${r.where.n} sampled histories (Temporal event times; server clock = this machine):`);
  for (const [name, v] of r.where.segments) {
    const x = summary(v);
    console.log(`    ${name.padEnd(46)} p50 ${ms(x.p50).padStart(10)}  p99 ${ms(x.p99).padStart(10)}  max ${ms(x.max).padStart(10)}`);
  }
  console.log(
    `  burst published at ${(s.n / r.span).toFixed(0)} posts/s; CPU over those ${r.span.toFixed(1)} s (and at rest, the ${r.restSeconds.toFixed(0)} s before):`,
  );
  const rest = new Map(r.cpuAtRest);
  for (const [part, used] of r.cpu) {
    const idle = (rest.get(part) ?? 0) / r.restSeconds;
    const perPost = s.n ? `; ${((used / s.n) * 1000).toFixed(1)} ms per post` : '';
    console.log(
      `    ${part.padEnd(36)} ${used.toFixed(1).padStart(6)} s  (${((used / r.span) * 100).toFixed(0).padStart(3)}% of one core; at rest ${(idle * 100).toFixed(0)}%${perPost})`,
    );
  }
  const busyAtRest = r.cpuAtRest.filter(([part, v]) => !part.startsWith('rest of') && v / r.restSeconds > 0.2).map(([part]) => part);
  if (busyAtRest.length) {
    console.log(
      `    warning: ${busyAtRest.join(', ')} still busy before the burst (the seeded workflows' first tasks): raise BENCH_BURST_LEAD_MS`,
    );
  }
  const own = r.cpu.filter(([part]) => !part.startsWith('rest of')).reduce((sum, [, v]) => sum + v, 0);
  console.log(`    this run's CPU per post published: ${s.n ? ((own / s.n) * 1000).toFixed(0) : 'n/a'} ms`);
  console.log(
    `  history events per published workflow, once closed: mean ${r.events.mean.toFixed(1)}, max ${r.events.max} (n=${r.events.n})`,
  );
  console.log(`    by type (mean per workflow): ${r.eventTypes.map(([type, k]) => `${type} ${k.toFixed(1)}`).join(', ')}`);
  console.log(`  load average (1 min) just before the burst was due: ${r.loadAtDue.toFixed(2)}`);
  console.log('');
}

/** The figures for bench/all.ts (`--json`); `lateness: false` leaves out p50, p99 and max (set beside the ceiling's elsewhere). */
export function burstMetrics(r: BurstResult, o: BurstOptions, lateness = true): { metric: string; value: number; unit: string }[] {
  const r1 = (v: number) => Math.round(v * 10) / 10;
  const r2 = (v: number) => Math.round(v * 100) / 100;
  const s = r.lateness;
  const p99Target = targetP99Ms(o.posts);
  const maxTarget = targetMaxMs(o.posts);
  return [
    ...(lateness
      ? [
          { metric: `burst lateness p50 (${o.posts} due at once, ${o.channels} channels)`, value: r1(s.p50), unit: 'ms' },
          { metric: 'burst lateness p99', value: r1(s.p99), unit: 'ms' },
          { metric: 'burst lateness max', value: r1(s.max), unit: 'ms' },
        ]
      : []),
    { metric: `burst lateness p99 / target ${p99Target} ms`, value: r2(s.p99 / p99Target), unit: '×' },
    ...(maxTarget ? [{ metric: `burst lateness max / target ${maxTarget} ms`, value: r2(s.max / maxTarget), unit: '×' }] : []),
    { metric: 'lateness of a post due alone (floor), p50', value: r1(r.floor.p50), unit: 'ms' },
    { metric: 'burst posts not published', value: r.missing, unit: 'posts' },
    { metric: 'burst posts published twice', value: r.duplicates, unit: 'posts' },
  ];
}

/** user+system CPU ms of a process and everything below it (Postgres' backends, for one). */
export function treeCpuMs(pid: number): number {
  let total = 0;
  const queue = [pid];
  for (let guard = 0; queue.length && guard < 10_000; guard++) {
    const p = queue.shift()!;
    try {
      total += procCpuMs(p);
    } catch {}
    queue.push(...childrenOf(p));
  }
  return total;
}

/** The name of a process (/proc/<pid>/comm), or undefined once it is gone. */
export function procName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Burst posts per second: from 1 s before the due instant to the last arrival. */
export const burstRate = (r: BurstResult) => r.lateness.n / r.span;

/** CPU ms per published post of one part (as cpuByPart names it), over the burst. */
export const cpuPerPostMs = (r: BurstResult, part: string) => ((r.cpu.find(([p]) => p === part)?.[1] ?? 0) / r.lateness.n) * 1000;

/** CPU ms per published post of every part of this run (the rest of the machine left out). */
export const ownCpuPerPostMs = (r: BurstResult) =>
  (r.cpu.filter(([part]) => !part.startsWith('rest of')).reduce((sum, [, v]) => sum + v, 0) / r.lateness.n) * 1000;

/**
 * Event counts of up to `n` of the workflows, spread over the list, each read once it has closed
 * (30 s at most), and the mean count of each event type per workflow.
 */
async function historyEvents(t: SeedTarget, workflowIds: string[], n: number): Promise<Pick<BurstResult, 'events' | 'eventTypes'>> {
  const counts: number[] = [];
  const byType = new Map<string, number>();
  const step = Math.max(1, Math.floor(workflowIds.length / n));
  for (let i = 0; i < workflowIds.length && counts.length < n && !isStopping(); i += step) {
    const handle = t.client.workflow.getHandle(workflowIds[i]!);
    const closed = await Promise.race([
      handle.result().then(
        () => true,
        () => true,
      ),
      Bun.sleep(30_000).then(() => false),
    ]);
    if (!closed) continue;
    const events = (await handle.fetchHistory()).events ?? [];
    counts.push(events.length);
    for (const e of events) {
      const name = eventTypeName(e);
      byType.set(name, (byType.get(name) ?? 0) + 1);
    }
  }
  return {
    events: summary(counts),
    eventTypes: [...byType].map(([type, k]): [string, number] => [type, k / Math.max(1, counts.length)]).sort((a, b) => b[1] - a[1]),
  };
}

/** Splits a sample of the burst's lateness by the workflow histories: where the posts waited. */
async function breakdown(t: SeedTarget, workflowIds: string[], due: number, arrivedAt: (i: number) => number | undefined) {
  const E = proto.api.enums.v1.EventType;
  const names = [
    'publishAt → timer fired (server)',
    'timer fired → workflow task started (worker)',
    'workflow task started → completed',
    'completed → publish activity started',
    'publish activity started → status at the fake',
  ];
  const seg = new Map<string, number[]>(names.map((n) => [n, []]));
  const time = (x: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    x ? Number(x.seconds ?? 0) * 1000 + (x.nanos ?? 0) / 1e6 : Number.NaN;
  const step = Math.max(1, Math.floor(workflowIds.length / 200));
  let n = 0;
  for (let i = 0; i < workflowIds.length && !isStopping(); i += step) {
    const arrived = arrivedAt(i);
    if (arrived === undefined) continue;
    const events = (await t.client.workflow.getHandle(workflowIds[i]!).fetchHistory()).events ?? [];
    const at = events.findIndex((e) => e.eventType === E.EVENT_TYPE_TIMER_FIRED);
    if (at < 0) continue;
    const after = events.slice(at);
    const first = (type: number) => after.find((e) => e.eventType === type);
    const fired = time(events[at]!.eventTime);
    const started = time(first(E.EVENT_TYPE_WORKFLOW_TASK_STARTED)?.eventTime);
    const completed = time(first(E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)?.eventTime);
    const publishStarted = time(first(E.EVENT_TYPE_ACTIVITY_TASK_STARTED)?.eventTime);
    const values = [fired - due, started - fired, completed - started, publishStarted - completed, arrived - publishStarted];
    names.forEach((name, k) => Number.isFinite(values[k]) && seg.get(name)!.push(values[k]!));
    n++;
  }
  return { n, segments: [...seg.entries()] };
}
