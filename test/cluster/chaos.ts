// `npm run test:cluster`: the production topology (scripts/cluster/stack.ts — Postgres, the real
// Temporal server on it, SeaweedFS, two API processes, two workers) under faults, with a load of
// posts on three platform fakes (test/fakes) — Mastodon as it is, X answering slowly after it has
// accepted a post, LinkedIn refusing every fourth publish with a 503. Four phases, one fault each:
//   1. a worker SIGKILLed in the middle of publishing, then restarted;
//   2. the Temporal server SIGKILLed while posts sleep and publishes are in flight, then restarted;
//   3. Postgres restarted (fast shutdown) while posts are created and published;
//   4. one API process SIGKILLed while clients create posts (they retry with their
//      Idempotency-Key on the other API), then restarted.
// After each: every post answered 201 exists and is published exactly once on every channel
// (counted on the fakes), none is left scheduled/publishing past its time + LATE_BOUND_MS, no
// channel of a post (its post_channels rows) got a second publish request unless an earlier one's
// answer was lost (the fakes deduplicate — Mastodon's Idempotency-Key, X refusing repeated text,
// LinkedIn's DUPLICATE_POST — so a re-send is counted where it arrives, not in the copies), the
// processes that were not killed kept answering (JSON, no hangs, no empty replies), and a create
// cut off after its commit (its request got no answer or a 5xx, yet its post is in Postgres) was
// answered by its retry with the same Idempotency-Key 201 with that very post. Prints a table;
// exits 1 on any violation. Not part of `bun test` (docs/operations.md "Chaos: `npm run test:cluster`": it takes minutes).
//   bun test/cluster/chaos.ts [--posts N]   (N posts per phase, default 60)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createOrm } from '../../db/orm.ts';
import { sql } from '../../db/sql.ts';
import { loadConfig } from '../../lib/config.ts';
import { createApiKey } from '../../services/api-keys.ts';
import { addChannel } from '../../domain/channels.ts';
import { createOrganization } from '../../domain/organizations.ts';
import { freeClusterPorts, startCluster, type Cluster } from '../../scripts/cluster/stack.ts';
import { startFakeLinkedIn } from '../fakes/linkedin.ts';
import { startFakeMastodon } from '../fakes/mastodon.ts';
import { startFakeX } from '../fakes/x.ts';
import { startFaultyProxy } from './faulty-proxy.ts';

/** A post still scheduled/publishing this long after its time (or after it was answered 201) is stuck. */
const LATE_BOUND_MS = 120_000;
/**
 * A publish answered this long before a worker's SIGKILL may have died with it, before its
 * heartbeat (throttled to a second) or its row reached Temporal or Postgres: its answer counts as lost.
 */
const KILL_WINDOW_MS = 5_000;
/** A request with no answer within this is a hang. */
const REQUEST_TIMEOUT_MS = 20_000;
const argPosts = process.argv.indexOf('--posts');
const POSTS = argPosts > 0 ? Number(process.argv[argPosts + 1]) : 60;
const CLIENTS = 6;
/**
 * How long a client keeps retrying one create: past the longest a fault keeps creates from
 * succeeding (Temporal down 10 s, then up to 3 minutes for its restart). A create cut off before
 * its commit leaves its Idempotency-Key free at once; one cut off after it has its retry answered
 * 201 with its post (services/idempotency.ts createOnce).
 */
const GIVE_UP_MS = 4 * 60_000;

