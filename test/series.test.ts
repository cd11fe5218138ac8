// Recurring posts end to end: /v1/series → the series workflow on a time-skipping
// server → each occurrence created through the normal create path (its own post, seriesId,
// webhooks, publishing to a fake Mastodon) — across several occurrences with a worker restart,
// edits and a delete, daylight saving and duplicate detection, continue-as-new.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Post, Series } from '../db/entities/index.ts';
import { addChannel } from '../domain/channels.ts';
import { occurrencePostId } from '../domain/series/series.ts';
import { postWorkflowId } from '../workflows/post-types.ts';
import { SERIES_WORKFLOW_TYPE, seriesWorkflowId, type SeriesWorkflowInput } from '../workflows/series-types.ts';
import { startEventReceiver, type ReceivedEvent } from './fakes/event-receiver.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { closed, quiet } from './harness/quiet.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let fake: FakeMastodon;
let receiver: ReturnType<typeof startEventReceiver>;
let events: ReceivedEvent[];

beforeAll(async () => {
  fake = await startFakeMastodon();
  receiver = startEventReceiver();
  events = receiver.events;
  // No sticky cache: a workflow task never waits for a stopped worker's sticky queue (the restarts below).
  stack = await startPostStack({ maxCachedWorkflows: 0 });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.stop();
  receiver?.stop();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function account() {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'series',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { org, key, channelId: channel.id };
}

/** The series' occurrences (posts with its seriesId, deleted ones included), oldest first. */
async function occurrences(seriesId: string) {
  return stack.h.orm.em.fork().find(Post, { seriesId }, { orderBy: { scheduledAt: 'asc' } });
}

/** Polls in real time (the activities run in real time once a timer has fired). */
async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await fn();
    if (v) return v;
    await Bun.sleep(20);
  }
  throw new Error(`never: ${what}`);
}

const countIs = (seriesId: string, n: number) => waitFor(`${n} occurrences`, async () => (await occurrences(seriesId)).length === n);

/**
 * Until the series workflow waits on its timer (no activity in flight): a worker stopped under a
 * running activity would leave the time-skipping server waiting out its timeout in real time.
 */
async function idle(seriesId: string, path: string) {
  const noActivity = async (workflowId: string) =>
    !(await stack.client.workflow.getHandle(workflowId).describe()).raw.pendingActivities?.length;
  await waitFor('series, its posts and their webhook deliveries idle', async () => {
    const posts = await occurrences(seriesId);
    const delivered = events.filter((e) => e.path === path && e.type === 'post.scheduled').length;
    if (delivered < posts.length || !(await noActivity(seriesWorkflowId(seriesId)))) return false;
    for (const p of posts) if (!(await noActivity(`post-${p.id}`))) return false;
    return true;
  });
}

async function workflowStatus(seriesId: string) {
  return (await stack.client.workflow.getHandle(seriesWorkflowId(seriesId)).describe()).status.name;
}

