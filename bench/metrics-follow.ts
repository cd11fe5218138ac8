// Following published posts' metrics: 10,000 (BENCH_FOLLOWED) channel posts, half on X (read 100
// per call) and half on Mastodon (one per call), all due at once, read by the metrics sweep
// (workflows/metrics-sweep.ts, what its Temporal Schedule runs) on the bench stack's worker
// process. Prints the time to read them all beside its ceiling from the same run (the same
// connectors reading the same posts straight from this process: no Temporal, no Postgres), the
// platform calls per reading, and the worker's memory before and after. Asserts nothing.
//
//   .tools/bin/bun run bench/metrics-follow.ts
//   BENCH_FOLLOWED=2000 .tools/bin/bun run bench/metrics-follow.ts
//   … --json (or BENCH_JSON=1): the report goes to stderr, stdout carries one JSON object of figures.
import { encryptJson } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { createXConnector } from '../platforms/x.ts';
import type { Connector } from '../platforms/types.ts';
import { startFakeX } from '../test/fakes/x.ts';
import { METRICS_SWEEP_WORKFLOW_TYPE, type MetricsSweepSummary } from '../workflows/metrics-sweep-types.ts';
import { envInt, machineNote, onStop, runBench, say, startBenchStack } from './stack.ts';

const JSON_OUT = process.argv.includes('--json') || process.env.BENCH_JSON === '1';
if (JSON_OUT) console.log = console.error;

const r1 = (v: number) => Math.round(v * 10) / 10;
const FOLLOWED = envInt('BENCH_FOLLOWED', 10_000, 10, 200_000);
const CHANNELS = envInt('BENCH_FOLLOWED_CHANNELS', 10, 2, 100);

