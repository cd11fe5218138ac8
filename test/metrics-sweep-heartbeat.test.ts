// The metrics sweep's activity on a slow platform (activities/metrics.ts): it heartbeats as it
// reads, so a batch longer than its 1-minute heartbeat timeout (workflows/metrics-sweep.ts) is
// one attempt; a cancelled sweep asks the platform nothing more; a retry reads only what the
// attempt before it had not recorded. The real worker on the time-skipping server, with a
// Mastodon connector whose reads are held. The server does not skip time while an activity
// runs: rather than hold a batch past the 1-minute heartbeat timeout, the first test watches the
// attempt's heartbeat reach the server while a read is held.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import type { MetricsSweepProgress } from '../activities/metrics.ts';
import { addChannel } from '../domain/channels.ts';
import { dueAt } from '../domain/analytics/metrics.ts';
import { newId } from '../lib/ids.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { PlatformError, type Connector, type PlatformMetrics } from '../platforms/types.ts';
import { METRICS_SWEEP_WORKFLOW_TYPE, type MetricsSweepSummary } from '../workflows/metrics-sweep-types.ts';
import { makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { closed } from './harness/quiet.ts';

/**
 * Every readMetrics call, in order. While `holding`, each waits for release() or failHeld() (or
 * its abort); with `holdMs`, a post's first read answers after that long instead (a retry's at once).
 */
const reads: { ids: string[]; aborted: boolean; answered?: boolean }[] = [];
let holding = true;
let holdMs: number | undefined;
let waiting: { answer: () => void; fail: (err: Error) => void }[] = [];
const held = () => {
  const now = waiting;
  waiting = [];
  return now;
};
const release = () => {
  for (const w of held()) w.answer();
};
const failHeld = (err: Error) => {
  for (const w of held()) w.fail(err);
};

const slow: Connector = {
  ...createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } }),
  metricsBatch: 1,
  async readMetrics(_credentials, ids, signal) {
    const read: (typeof reads)[number] = { ids, aborted: false };
    const first = !reads.some((r) => r.ids.some((id) => ids.includes(id)));
    reads.push(read);
    if (holding && (holdMs === undefined || first)) {
      await new Promise<void>((resolve, reject) => {
        const aborted = () => {
          read.aborted = true;
          // As the real connectors answer an aborted request (platforms/http.ts).
          reject(new PlatformError('transient', 'Mastodon read aborted'));
        };
        const done = (settle: () => void) => () => {
          signal?.removeEventListener('abort', aborted);
          settle();
        };
        if (holdMs === undefined) waiting.push({ answer: done(resolve), fail: (err) => done(() => reject(err))() });
        else setTimeout(done(resolve), holdMs);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    }
    read.answered = true;
    return Object.fromEntries(ids.map((id) => [id, { likes: 7 } satisfies PlatformMetrics]));
  },
};

let stack: Awaited<ReturnType<typeof startPostStack>>;
beforeAll(async () => {
  stack = await startPostStack({ connectors: { MASTODON: slow } });
}, 60_000);
afterAll(async () => {
  holding = false;
  holdMs = undefined;
  release();
  await stack?.stop();
});

const db = async <T>(text: string, values: unknown[] = []) => (await stack.h.pool.query(text, values)).rows as T[];

/**
 * A post published on `n` channels of one organization (one read each). `scheduled`: published
 * in 1990, its readings due before every other test's (the sweep takes the oldest due first);
 * else not followed (only a reading asked for reads it).
 */
async function publishedOn(n: number, scheduled = false) {
  const org = await makeOrg('PRO');
  const publishedAt = scheduled ? new Date('1990-01-01T09:00:00Z') : new Date(Date.now() - 2 * 3_600_000);
  const postId = newId('post');
  await db(
    `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, created_at, updated_at)
     values ($1, $2, 'published', 'x', 'api', $3, $3, now(), now())`,
    [postId, org.id, publishedAt],
  );
  const channels: { pcId: string; statusId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: `slow ${i}`,
      credentials: { instanceUrl: 'https://slow.invalid', accessToken: 'good-token' },
    });
    const pcId = newId('pc');
    const statusId = `status-${crypto.randomUUID()}`;
    await db(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, metrics_next_at, created_at, updated_at)
       values ($1, $2, $3, 'MASTODON', 'published', 'x', $4, $5, $6, $7, now(), now())`,
      [pcId, postId, channel.id, statusId, `https://slow.invalid/${statusId}`, publishedAt, scheduled ? dueAt(publishedAt, 0) : null],
    );
    channels.push({ pcId, statusId });
  }
  return { postId, channels };
}

/**
 * The post's reading asked for (POST …/analytics/refresh's workflow: every channel, one
 * activity), or with `sweep` the Schedule's sweep of the `sweep` oldest due readings.
 */
const readNow = (postId: string, sweep?: number) =>
  stack.client.workflow.start(METRICS_SWEEP_WORKFLOW_TYPE, {
    args: [sweep ? { limit: sweep, rounds: 1 } : { limit: 100, rounds: 1, postId }],
    taskQueue: stack.taskQueue,
    workflowId: `metrics-slow-${crypto.randomUUID()}`,
  });

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(20)) if (await done()) return true;
  return done();
}

async function pendingSweep(handle: WorkflowHandle) {
  const { raw } = await handle.describe();
  return raw.pendingActivities?.find((a) => a.activityType?.name === 'collectDueMetrics');
}