describe('POST /v1/series', () => {
  test('validates the rule, the zone and the template; 404 for unknown and other organizations’ series', async () => {
    const { key, channelId } = await account();
    const t0 = await stack.syncClock();
    const publishAt = new Date(t0.getTime() + DAY).toISOString();
    const bad = [
      { repeat: { every: 'hour' } },
      { repeat: { every: 'day', interval: 0 } },
      { repeat: { every: 'day', count: 0 } },
      { repeat: { every: 'day', until: new Date(t0.getTime() + HOUR).toISOString() } },
      // Past year 9999 (Postgres cannot store it): a 422, not a 500.
      { repeat: { every: 'day', until: '9999-12-31T23:59:59-23:59' } },
      { repeat: { every: 'day' }, timeZone: 'Nowhere/Land' },
      { repeat: { every: 'day' }, channelIds: ['ch_unknown'] },
      { repeat: { every: 'day' }, publishAt: new Date(t0.getTime() - DAY).toISOString() },
      { repeat: { every: 'day' }, content: 'x'.repeat(501) },
    ];
    for (const extra of bad) {
      const r = await call(stack.app, 'POST', '/v1/series', { key, body: { content: 'hi', channelIds: [channelId], publishAt, ...extra } });
      expect({ extra, status: r.status, code: r.body.error?.code }).toEqual({ extra, status: 422, code: 'validation_failed' });
    }
    expect((await call(stack.app, 'GET', '/v1/series/ser_unknown', { key })).status).toBe(404);
    const other = await account();
    const created = await call(stack.app, 'POST', '/v1/series', {
      key: other.key,
      body: { content: 'theirs', channelIds: [other.channelId], publishAt, repeat: { every: 'week', count: 2 } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/series/${created.body.id}`);
    expect((await call(stack.app, 'GET', `/v1/series/${created.body.id}`, { key })).status).toBe(404);
    expect((await call(stack.app, 'GET', '/v1/series', { key })).body.data).toEqual([]);
    expect((await call(stack.app, 'GET', '/v1/series', { key: other.key })).body.data.map((s: { id: string }) => s.id)).toEqual([
      created.body.id,
    ]);
  });
});

describe('occurrences', () => {
  test('each is a post of its own, created 5 minutes ahead; a worker restart neither skips nor doubles; webhooks fire', async () => {
    const { key, channelId } = await account();
    const hook = await call(stack.app, 'POST', '/v1/webhooks', {
      key,
      body: { url: `http://127.0.0.1:${receiver.port}/series-main`, events: ['post.scheduled'] },
    });
    expect(hook.status).toBe(201);
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + DAY) / 60_000) * 60_000);
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'daily news', channelIds: [channelId], publishAt: start.toISOString(), repeat: { every: 'day', count: 4 } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      status: 'active',
      publishAt: start.toISOString(),
      timeZone: 'UTC',
      repeat: { every: 'day', interval: 1, until: null, count: 4 },
      occurrencesCreated: 0,
      nextOccurrenceAt: start.toISOString(),
      lastError: null,
    });
    // Not yet: 10 minutes before the first occurrence nothing is created.
    await stack.env.sleep(start.getTime() - t0.getTime() - 10 * 60_000);
    // The workflow waits (its timer) with nothing in flight: nothing is on its way.
    expect(await quiet(stack.client, seriesWorkflowId(id))).toBe('waiting');
    expect(await occurrences(id)).toHaveLength(0);
    // 4 minutes before: created (5 minutes ahead), scheduled at its time.
    await stack.env.sleep('6 minutes');
    await countIs(id, 1);
    const [first] = await occurrences(id);
    expect(first!.id).toBe(occurrencePostId(id, 0));
    expect(first!.scheduledAt.toISOString()).toBe(start.toISOString());
    const shown = await call(stack.app, 'GET', `/v1/posts/${first!.id}`, { key });
    expect(shown.body).toMatchObject({ status: 'scheduled', seriesId: id, content: 'daily news' });
    const listed = await call(stack.app, 'GET', `/v1/posts?channelId=${channelId}`, { key });
    expect(listed.body.data.map((p: { seriesId: string }) => p.seriesId)).toEqual([id]);
    // A worker restart between two occurrences.
    await idle(id, '/series-main');
    await stack.restartWorker();
    await stack.env.sleep('1 day');
    await countIs(id, 2);
    await idle(id, '/series-main');
    await stack.restartWorker();
    await stack.env.sleep('1 day');
    await countIs(id, 3);
    await stack.env.sleep('1 day');
    await countIs(id, 4);
    // The rule has no fifth: the workflow ends, and nothing more appears — completed, it creates
    // nothing more, so the days after it (the last occurrence's) add none.
    await waitFor('series workflow completed', async () => (await workflowStatus(id)) === 'COMPLETED');
    await stack.env.sleep('3 days');
    const all = await occurrences(id);
    expect(all.map((p) => p.id)).toEqual([0, 1, 2, 3].map((i) => occurrencePostId(id, i)));
    expect(all.map((p) => p.scheduledAt.getTime() - start.getTime())).toEqual([0, DAY, 2 * DAY, 3 * DAY]);
    const series = await call(stack.app, 'GET', `/v1/series/${id}`, { key });
    expect(series.body).toMatchObject({ status: 'ended', occurrencesCreated: 4, nextOccurrenceAt: null });
    // Each occurrence published on its own (one status each on the platform) and announced by post.scheduled.
    await waitFor('all published', async () => (await occurrences(id)).every((p) => p.status === 'published'));
    expect(fake.statuses.filter((s) => s.text === 'daily news')).toHaveLength(4);
    await waitFor('4 post.scheduled events', async () => events.filter((e) => e.path === '/series-main').length >= 4);
    const scheduled = events.filter((e) => e.path === '/series-main' && e.type === 'post.scheduled');
    expect(scheduled.map((e) => e.data.id).sort()).toEqual(all.map((p) => p.id).sort());
    expect(scheduled.every((e) => e.data.seriesId === id)).toBe(true);
  });

  test('PATCH applies to occurrences not yet created; DELETE stops the series and cancels a scheduled occurrence', async () => {
    const { key, channelId } = await account();
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + HOUR) / 60_000) * 60_000);
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'version one', channelIds: [channelId], publishAt: start.toISOString(), repeat: { every: 'day' } },
    });
    const id = created.body.id as string;
    await stack.env.sleep(start.getTime() - t0.getTime());
    await countIs(id, 1);
    const edited = await call(stack.app, 'PATCH', `/v1/series/${id}`, { key, body: { content: 'version two', repeat: { every: 'week' } } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ content: 'version two', repeat: { every: 'week' }, occurrencesCreated: 1 });
    expect(edited.body.nextOccurrenceAt).toBe(new Date(start.getTime() + 7 * DAY).toISOString());
    expect((await call(stack.app, 'PATCH', `/v1/series/${id}`, { key, body: { publishAt: start.toISOString() } })).status).toBe(422);
    // A day later nothing (the rule is weekly now); a week later the second, with the new text.
    await stack.env.sleep('1 day');
    // Waiting (the next timer) with nothing in flight: a day's occurrence would have been created.
    expect(await quiet(stack.client, seriesWorkflowId(id))).toBe('waiting');
    expect(await occurrences(id)).toHaveLength(1);
    await stack.env.sleep(6 * DAY - 4 * 60_000);
    await countIs(id, 2);
    const [one, two] = await occurrences(id);
    expect(one!.content).toBe('version one');
    expect(two!.content).toBe('version two');
    expect(two!.status).toBe('scheduled');
    // Deleted while the second waits for its time: it is cancelled; the first (published) stays.
    expect((await call(stack.app, 'DELETE', `/v1/series/${id}`, { key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/series/${id}`, { key })).status).toBe(404);
    expect((await call(stack.app, 'DELETE', `/v1/series/${id}`, { key })).status).toBe(404);
    await waitFor('series workflow completed', async () => (await workflowStatus(id)) === 'COMPLETED');
    expect((await call(stack.app, 'GET', `/v1/posts/${two!.id}`, { key })).status).toBe(404);
    expect((await call(stack.app, 'GET', `/v1/posts/${one!.id}`, { key })).body.status).toBe('published');
    await stack.env.sleep('15 days');
    // The series' workflow and the cancelled occurrence's have closed: nothing more can happen.
    expect(await closed(stack.client, postWorkflowId(two!.id))).toBe('COMPLETED');
    expect(await occurrences(id)).toHaveLength(2);
    expect(fake.statuses.filter((s) => s.text === 'version two')).toHaveLength(0);
  });

  test('PATCH channelIds dropping a platform drops its per-platform text; the next occurrence is still created', async () => {
    const { org, key, channelId } = await account();
    const x = await makeChannel(org.id, 'X');
    const tag = crypto.randomUUID();
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + HOUR) / 60_000) * 60_000);
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: {
        content: `default ${tag}`,
        contentByPlatform: { MASTODON: `for Mastodon ${tag}`, X: `for X ${tag}` },
        channelIds: [channelId, x.id],
        publishAt: start.toISOString(),
        repeat: { every: 'day', count: 1 },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // X no longer targeted, no new per-platform texts: X's text goes, Mastodon's stays.
    const edited = await call(stack.app, 'PATCH', `/v1/series/${id}`, { key, body: { channelIds: [channelId] } });
    expect({ status: edited.status, error: edited.body.error }).toEqual({ status: 200, error: undefined });
    const shown = await call(stack.app, 'GET', `/v1/series/${id}`, { key });
    expect(shown.body).toMatchObject({ channelIds: [channelId], contentByPlatform: { MASTODON: `for Mastodon ${tag}` } });
    expect(Object.keys(shown.body.contentByPlatform)).toEqual(['MASTODON']);
    // The occurrence is created (not skipped with a 422), on Mastodon only, with Mastodon's text.
    await stack.env.sleep(start.getTime() - t0.getTime());
    const series = await waitFor('occurrence attempted', async () => {
      const s = await stack.h.orm.em.fork().findOne(Series, { id });
      return s && s.occurrencesCreated === 1 ? s : undefined;
    });
    expect(series.lastError ?? null).toBeNull();
    const [post] = await occurrences(id);
    expect(post?.id).toBe(occurrencePostId(id, 0));
    const view = await call(stack.app, 'GET', `/v1/posts/${post!.id}`, { key });
    expect(view.body.channels.map((c: { channelId: string; content: string }) => [c.channelId, c.content])).toEqual([
      [channelId, `for Mastodon ${tag}`],
    ]);
  });

  test('options: checked as a post’s, shown on the series, given to each occurrence; dropping a platform drops its options', async () => {
    const { org, key, channelId } = await account();
    const x = await makeChannel(org.id, 'X');
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + HOUR) / 60_000) * 60_000);
    const body = (options: Record<string, unknown>) => ({
      content: `options ${crypto.randomUUID()}`,
      channelIds: [channelId, x.id],
      publishAt: start.toISOString(),
      repeat: { every: 'day', count: 2 },
      options,
    });
    const stray = await call(stack.app, 'POST', '/v1/series', { key, body: body({ tiktok: { privacyLevel: 'SELF_ONLY' } }) });
    expect(stray.status).toBe(422);
    expect(stray.body.error.details.fields).toEqual([{ path: 'options.tiktok', message: 'no target channel is on this platform' }]);
    const created = await call(stack.app, 'POST', '/v1/series', { key, body: body({ x: { replySettings: 'following' } }) });
    expect(created.status).toBe(201);
    expect(created.body.options).toEqual({ x: { replySettings: 'following' } });
    const id = created.body.id as string;

    // Created five minutes ahead: looked at before it is due (X has no fake here to publish to).
    await stack.env.sleep(start.getTime() - t0.getTime() - 4 * 60_000);
    await waitFor('first occurrence', async () => (await stack.h.orm.em.fork().findOne(Series, { id }))?.occurrencesCreated === 1);
    const [first] = await occurrences(id);
    const view = await call(stack.app, 'GET', `/v1/posts/${first!.id}`, { key });
    expect(view.body.options).toEqual({ x: { replySettings: 'following' } });

    const edited = await call(stack.app, 'PATCH', `/v1/series/${id}`, { key, body: { channelIds: [channelId] } });
    expect(edited.status).toBe(200);
    expect(edited.body.options).toEqual({});
    const again = await call(stack.app, 'PATCH', `/v1/series/${id}`, {
      key,
      body: { channelIds: [channelId, x.id], options: { x: { replySettings: 'mentionedUsers' } } },
    });
    expect(again.body.options).toEqual({ x: { replySettings: 'mentionedUsers' } });
    // Gone with its scheduled occurrence, so nothing is published to X.
    expect((await call(stack.app, 'DELETE', `/v1/series/${id}`, { key })).status).toBe(204);
    expect((await call(stack.app, 'GET', `/v1/posts/${first!.id}`, { key })).status).toBe(404);
  });

  test('daily at 09:00 New York across spring forward: 23 hours apart, not a duplicate; a post of its own with the same text is', async () => {
    const { key, channelId } = await account();
    const t0 = await stack.syncClock();
    // The next spring-forward day in New York after the test server's clock (second Sunday of March).
    const year = new Date(t0).getUTCFullYear() + (new Date(t0).getUTCMonth() >= 2 ? 1 : 0);
    const march1 = new Date(Date.UTC(year, 2, 1));
    const sunday = 1 + ((7 - march1.getUTCDay()) % 7) + 7;
    const before = new Date(Date.UTC(year, 2, sunday - 1, 14)); // Saturday 09:00 EST
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: {
        content: 'good morning',
        channelIds: [channelId],
        publishAt: before.toISOString(),
        repeat: { every: 'day', count: 3 },
        timeZone: 'America/New_York',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // A post of its own with the same text within 24 hours of the third occurrence.
    const third = new Date(Date.UTC(year, 2, sunday + 1, 13));
    await stack.env.sleep(before.getTime() - t0.getTime() - HOUR);
    await stack.syncClock();
    const own = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'good morning', channelIds: [channelId], publishAt: new Date(third.getTime() + 2 * HOUR).toISOString() },
    });
    expect(own.status).toBe(201);
    await stack.env.sleep(HOUR);
    await countIs(id, 1);
    await stack.env.sleep('1 day');
    await countIs(id, 2);
    const [a, b] = await occurrences(id);
    expect(a!.scheduledAt.toISOString()).toBe(before.toISOString());
    expect(b!.scheduledAt.toISOString()).toBe(new Date(Date.UTC(year, 2, sunday, 13)).toISOString()); // 09:00 EDT
    expect(b!.scheduledAt.getTime() - a!.scheduledAt.getTime()).toBe(23 * HOUR);
    // The third collides with the post of its own: skipped, and the series says why.
    await stack.env.sleep('1 day');
    const skipped = await waitFor('third skipped', async () => {
      const s = await stack.h.orm.em.fork().findOne(Series, { id });
      return s && s.occurrencesCreated === 3 ? s : undefined;
    });
    expect(skipped.lastError).toMatchObject({ code: 'duplicate_post', at: third.toISOString() });
    expect(await occurrences(id)).toHaveLength(2);
    expect((await call(stack.app, 'GET', `/v1/series/${id}`, { key })).body).toMatchObject({
      status: 'ended',
      lastError: { code: 'duplicate_post' },
    });
  });

  test('continue-as-new between occurrences, and two workflows on one series: no skip, no double', async () => {
    const { org, key, channelId } = await account();
    const t0 = await stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + HOUR) / 60_000) * 60_000);
    const created = await call(stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'rolling', channelIds: [channelId], publishAt: start.toISOString(), repeat: { every: 'day', count: 3 } },
    });
    const id = created.body.id as string;
    // A second workflow drives the same series, continuing as new after every occurrence: both
    // create each occurrence, and the fixed post id makes it one post.
    const handle = stack.client.workflow.getHandle(`${seriesWorkflowId(id)}-short-runs`);
    const input: SeriesWorkflowInput = { seriesId: id, organizationId: org.id, occurrencesPerRun: 1 };
    const firstRun = await stack.client.workflow.start(SERIES_WORKFLOW_TYPE, {
      workflowId: `${seriesWorkflowId(id)}-short-runs`,
      taskQueue: stack.taskQueue,
      args: [input],
    });
    await stack.env.sleep(start.getTime() - t0.getTime());
    await countIs(id, 1);
    await stack.env.sleep('1 day');
    await countIs(id, 2);
    await stack.env.sleep('1 day');
    await countIs(id, 3);
    await waitFor('completed', async () => (await handle.describe()).status.name === 'COMPLETED');
    expect((await handle.describe()).runId).not.toBe(firstRun.firstExecutionRunId);
    await stack.env.sleep('3 days');
    // Both workflows of the series have completed: neither creates anything more.
    expect(await closed(stack.client, seriesWorkflowId(id))).toBe('COMPLETED');
    expect((await occurrences(id)).map((p) => p.id)).toEqual([0, 1, 2].map((i) => occurrencePostId(id, i)));
  });
});