await runBench(async () => {
  const fakeX = await startFakeX();
  onStop('fake X', () => fakeX.stop());
  const stack = await startBenchStack({ workerEnv: { X_API_URL: fakeX.url } });
  const conn = stack.orm.em.fork().getConnection();

  // Channels: half X, half Mastodon (the stack's fake).
  const channels: { id: string; platform: 'X' | 'MASTODON' }[] = [];
  for (let i = 0; i < CHANNELS; i++) {
    const platform = i % 2 === 0 ? 'X' : 'MASTODON';
    const credentials = platform === 'X' ? { accessToken: 'good-token' } : { instanceUrl: stack.fake.url, accessToken: 'bench-token' };
    const id = newId('ch');
    await conn.execute(
      `insert into channels (id, organization_id, platform, name, status, settings, credentials_encrypted, created_at, updated_at)
       values (?, ?, ?, ?, 'active', '{}', ?, now(), now())`,
      [id, stack.organizationId, platform, `metrics ${i}`, encryptJson(stack.credentialsKey, credentials)],
    );
    channels.push({ id, platform });
  }
  stack.fake.validTokens.add('bench-token');

  // The posts on the platforms and in Postgres, published an hour ago, their first reading due.
  say(`seeding ${FOLLOWED} published channel posts on ${CHANNELS} channels`);
  const publishedAt = new Date(Date.now() - 3_600_000);
  const ids: { platform: 'X' | 'MASTODON'; postId: string }[] = [];
  for (let from = 0; from < FOLLOWED; from += 500) {
    const rows: unknown[] = [];
    const pcs: unknown[] = [];
    for (let i = from; i < Math.min(FOLLOWED, from + 500); i++) {
      const ch = channels[i % CHANNELS]!;
      let platformPostId: string;
      if (ch.platform === 'X') {
        const t = fakeX.addTweet(`bench ${i}`);
        Object.assign(t.metrics, { like_count: i % 50, impression_count: i });
        platformPostId = t.id;
      } else {
        platformPostId = String(9_000_000 + i);
        stack.fake.statuses.push({
          id: platformPostId,
          text: `bench ${i}`,
          media_ids: [],
          visibility: 'public',
          idempotencyKey: null,
          token: 'bench-token',
          created_at: publishedAt.toISOString(),
          url: `${stack.fake.url}/@user/${platformPostId}`,
          uri: `${stack.fake.url}/users/user/statuses/${platformPostId}`,
          favourites_count: i % 40,
          reblogs_count: 1,
          replies_count: 0,
        });
      }
      const postId = newId('post');
      rows.push({ id: postId });
      pcs.push({ id: newId('pc'), post_id: postId, channel_id: ch.id, platform: ch.platform, platform_post_id: platformPostId });
      ids.push({ platform: ch.platform, postId: platformPostId });
    }
    await conn.execute(
      `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, created_at, updated_at)
       select r.id, ?, 'published', 'bench', 'api', ?, ?, now(), now() from jsonb_to_recordset(?::jsonb) as r(id text)`,
      [stack.organizationId, publishedAt, publishedAt, JSON.stringify(rows)],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, metrics_next_at, created_at, updated_at)
       select c.id, c.post_id, c.channel_id, c.platform, 'published', 'bench', c.platform_post_id, 'https://example.com', ?, ?, now(), now()
       from jsonb_to_recordset(?::jsonb) as c(id text, post_id text, channel_id text, platform text, platform_post_id text)`,
      [publishedAt, new Date(Date.now() + 3_600_000), JSON.stringify(pcs)],
    );
  }

  // The ceiling: the same readings by the same connectors from this process, same batch sizes.
  const direct: Record<'X' | 'MASTODON', Connector> = {
    X: createXConnector({ baseUrl: fakeX.url }),
    MASTODON: createMastodonConnector({ outbound: { allowPrivate: true } }),
  };
  const t0 = performance.now();
  for (const platform of ['X', 'MASTODON'] as const) {
    const c = direct[platform];
    const creds = platform === 'X' ? { accessToken: 'good-token' } : { instanceUrl: stack.fake.url, accessToken: 'bench-token' };
    const mine = ids.filter((x) => x.platform === platform).map((x) => x.postId);
    for (let i = 0; i < mine.length; i += c.metricsBatch ?? 1) await c.readMetrics!(creds, mine.slice(i, i + (c.metricsBatch ?? 1)));
  }
  const ceilingSeconds = (performance.now() - t0) / 1000;

  const idle = stack.worker.memory();
  const xBefore = fakeX.count('lookup');
  const mastodonBefore = stack.fake.requests.filter((r) => r.method === 'GET' && /^\/api\/v1\/statuses\/\d+$/.test(r.path)).length;
  const cpuBefore = stack.worker.cpuMs();
  await conn.execute(`update post_channels set metrics_next_at = now() - interval '1 second' where channel_id in (?)`, [
    channels.map((c) => c.id),
  ]);
  say('reading them: the metrics sweep, batches of 500, until none is due');
  const t1 = performance.now();
  let total = 0;
  for (let run = 0; total < FOLLOWED && run < 200; run++) {
    const r = (await stack.client.workflow.execute(METRICS_SWEEP_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: `bench-metrics-${run}-${crypto.randomUUID()}`,
      args: [{ limit: 500, rounds: 10 }],
    })) as MetricsSweepSummary;
    total += r.read;
    if (r.read + r.failed + r.stopped === 0) break;
  }
  const sweepSeconds = (performance.now() - t1) / 1000;
  const after = stack.worker.memory();
  const workerCpuMs = stack.worker.cpuMs() - cpuBefore;
  const xCalls = fakeX.count('lookup') - xBefore;
  const mastodonCalls =
    stack.fake.requests.filter((r) => r.method === 'GET' && /^\/api\/v1\/statuses\/\d+$/.test(r.path)).length - mastodonBefore;
  const [snapshots] = await conn.execute<{ n: string }[]>(
    `select count(*) as n from post_metrics m join post_channels pc on pc.id = m.post_channel_id where pc.channel_id in (?)`,
    [channels.map((c) => c.id)],
  );
  const half = ids.filter((x) => x.platform === 'X').length;

  console.log(`\n== following ${FOLLOWED} published posts' metrics (${CHANNELS} channels: X and Mastodon) ==`);
  console.log(`  machine: ${machineNote()}`);
  console.log(`  readings written ${snapshots!.n} of ${FOLLOWED}`);
  console.log(
    `  time to read all: ${sweepSeconds.toFixed(1)} s (${(FOLLOWED / sweepSeconds).toFixed(0)} readings/s); ceiling, the connectors alone: ${ceilingSeconds.toFixed(1)} s → ratio ${(ceilingSeconds / sweepSeconds).toFixed(2)}`,
  );
  console.log(
    `  platform calls per reading: X ${(xCalls / half).toFixed(3)} (${xCalls} calls for ${half}), Mastodon ${(mastodonCalls / (FOLLOWED - half)).toFixed(3)} (${mastodonCalls} for ${FOLLOWED - half})`,
  );
  console.log(`  worker CPU per reading: ${(workerCpuMs / FOLLOWED).toFixed(2)} ms`);
  console.log(
    `  worker RSS: before ${idle.rssMb.toFixed(1)} MiB, after ${after.rssMb.toFixed(1)} MiB (peak ${after.hwmMb.toFixed(1)} MiB): the posts followed live in Postgres, not in the worker`,
  );
  if (JSON_OUT) {
    await Bun.write(
      Bun.stdout,
      `${JSON.stringify({
        bench: 'metrics-follow',
        followed: FOLLOWED,
        metrics: [
          { metric: `time to read ${FOLLOWED} due readings`, value: r1(sweepSeconds), unit: 's' },
          { metric: 'the same readings by the connectors alone (ceiling)', value: r1(ceilingSeconds), unit: 's' },
          { metric: 'ratio to the ceiling', value: Math.round((ceilingSeconds / sweepSeconds) * 100) / 100, unit: '' },
          { metric: 'X calls per reading', value: Math.round((xCalls / half) * 1000) / 1000, unit: 'calls' },
          { metric: 'Mastodon calls per reading', value: Math.round((mastodonCalls / (FOLLOWED - half)) * 1000) / 1000, unit: 'calls' },
          { metric: 'worker CPU per reading', value: Math.round((workerCpuMs / FOLLOWED) * 100) / 100, unit: 'ms' },
          { metric: 'worker RSS before', value: r1(idle.rssMb), unit: 'MiB' },
          { metric: 'worker RSS after', value: r1(after.rssMb), unit: 'MiB' },
          { metric: 'readings written', value: Number(snapshots!.n), unit: 'readings' },
        ],
      })}\n`,
    );
  }
});