async function progressOf(handle: WorkflowHandle): Promise<MetricsSweepProgress | undefined> {
  const payload = (await pendingSweep(handle))?.heartbeatDetails?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<MetricsSweepProgress>(payload) : undefined;
}

const snapshots = async (pcId: string) =>
  Number((await db<{ n: string }>('select count(*) as n from post_metrics where post_channel_id = $1', [pcId]))[0]!.n);

/** The attempts of the sweep's activity that the history shows (its started event carries the last one's number). */
async function attempts(handle: WorkflowHandle): Promise<number[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) =>
    e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt ?? 0] : [],
  );
}

const readsOf = (statusId: string) => reads.filter((r) => r.ids.includes(statusId)).length;

describe('the metrics sweep on a slow platform', () => {
  test('the activity heartbeats while a read is held (well inside its 1-minute heartbeat timeout): the batch is one attempt, each post read once', async () => {
    reads.length = 0;
    holding = true;
    holdMs = 6_000;
    try {
      const { postId, channels } = await publishedOn(2);
      const handle = await readNow(postId);
      // While the first read is held, the server sees the attempt's heartbeat move on (every 2 s):
      // a batch of reads longer than the heartbeat timeout is then never timed out as a lost worker.
      const beats = new Set<string>();
      await until(async () => {
        const beat = (await pendingSweep(handle))?.lastHeartbeatTime;
        const holding = reads.length === 1 && !reads[0]!.answered;
        if (beat && holding) beats.add(JSON.stringify(beat));
        return beats.size >= 2 || reads[0]?.answered === true;
      }, 10_000);
      expect(beats.size).toBeGreaterThanOrEqual(2);
      const summary = (await handle.result()) as MetricsSweepSummary;

      for (const c of channels) expect(readsOf(c.statusId)).toBe(1);
      expect(reads).toHaveLength(2);
      expect(await attempts(handle)).toEqual([1]);
      expect(summary).toEqual({ read: 2, failed: 0, stopped: 0 });
      for (const c of channels) expect(await snapshots(c.pcId)).toBe(1);
    } finally {
      holdMs = undefined;
    }
  }, 60_000);

  test('a sweep cancelled while a read is held asks the platform nothing more', async () => {
    reads.length = 0;
    holding = true;
    const { postId, channels } = await publishedOn(3);
    const handle = await readNow(postId);
    expect(await until(() => reads.length === 1, 10_000)).toBe(true);

    await handle.cancel();
    // The cancellation reaches the activity with a heartbeat's answer and aborts the held read.
    const noticed = await until(() => reads[0]!.aborted, 10_000);
    holding = false;
    release();
    // The workflow is cancelled and the cancelled attempt has returned: nothing is left to read.
    expect(await closed(stack.client, handle.workflowId)).toBe('CANCELLED');
    expect(await until(() => stack.activitiesInFlight() === 0, 30_000)).toBe(true);

    expect(noticed).toBe(true);
    expect(reads).toHaveLength(1);
    // Nothing read, nothing recorded.
    for (const c of channels) expect(await snapshots(c.pcId)).toBe(0);
  }, 60_000);

  for (const scheduled of [false, true]) {
    test(`${scheduled ? 'the sweep' : 'a reading asked for'}: a retry reads only the channels the attempt before it had not recorded, and counts them all`, async () => {
      reads.length = 0;
      holding = true;
      const { postId, channels } = await publishedOn(3, scheduled);
      try {
        const handle = await readNow(postId, scheduled ? 3 : undefined);
        /** The channel whose post the `i`-th read asked for. */
        const readFor = (i: number) => channels.find((c) => reads[i]!.ids.includes(c.statusId))!;
        expect(await until(() => reads.length === 1, 10_000)).toBe(true);
        expect(readFor(0)).toBeDefined();
        release();
        // The first channel recorded, and Temporal holds that progress.
        expect(await until(async () => (await progressOf(handle))?.pending.length === 2, 10_000)).toBe(true);
        expect(await until(() => reads.length === 2, 10_000)).toBe(true);
        expect(await snapshots(readFor(0).pcId)).toBe(1);

        // The second read fails the attempt (not a platform's error: the activity's own); the
        // retry, 5 s later, reads the rest.
        holding = false;
        failHeld(new TypeError('the attempt breaks'));
        expect(await until(async () => ((await pendingSweep(handle))?.attempt ?? 0) >= 2, 10_000)).toBe(true);
        await stack.env.sleep('5 seconds');
        const summary = (await handle.result()) as MetricsSweepSummary;

        expect(summary).toEqual({ read: 3, failed: 0, stopped: 0 });
        const [first, second] = [readFor(0), readFor(1)];
        expect(channels.map((c) => readsOf(c.statusId))).toEqual(channels.map((c) => (c === second ? 2 : 1)));
        expect(first).not.toBe(second);
        expect(reads).toHaveLength(4);
        for (const c of channels) expect(await snapshots(c.pcId)).toBe(1);
        expect(await attempts(handle)).toEqual([2]);
        if (scheduled) {
          // Each reading moved on from its claim to its next step.
          const rows = await db<{ metrics_step: number }>('select metrics_step from post_channels where post_id = $1', [postId]);
          expect(rows.map((r) => r.metrics_step)).toEqual([5, 5, 5]);
        }
      } finally {
        // No longer followed: other tests' sweeps leave it alone.
        await db('update post_channels set metrics_next_at = null where post_id = $1', [postId]);
      }
    }, 60_000);
  }
});