const say = (m: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${m}`);

// --- HTTP with outcome classes ---------------------------------------------------------------------

type Outcome =
  | { kind: 'answer'; status: number; json: any; text: string; replayed: boolean }
  | { kind: 'no-answer'; why: 'refused' | 'reset/empty' | 'hang' };

async function request(
  port: number,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Outcome> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON: reported */
    }
    return { kind: 'answer', status: res.status, json, text, replayed: res.headers.get('idempotent-replayed') === 'true' };
  } catch (e) {
    const err = e as Error & { code?: string };
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return { kind: 'no-answer', why: 'hang' };
    if (/ConnectionRefused|ECONNREFUSED/i.test(`${err.code} ${err.message}`)) return { kind: 'no-answer', why: 'refused' };
    return { kind: 'no-answer', why: 'reset/empty' };
  }
}

/** An error answer in the spec's shape (JSON, error.code and error.message). */
const cleanError = (o: Outcome) =>
  o.kind === 'answer' && typeof o.json?.error?.code === 'string' && typeof o.json?.error?.message === 'string';

/** No answer or a 5xx: the request may or may not have committed what it was creating. */
const cutOff = (o: Outcome) => o.kind === 'no-answer' || o.status >= 500;

function describeAttempt(a: Attempt, firstAt: number): string {
  const o = a.outcome;
  const what =
    o.kind === 'no-answer'
      ? `no answer (${o.why})`
      : `${o.status}${o.json?.error?.code ? ` ${o.json.error.code}` : ''}${o.status === 201 ? ` ${o.json?.id}` : ''}${o.replayed ? ' Idempotent-Replayed' : ''}`;
  return `api-${a.api + 1} at +${((a.startedAt - firstAt) / 1000).toFixed(1)} s → ${what}`;
}

// --- the run ------------------------------------------------------------------------------------------

interface Created {
  id: string;
  marker: string;
  publishAt: number;
  answeredAt: number;
}

/** One request of a create, and the client's clock when it was sent. */
interface Attempt {
  api: number;
  startedAt: number;
  outcome: Outcome;
}

/** One create: its marker (in its text), its Idempotency-Key and every request made for it. */
interface CreateRun {
  marker: string;
  idem: string;
  attempts: Attempt[];
}

interface PhaseContext {
  killedApis: Set<number>;
  /** Creates not yet answered 201 (all APIs), and those whose request is on API i right now. */
  creating: () => number;
  creatingOn: (api: number) => number;
  /** Posts answered 201 so far in this phase. */
  created: () => number;
}

interface PhaseResult {
  fault: string;
  posts: number;
  publishedOnce: number;
  duplicates: number;
  /** Publish requests that reached a fake, per (post, channel): the most, and the pairs with more than one… */
  maxSends: number;
  resentPairs: number;
  /** …and the answers the proxies saw lost (or die with a killed worker) for those pairs. */
  lostAnswers: number;
  lost: number;
  stuck: number;
  maxLatenessMs: number;
  /** From a create's first attempt to its 201, retries included. */
  slowestCreateMs: number;
  /** Creates whose request got no answer (or a 5xx) although it committed the post… */
  cutOffAfterCommit: number;
  /** …and of those, how many the retry with the same key answered 201 with that post. */
  cutOffAnswered: number;
  errors: Record<string, number>;
  violations: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'postpilot-chaos-'));
const t0 = performance.now();
const mastodon = await startFakeMastodon();
const x = await startFakeX();
const linkedin = await startFakeLinkedIn();
// No fault of its own: it records which Mastodon publishes lost their answer.
const mdProxy = startFaultyProxy({ target: mastodon.url, match: (m, p) => m === 'POST' && p === '/api/v1/statuses' });
const xProxy = startFaultyProxy({ target: x.url, match: (m, p) => m === 'POST' && p === '/2/tweets', delayMs: 1500 });
const liProxy = startFaultyProxy({
  target: linkedin.url,
  match: (m, p) => m === 'POST' && p === '/rest/posts',
  failEvery: 4,
  failBody: { status: 503, serviceErrorCode: 0, code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable' },
});

let cluster: Cluster | undefined;
const results: PhaseResult[] = [];
let exitCode = 0;
/** When the run SIGKILLed a worker (a publish answered just before may have died with it). */
const workerKills: number[] = [];
// Ctrl-C: stop the cluster too (its processes run in sessions of their own).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    say(`${signal}: stopping the cluster`);
    void Promise.resolve(cluster?.kill()).finally(() => process.exit(130));
  });
}
try {
  say(`cluster in ${dir}`);
  cluster = await startCluster({
    dir,
    ports: await freeClusterPorts(),
    workers: 2,
    ui: false,
    say: (m) => say(`  ${m}`),
    appEnv: {
      X_API_URL: xProxy.url,
      X_CLIENT_ID: x.clientId,
      ...(x.clientSecret ? { X_CLIENT_SECRET: x.clientSecret } : {}),
      LINKEDIN_API_URL: liProxy.url,
      LINKEDIN_AUTH_URL: liProxy.url,
      LINKEDIN_CLIENT_ID: linkedin.clientId,
      LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
      // Short enough that a create meeting a dead Temporal answers 503 well before the client gives up.
      TEMPORAL_REQUEST_TIMEOUT_MS: '5000',
    },
  });
  const c = cluster;

  // An organization, keys (one per client, one for the probes) and three channels, straight in the database.
  const orm = await createOrm(c.appEnv.DATABASE_URL!, 2);
  const credentialsKey = loadConfig(c.appEnv, ['CREDENTIALS_KEY']).credentialsKey!;
  const org = await createOrganization(orm.em.fork(), { name: 'Chaos', plan: 'ENTERPRISE' });
  const newKey = async (name: string) =>
    (await createApiKey(orm.em.fork(), { organizationId: org.id, name, scopes: ['read', 'generate', 'publish'], channels: 'all' })).key;
  const clientKeys = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => newKey(`client ${i}`)));
  const probeKey = await newKey('probe');
  const channels = [
    await addChannel(orm.em.fork(), credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'mastodon',
      credentials: { instanceUrl: mdProxy.url, accessToken: 'good-token' },
    }),
    await addChannel(orm.em.fork(), credentialsKey, {
      organizationId: org.id,
      platform: 'X',
      name: 'x (slow)',
      credentials: { accessToken: 'good-token' },
    }),
    await addChannel(orm.em.fork(), credentialsKey, {
      organizationId: org.id,
      platform: 'LINKEDIN',
      name: 'linkedin (flaky)',
      credentials: { accessToken: 'good-token', authorUrn: linkedin.member },
    }),
  ];
  await orm.close();
  const textsOn = (platform: string): string[] =>
    platform === 'MASTODON'
      ? mastodon.statuses.map((s) => s.text)
      : platform === 'X'
        ? x.tweets.map((t) => t.text)
        : linkedin.posts.map((p) => p.rendered);
  const received = (platform: string, marker: string): number => textsOn(platform).filter((t) => t.includes(marker)).length;
  const allTexts = () => ['MASTODON', 'X', 'LINKEDIN'].flatMap(textsOn);
  const sendsOn = (platform: string): string[] =>
    platform === 'MASTODON'
      ? mastodon.sends.map((s) => s.text)
      : platform === 'X'
        ? x.sends.map((s) => s.text)
        : linkedin.sends.map((s) => s.rendered);
  const sends = (platform: string, marker: string): number => sendsOn(platform).filter((t) => t.includes(marker)).length;
  const proxyOf: Record<string, { exchanges: { body: string; answeredAt: number; delivered: boolean }[] }> = {
    MASTODON: mdProxy,
    X: xProxy,
    LINKEDIN: liProxy,
  };
  const lostAnswers = (platform: string, marker: string): number =>
    (proxyOf[platform]?.exchanges ?? []).filter(
      (e) => e.body.includes(marker) && (!e.delivered || workerKills.some((k) => e.answeredAt <= k && k - e.answeredAt <= KILL_WINDOW_MS)),
    ).length;
  say(
    `stack ready in ${((performance.now() - t0) / 1000).toFixed(0)} s; ${POSTS} posts per phase on ${channels.map((ch) => ch.platform).join(', ')}`,
  );

  const phases: { fault: string; run: (ctx: PhaseContext) => Promise<void> }[] = [
    {
      fault: 'worker SIGKILL mid-publish',
      run: async () => {
        await until(() => xProxy.inFlight() >= 2, 60_000);
        say(`  SIGKILL worker-1 (${xProxy.inFlight()} X publishes in flight)`);
        workerKills.push(Date.now());
        await c.workers[0]!.kill();
        await Bun.sleep(3000);
        await c.workers[0]!.start();
        say('  worker-1 restarted');
      },
    },
    {
      fault: 'Temporal SIGKILL (sleeping + in flight)',
      run: async ({ created }) => {
        // A third of the posts in: a dozen scheduled ones sleep, publish-now ones are going out.
        await until(() => created() >= POSTS / 3 && xProxy.inFlight() > 0, 60_000);
        say(`  SIGKILL temporal-server (${created()} posts in, ${xProxy.inFlight()} X publishes in flight)`);
        await c.temporal.kill();
        await Bun.sleep(10_000);
        await c.temporal.start(180_000);
        say('  temporal-server restarted');
      },
    },
    {
      fault: 'Postgres fast restart',
      run: async ({ creating }) => {
        await until(() => xProxy.inFlight() > 0 && creating() > 0, 60_000);
        say('  Postgres fast shutdown + start (creates and publishes running)');
        await c.postgres.restart();
        say('  Postgres back');
      },
    },
    {
      fault: 'API SIGKILL during creates',
      run: async ({ killedApis, creatingOn }) => {
        await Bun.sleep(3000);
        await until(() => creatingOn(0) >= 1, 60_000);
        say(`  SIGKILL api-1 (${creatingOn(0)} creates in flight on it)`);
        killedApis.add(0);
        await c.apis[0]!.kill();
      },
    },
  ];

  for (const [n, phase] of phases.entries()) {
    say(`phase ${n + 1}: ${phase.fault}`);
    const r = await runPhase(c, phase, n, {
      clientKeys,
      probeKey,
      organizationId: org.id,
      channelIds: channels.map((ch) => ch.id),
      received,
      allTexts,
      sends,
      lostAnswers,
    });
    results.push(r);
    for (const v of r.violations) say(`  VIOLATION: ${v}`);
    // Phase 4 killed api-1: bring it back so the cluster is whole again.
    if (!c.apis[0]!.alive()) await c.apis[0]!.start();
  }
} catch (e) {
  console.error(`[chaos] failed: ${(e as Error).stack ?? e}`);
  exitCode = 1;
} finally {
  printTable(results);
  const minutes = ((performance.now() - t0) / 60_000).toFixed(1);
  say(`took ${minutes} min`);
  await cluster?.stop();
  await Promise.all([mastodon.stop(), x.stop(), linkedin.stop(), mdProxy.stop(), xProxy.stop(), liProxy.stop()]);
  if (results.some((r) => r.violations.length) || results.length < 4) exitCode = 1;
  if (exitCode === 0) rmSync(dir, { recursive: true, force: true });
  else say(`logs kept in ${join(dir, 'logs')}`);
}
process.exit(exitCode);

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('the condition for the fault never came');
    await Bun.sleep(50);
  }
}

async function runPhase(
  c: Cluster,
  phase: { fault: string; run: (ctx: PhaseContext) => Promise<void> },
  index: number,
  env: {
    clientKeys: string[];
    probeKey: string;
    organizationId: string;
    channelIds: string[];
    received: (platform: string, marker: string) => number;
    allTexts: () => string[];
    sends: (platform: string, marker: string) => number;
    lostAnswers: (platform: string, marker: string) => number;
  },
): Promise<PhaseResult> {
  const violations: string[] = [];
  const errors: Record<string, number> = {};
  const count = (k: string) => void (errors[k] = (errors[k] ?? 0) + 1);
  const killedApis = new Set<number>();
  const created: Created[] = [];
  const runs: CreateRun[] = [];
  let inFlightCreates = 0;
  let slowestCreateMs = 0;
  const onApi = [0, 0];
  const ports = c.ports.apis;

  // Probes: every API process that is not killed answers, JSON, in time.
  let probing = true;
  const probes = ports.map(async (port, i) => {
    while (probing) {
      const o = await request(port, 'GET', '/v1/me', env.probeKey);
      if (!killedApis.has(i)) {
        if (o.kind === 'no-answer') violations.push(`api-${i + 1} (not killed) gave no answer to GET /v1/me: ${o.why}`);
        else if (o.status !== 200 && !(o.status === 503 && cleanError(o))) {
          violations.push(`api-${i + 1} GET /v1/me → ${o.status} ${o.text.slice(0, 200)}`);
        }
      }
      await Bun.sleep(500);
    }
  });

  // The load: POSTS posts paced over ~30 s by CLIENTS clients; half publish now, half within the minute.
  let next = 0;
  const clients = env.clientKeys.map(async (key, ci) => {
    for (;;) {
      const n = next++;
      if (n >= POSTS) return;
      await Bun.sleep(((30_000 * CLIENTS) / POSTS) * Math.random());
      const marker = `chaos-${index + 1}-${n}-${randomUUID().slice(0, 8)}`;
      const publishAt = n % 2 === 0 ? null : new Date(Date.now() + 15_000 + Math.floor(Math.random() * 40_000)).toISOString();
      const body = {
        content: `Post ${marker}: durable publishing under faults.`,
        channelIds: env.channelIds,
        ...(publishAt ? { publishAt } : {}),
      };
      const idem = randomUUID();
      const run: CreateRun = { marker, idem, attempts: [] };
      runs.push(run);
      let api = (n + ci) % 2;
      const firstTry = Date.now();
      const giveUp = firstTry + GIVE_UP_MS;
      inFlightCreates++;
      try {
        for (;;) {
          const on = api;
          onApi[on]!++;
          const startedAt = Date.now();
          const o = await request(ports[api]!, 'POST', '/v1/posts', key, body, { 'idempotency-key': idem }).finally(() => onApi[on]!--);
          run.attempts.push({ api: on, startedAt, outcome: o });
          if (o.kind === 'answer' && o.status === 201) {
            if (!o.json?.id) violations.push(`201 without an id: ${o.text.slice(0, 200)}`);
            created.push({ id: o.json.id, marker, publishAt: publishAt ? Date.parse(publishAt) : Date.now(), answeredAt: Date.now() });
            slowestCreateMs = Math.max(slowestCreateMs, Date.now() - firstTry);
            break;
          }
          if (o.kind === 'no-answer') {
            count(o.why);
            if (!killedApis.has(api)) violations.push(`api-${api + 1} (not killed) gave no answer to POST /v1/posts: ${o.why}`);
          } else {
            count(String(o.status));
            if (!cleanError(o)) violations.push(`POST /v1/posts → ${o.status} without the error body: ${o.text.slice(0, 200)}`);
            const retryable = o.status === 503 || o.status === 429 || (o.status === 409 && o.json?.error?.code === 'conflict');
            if (!retryable) {
              violations.push(`POST /v1/posts → ${o.status} ${o.text.slice(0, 300)}`);
              break;
            }
          }
          if (Date.now() > giveUp) {
            violations.push(`a create got no 201 within ${GIVE_UP_MS / 60_000} minutes (${marker})`);
            break;
          }
          // The client retries with the same Idempotency-Key, on the other API.
          api = 1 - api;
          await Bun.sleep(500 + Math.random() * 1000);
        }
      } finally {
        inFlightCreates--;
      }
    }
  });

  const fault = phase.run({ killedApis, creating: () => inFlightCreates, creatingOn: (i) => onApi[i]!, created: () => created.length });
  await Promise.all([...clients, fault]);

  // Every 201 names a post that exists and gets published by its time + the bound.
  const alive = ports.findIndex((_, i) => !killedApis.has(i));
  const final = new Map<string, any>();
  const deadline = Math.max(...created.map((p) => Math.max(p.publishAt, p.answeredAt))) + LATE_BOUND_MS;
  for (;;) {
    const pending = created.filter((p) => !['published', 'failed'].includes(final.get(p.id)?.status));
    for (const p of pending) {
      const o = await request(ports[alive]!, 'GET', `/v1/posts/${p.id}`, env.probeKey);
      if (o.kind === 'answer' && o.status === 200) final.set(p.id, o.json);
      else if (o.kind === 'answer' && o.status === 404) {
        violations.push(`201 for ${p.id}, which does not exist`);
        final.set(p.id, { status: 'failed', missing: true, channels: [] });
      }
    }
    if (!pending.length || Date.now() > deadline) break;
    await Bun.sleep(2000);
  }
  probing = false;
  await Promise.all(probes);
  // The fakes count a lost-answer retry only when it arrives: give the last ones a moment.
  await Bun.sleep(3000);

  // Each post's channels as Postgres holds them (post_channels), not as the API reports them.
  const targets = new Map<string, { channelId: string; platform: string }[]>();
  if (created.length) {
    const orm = await createOrm(c.appEnv.DATABASE_URL!, 1);
    try {
      const rows: { post_id: string; channel_id: string; platform: string }[] = await sql(
        orm.em.fork(),
        `select post_id, channel_id, platform from post_channels where post_id in (${created.map(() => '?').join(', ')})`,
        created.map((p) => p.id),
      );
      for (const r of rows) targets.set(r.post_id, [...(targets.get(r.post_id) ?? []), { channelId: r.channel_id, platform: r.platform }]);
    } finally {
      await orm.close();
    }
  }

  let publishedOnce = 0;
  let duplicates = 0;
  let lost = 0;
  let stuck = 0;
  let maxLatenessMs = 0;
  let maxSends = 0;
  let resentPairs = 0;
  let lostAnswers = 0;
  for (const p of created) {
    const view = final.get(p.id);
    if (!view || ['scheduled', 'publishing'].includes(view.status)) {
      stuck++;
      violations.push(`${p.id} still ${view?.status ?? 'unknown'} ${LATE_BOUND_MS / 1000} s after its time`);
    } else if (view.status !== 'published')
      violations.push(`${p.id} is ${view.status}: ${JSON.stringify(view.channels?.map((ch: any) => ch.error))}`);
    let once = true;
    const mine = targets.get(p.id) ?? [];
    if (mine.length !== env.channelIds.length)
      violations.push(`${p.id} has ${mine.length} post_channels rows, not ${env.channelIds.length}`);
    for (const t of mine) {
      const n = env.received(t.platform, p.marker);
      if (n === 0) {
        lost++;
        once = false;
        violations.push(`${p.id} never reached ${t.platform}`);
      } else if (n > 1) {
        duplicates += n - 1;
        once = false;
        violations.push(`${p.id} reached ${t.platform} ${n} times`);
      }
      // A re-send is expected only after a lost answer: every send beyond the first needs one.
      const sent = env.sends(t.platform, p.marker);
      maxSends = Math.max(maxSends, sent);
      if (sent > 1) {
        resentPairs++;
        const lostHere = env.lostAnswers(t.platform, p.marker);
        lostAnswers += lostHere;
        if (lostHere < sent - 1) {
          violations.push(`${p.id} was sent to ${t.platform} ${sent} times with ${lostHere} answer(s) lost (channel ${t.channelId})`);
        }
      }
      // Late: after the post's time (publish-now: its creation).
      const ch = view?.channels?.find((v: any) => v.channelId === t.channelId);
      const due = Math.max(Date.parse(view?.scheduledAt), Date.parse(view?.createdAt));
      if (ch?.publishedAt) maxLatenessMs = Math.max(maxLatenessMs, Date.parse(ch.publishedAt) - due);
    }
    if (once && mine.length === env.channelIds.length) publishedOnce++;
  }
  // Posts that reached a platform although no client was answered 201 for them (a client gave up).
  const answered = new Set(created.map((p) => p.marker));
  const prefix = `chaos-${index + 1}-`;
  for (const text of env.allTexts()) {
    const marker = /chaos-\d+-\d+-[0-9a-f]{8}/.exec(text)?.[0];
    if (marker?.startsWith(prefix) && !answered.has(marker)) violations.push(`${marker} was published without a 201`);
  }
  for (const [i, w] of c.workers.entries()) if (!w.alive()) violations.push(`worker-${i + 1} is not running after the phase`);
  if (!c.temporal.alive()) violations.push('temporal-server is not running after the phase');
  const cut = await checkCutOffCreates(c, env.organizationId, index, runs, violations);
  return {
    fault: phase.fault,
    posts: created.length,
    publishedOnce,
    duplicates,
    maxSends,
    resentPairs,
    lostAnswers,
    lost,
    stuck,
    maxLatenessMs,
    slowestCreateMs,
    cutOffAfterCommit: cut.cutOff,
    cutOffAnswered: cut.answered,
    errors,
    violations,
  };
}

/**
 * Creates cut off after their commit: a request that got no answer or a 5xx although its post
 * committed. The post is found in Postgres by the marker in its text; the request that committed
 * it is the last one sent before its Idempotency-Key claim was made (the claim carries the
 * request's time and commits with the post). The answer that follows — the first one that is
 * neither missing, a 5xx nor a 429 — must be 201 with that post. Also a violation: two posts for
 * one create, a post without its key's claim, a committed post answered anything but 201 with it.
 */
async function checkCutOffCreates(
  c: Cluster,
  organizationId: string,
  index: number,
  runs: CreateRun[],
  violations: string[],
): Promise<{ cutOff: number; answered: number }> {
  const orm = await createOrm(c.appEnv.DATABASE_URL!, 1);
  let posts: { id: string; content: string }[];
  let claims: { key: string; post_id: string | null; created_at: Date }[];
  try {
    posts = await sql(orm.em.fork(), 'select id, content from posts where organization_id = ? and content like ?', [
      organizationId,
      `Post chaos-${index + 1}-%`,
    ]);
    claims = await sql(
      orm.em.fork(),
      "select key, post_id, created_at from idempotency_keys where organization_id = ? and endpoint = 'POST /v1/posts'",
      [organizationId],
    );
  } finally {
    await orm.close();
  }
  const claimOf = new Map(claims.map((k) => [k.key, k]));
  let cutOffCount = 0;
  let answered = 0;
  for (const run of runs) {
    const first = run.attempts[0];
    if (!first) continue;
    const mine = posts.filter((p) => p.content.includes(`Post ${run.marker}:`));
    const history = () => run.attempts.map((a) => describeAttempt(a, first.startedAt)).join('; ');
    if (mine.length > 1)
      violations.push(`${run.marker}: ${mine.length} posts for one create (${mine.map((p) => p.id).join(', ')}): ${history()}`);
    const post = mine[0];
    if (!post) continue;
    const claim = claimOf.get(run.idem);
    if (claim?.post_id !== post.id) {
      violations.push(`${run.marker}: post ${post.id} committed, its key's claim names ${claim ? claim.post_id : 'nothing'}: ${history()}`);
      continue;
    }
    // The request that committed it: the last one sent by the time of its claim (requests of one
    // create are at least 0.5 s apart; 250 ms allow for the two clocks' rounding).
    const at = new Date(claim.created_at).getTime();
    let by = -1;
    for (const [i, a] of run.attempts.entries()) if (a.startedAt <= at + 250) by = i;
    const committer = run.attempts[by];
    const replayed = run.attempts.some((a) => a.outcome.kind === 'answer' && a.outcome.status === 201 && a.outcome.replayed);
    if (!committer) {
      violations.push(
        `${run.marker}: post ${post.id} claimed at ${new Date(at).toISOString()}, before any request of its create: ${history()}`,
      );
      continue;
    }
    if (!cutOff(committer.outcome)) {
      const o = committer.outcome;
      if (!(o.kind === 'answer' && o.status === 201 && o.json?.id === post.id)) {
        violations.push(`${run.marker}: the request that committed ${post.id} was answered otherwise: ${history()}`);
      }
      if (replayed) violations.push(`${run.marker}: a replayed 201 though its own request answered it: ${history()}`);
      continue;
    }
    cutOffCount++;
    const answer = run.attempts.slice(by + 1).find((a) => !cutOff(a.outcome) && !(a.outcome.kind === 'answer' && a.outcome.status === 429));
    const o = answer?.outcome;
    if (o?.kind === 'answer' && o.status === 201 && o.json?.id === post.id) answered++;
    else violations.push(`${run.marker}: cut off after committing ${post.id}, its retry was not 201 with it: ${history()}`);
  }
  return { cutOff: cutOffCount, answered };
}

function printTable(rows: PhaseResult[]): void {
  const header = [
    'fault',
    'posts (201)',
    'published once',
    'duplicates',
    'sends: max per post·channel, pairs >1 (lost answers)',
    'lost',
    'stuck',
    'max lateness',
    'slowest create',
    'cut off after commit (retry 201, same post)',
    'API errors by status',
  ];
  const lines = rows.map((r) => [
    r.fault,
    String(r.posts),
    String(r.publishedOnce),
    String(r.duplicates),
    `${r.maxSends}, ${r.resentPairs} (${r.lostAnswers})`,
    String(r.lost),
    String(r.stuck),
    `${(r.maxLatenessMs / 1000).toFixed(1)} s`,
    `${(r.slowestCreateMs / 1000).toFixed(1)} s`,
    `${r.cutOffAfterCommit} (${r.cutOffAnswered})`,
    Object.entries(r.errors)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || 'none',
  ]);
  const md = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...lines.map((l) => `| ${l.join(' | ')} |`)];
  console.log(`\n${md.join('\n')}\n`);
}
