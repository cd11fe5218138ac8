// The short-link redirect (`GET /l/{code}`, api/routes/short-links.ts) under wrk, beside a bare
// Elysia route measured in the same run: the app (createApp) on a real socket in this process, on
// a throwaway embedded Postgres, one published link made by the publish path's own code
// (domain/links/published.ts); the bare route in a Bun process of its own (bench/bare-server.ts).
// Every request of the run comes from one address (127.0.0.1) with a browser's User-Agent, so
// each one looks its link up and tries its click (one row per minute, the others `on conflict do
// nothing`): the path a real click takes. Prints req/s, latency, CPU per request and the load
// average; asserts nothing.
//
//   .tools/bin/bun run bench/redirect.ts
//   BENCH_REDIRECT_SECONDS=10 BENCH_REDIRECT_ROUNDS=2 BENCH_CONNECTIONS=32 .tools/bin/bun run bench/redirect.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOrm, migrate } from '../db/orm.ts';
import { sql } from '../db/sql.ts';
import { EMBEDDED_DB_NAME, embeddedDatabaseUrl } from '../lib/embedded.ts';
import { newId } from '../lib/ids.ts';
import { createOrganization } from '../domain/organizations.ts';
import { sentText } from '../domain/links/published.ts';
import { httpLinks, useShortLinkBase } from '../domain/links/rewrite.ts';
import { createApp } from '../server/app.ts';
import { startEmbeddedPostgres } from '../scripts/embedded/postgres.ts';
import { readCpu, cpuPerRequest, cpuNote } from './cpu.ts';
import { startBareServer } from './embedded.ts';
import { addBenchChannel, distinctFreePorts, envInt, machineNote, ms, onStop, procCpuMs, runBench, say } from './stack.ts';
import { wrk, wrkAvailable, type WrkResult } from './wrk.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const SECONDS = envInt('BENCH_REDIRECT_SECONDS', 10, 1, 600);
const ROUNDS = envInt('BENCH_REDIRECT_ROUNDS', 2, 1, 10);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 32, 1, 1000);

const TEXT = 'Read https://shop.example.com/spring?ref=bench';
const LINKS = { shorten: true, utm: { campaign: 'bench' } };

const line = (name: string, r: WrkResult, extra = '') =>
  `${name.padEnd(36)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}` +
  (r.non2xx || r.socketErrors ? `  NOT 2xx/3xx ${r.non2xx}, socket errors ${r.socketErrors}` : '') +
  (extra ? `  ${extra}` : '');

await runBench(async () => {
  if (!wrkAvailable()) throw new Error('wrk is missing: run `sh scripts/setup.sh --bench`');
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-bench-redirect-'));
  mkdirSync(join(dir, 'logs'));
  onStop('temp directory', async () => rmSync(dir, { recursive: true, force: true }));
  const [pgPort, apiPort] = (await distinctFreePorts(2)) as [number, number];
  say(`Postgres on 127.0.0.1:${pgPort} (throwaway data in ${dir})`);
  const pg = await startEmbeddedPostgres({ dir: join(dir, 'pg'), port: pgPort, logFile: join(dir, 'logs', 'postgres.log') });
  onStop('Postgres', pg.stop);
  const orm = await createOrm(embeddedDatabaseUrl({ embeddedPgPort: pgPort }), 10);
  onStop('ORM', () => orm.close());
  await migrate(orm);

  // One published Mastodon post whose link the publish path made a short link.
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  useShortLinkBase(apiUrl);
  const em = orm.em.fork();
  const org = await createOrganization(em, { name: `Redirect bench ${EMBEDDED_DB_NAME}`, plan: 'ENTERPRISE' });
  const channel = await addBenchChannel(em, randomBytes(32), org.id, 'https://mastodon.example');
  const postId = newId('post');
  const pcId = newId('pc');
  await sql(
    em,
    `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, links, created_at, updated_at)
     values (?, ?, 'published', ?, 'api', now(), now(), ?::jsonb, now(), now())`,
    [postId, org.id, TEXT, JSON.stringify(LINKS)],
  );
  await sql(
    em,
    `insert into post_channels (id, post_id, channel_id, platform, status, content, published_at, created_at, updated_at)
     values (?, ?, ?, 'MASTODON', 'published', ?, now(), now(), now())`,
    [pcId, postId, channel.id, TEXT],
  );
  const sent = await sentText(em, { postId, postChannelId: pcId, platform: 'MASTODON', links: LINKS }, TEXT);
  const shortUrl = httpLinks(sent)[0]!.url;

  const app = createApp({ orm, log: () => {} }).listen({ port: apiPort, hostname: '127.0.0.1' });
  onStop('API', async () => {
    await app.stop(true);
  });
  const bare = await startBareServer();
  const probe = await fetch(shortUrl, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 bench' } });
  if (probe.status !== 302) throw new Error(`${shortUrl} answered ${probe.status}, not 302`);
  say(`short link ${shortUrl} → ${probe.headers.get('location')}`);
  say(`wrk: ${CONNECTIONS} connections, 2 threads, ${SECONDS} s per measure, ${ROUNDS} round(s)`);
  const loadBefore = machineNote();
  say(loadBefore);

  // Warm-up (JIT, pool, prepared statements), not reported.
  await wrk({ url: bare.url, seconds: 2, connections: CONNECTIONS });
  await wrk({ url: shortUrl, seconds: 2, connections: CONNECTIONS });

  const bareRuns: WrkResult[] = [];
  const redirectRuns: WrkResult[] = [];
  let cpu = { api: 0, postgres: 0 };
  for (let round = 1; round <= ROUNDS; round++) {
    const b = await wrk({ url: bare.url, seconds: SECONDS, connections: CONNECTIONS });
    bareRuns.push(b);
    console.log(line(`round ${round} bare route (own process)`, b));
    const before = readCpu();
    const r = await wrk({ url: shortUrl, seconds: SECONDS, connections: CONNECTIONS });
    const per = cpuPerRequest(before, readCpu(), r.requests);
    cpu = { api: cpu.api + per.api / ROUNDS, postgres: cpu.postgres + per.postgres / ROUNDS };
    redirectRuns.push(r);
    console.log(line(`round ${round} GET /l/{code} (302 + click)`, r, cpuNote(per, 'app')));
  }
  const [clicks] = await sql<{ n: number }>(orm.em.fork(), 'select count(*)::int as n from link_clicks');
  const mean = (rs: WrkResult[]) => rs.reduce((s, r) => s + r.rps, 0) / rs.length;
  const bareRps = mean(bareRuns);
  const redirectRps = mean(redirectRuns);
  const p99 = Math.max(...redirectRuns.map((r) => r.latency.p99));
  const loadAfter = machineNote();
  console.log('');
  console.log('Short-link redirect');
  console.log(`  bare Elysia route (own process)   ${bareRps.toFixed(0).padStart(7)} req/s`);
  console.log(
    `  GET /l/{code}                     ${redirectRps.toFixed(0).padStart(7)} req/s   ratio to bare ${(redirectRps / bareRps).toFixed(3)}`,
  );
  console.log(`    p99 ${ms(p99)}; ${cpuNote(cpu, 'app')}; click rows written: ${clicks!.n} (one per minute of the run)`);
  console.log(
    `  bare route CPU (its own process): ${((procCpuMs(bare.pid) / bareRuns.reduce((s, r) => s + r.requests, 0)) * 1000).toFixed(1)} µs/request`,
  );
  console.log(`  ${loadBefore} → ${loadAfter}`);
  console.log('');

  if (JSON_OUT) {
    const r = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
    const metrics = [
      { metric: 'bare Elysia route, own process (wrk)', value: r(bareRps, 0), unit: 'req/s' },
      { metric: 'GET /l/{code} redirect with its click (wrk)', value: r(redirectRps, 0), unit: 'req/s' },
      { metric: 'GET /l/{code} / bare route', value: r(redirectRps / bareRps, 3), unit: '×' },
      { metric: 'GET /l/{code} p99', value: r(p99), unit: 'ms' },
      { metric: 'CPU per redirect, app', value: r(cpu.api, 3), unit: 'ms' },
      { metric: 'CPU per redirect, Postgres', value: r(cpu.postgres, 3), unit: 'ms' },
    ];
    await Bun.write(Bun.stdout, `${JSON.stringify({ bench: 'redirect', metrics })}\n`);
  }
});
