// Metrics of published posts: the reading rules (domain/analytics/metrics.ts) and their
// collection from a platform (activities/metrics.ts) against the fake Mastodon, which answers
// GET /api/v1/statuses/:id with the counters Mastodon shows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../activities/index.ts';
import { CLAIM_MS, type MetricsSweepResult } from '../activities/metrics.ts';
import { addChannel } from '../domain/channels.ts';
import { afterReading, dueAt, LAST_STEP_WINDOW, latestOf, metricsOf, READING_AGES, RETRY_AFTER } from '../domain/analytics/metrics.ts';
import { newId } from '../lib/ids.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { harness } from './harness/index.ts';

const HOUR = 3_600_000;

describe('the reading rules', () => {
  const published = new Date('2026-11-01T09:00:00Z');

  test('readings fall due 1 h, 6 h, 24 h, 3 d, 7 d and 30 d after publishing, then none', () => {
    expect(READING_AGES.map((ms) => ms / HOUR)).toEqual([1, 6, 24, 72, 168, 720]);
    expect(dueAt(published, 0)!.toISOString()).toBe('2026-11-01T10:00:00.000Z');
    expect(dueAt(published, 6)).toBeNull();
  });

  test('a reading moves to the next step; a failure is tried again 15 minutes later within its step', () => {
    const at = new Date(published.getTime() + HOUR + 1000);
    expect(afterReading(published, 0, at, true)).toEqual({ step: 1, nextAt: dueAt(published, 1) });
    expect(afterReading(published, 0, at, false)).toEqual({ step: 0, nextAt: new Date(at.getTime() + RETRY_AFTER) });
    // A failure whose retry would come after the next step's time gives the step up.
    const late = new Date(published.getTime() + 6 * HOUR - 60_000);
    expect(afterReading(published, 0, late, false)).toEqual({ step: 1, nextAt: dueAt(published, 1) });
    // After the last step the post is no longer followed.
    expect(afterReading(published, 5, new Date(published.getTime() + 31 * 24 * HOUR), true)).toEqual({ step: 6, nextAt: null });
  });

  test('the last reading that fails is tried again for a day after it fell due, then the post is no longer followed', () => {
    const last = READING_AGES.length - 1;
    const due = dueAt(published, last)!;
    expect(LAST_STEP_WINDOW).toBe(24 * HOUR);
    const soon = new Date(due.getTime() + 60_000);
    expect(afterReading(published, last, soon, false)).toEqual({ step: last, nextAt: new Date(soon.getTime() + RETRY_AFTER) });
    const end = new Date(due.getTime() + LAST_STEP_WINDOW - RETRY_AFTER);
    expect(afterReading(published, last, end, false)).toEqual({ step: last + 1, nextAt: null });
    // A worker away past the whole window: the earlier step moves to the last, whose failure then ends it.
    const away = new Date(due.getTime() + 2 * LAST_STEP_WINDOW);
    expect(afterReading(published, last - 1, away, false)).toEqual({ step: last, nextAt: due });
    expect(afterReading(published, last, away, false)).toEqual({ step: last + 1, nextAt: null });
  });

  test('steps whose time passed while nobody read them are not read one by one', () => {
    const days = new Date(published.getTime() + 4 * 24 * HOUR);
    expect(afterReading(published, 0, days, true)).toEqual({ step: 3, nextAt: dueAt(published, 3) });
  });

  test('a figure the platform does not report is null, never 0; the latest keeps the last figure read', () => {
    expect(metricsOf({ likes: 3 })).toEqual({
      impressions: null,
      views: null,
      likes: 3,
      replies: null,
      reposts: null,
      quotes: null,
      saves: null,
      clicks: null,
    });
    const latest = latestOf([
      { measuredAt: new Date('2026-11-01T10:00:00Z'), metrics: metricsOf({ likes: 1, impressions: 40 }) },
      { measuredAt: new Date('2026-11-01T15:00:00Z'), metrics: metricsOf({ likes: 4 }) },
    ]);
    expect(latest.metrics.likes).toBe(4);
    expect(latest.measuredAt.likes).toBe('2026-11-01T15:00:00.000Z');
    expect(latest.metrics.impressions).toBe(40);
    expect(latest.measuredAt.impressions).toBe('2026-11-01T10:00:00.000Z');
    expect(latest.metrics.views).toBeNull();
  });
});

describe('collecting metrics from the platform', () => {
  let mastodon: FakeMastodon;
  beforeAll(async () => {
    mastodon = await startFakeMastodon();
  });
  afterAll(async () => {
    await mastodon?.stop();
  });

  const db = async <T>(text: string, values: unknown[] = []) => (await (await harness()).pool.query(text, values)).rows as T[];

  /** A channel post published on the fake at `publishedAt`, followed from its first reading. */
  async function published(publishedAt: Date, channelStatus = 'active', channelToken = 'good-token', onChannel?: string) {
    const h = await harness();
    let org: { id: string };
    let channel: { id: string };
    if (onChannel) {
      const [row] = await db<{ organization_id: string }>('select organization_id from channels where id = $1', [onChannel]);
      org = { id: row!.organization_id };
      channel = { id: onChannel };
    } else {
      org = await makeOrg('PRO');
      channel = await addChannel(h.orm.em.fork(), h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: 'metrics',
        credentials: { instanceUrl: mastodon.url, accessToken: channelToken },
      });
      await db('update channels set status = $1 where id = $2', [channelStatus, channel.id]);
    }
    mastodon.validTokens.add('good-token');
    const sent = await connector.publish({
      text: `read me ${crypto.randomUUID()}`,
      media: [],
      idempotencyKey: newId('req'),
      credentials: { instanceUrl: mastodon.url, accessToken: 'good-token' },
    });
    const postId = newId('post');
    const pcId = newId('pc');
    await db(
      `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, created_at, updated_at)
       values ($1, $2, 'published', 'x', 'api', $3, $3, now(), now())`,
      [postId, org.id, publishedAt],
    );
    await db(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, metrics_next_at, created_at, updated_at)
       values ($1, $2, $3, 'MASTODON', 'published', 'x', $4, $5, $6, $7, now(), now())`,
      [pcId, postId, channel.id, sent.platformPostId, sent.url, publishedAt, dueAt(publishedAt, 0)],
    );
    return { pcId, postId, org, channelId: channel.id, statusId: sent.platformPostId };
  }

  const connector = createMastodonConnector({ timeoutMs: 2000, outbound: { allowPrivate: true } });

  async function collectAt(at: Date) {
    const h = await harness();
    const activities = createActivities({
      orm: h.orm,
      connectors: { MASTODON: connector },
      credentialsKey: h.credentialsKey,
      now: () => at,
    });
    return (await new MockActivityEnvironment().run(activities.collectDueMetrics, { limit: 1000 })) as MetricsSweepResult;
  }

  const state = async (pcId: string) =>
    (
      await db<{ metrics_step: number; metrics_next_at: Date | null; metrics_error: string | null }>(
        'select metrics_step, metrics_next_at, metrics_error from post_channels where id = $1',
        [pcId],
      )
    )[0]!;
  const snapshots = (pcId: string) =>
    db<{ step: number | null; metrics: Record<string, number | null> }>(
      'select step, metrics from post_metrics where post_channel_id = $1 order by measured_at',
      [pcId],
    );

  test('a reading that fell due is kept as a snapshot with the platform counters, once, and the next step is set', async () => {
    // Far in the past of every other test's posts: only this file's rows fall due at these instants.
    const at0 = new Date('2020-01-01T09:00:00Z');
    const { pcId, statusId } = await published(at0);
    const status = mastodon.statuses.find((s) => s.id === statusId)!;
    Object.assign(status, { favourites_count: 2, reblogs_count: 1, replies_count: 1 });

    const readAt = new Date(at0.getTime() + HOUR + 1000);
    const first = await collectAt(readAt);
    expect(first.read).toBeGreaterThanOrEqual(1);
    const snaps = await snapshots(pcId);
    expect(snaps).toHaveLength(1);
    expect(snaps[0]!.step).toBe(0);
    expect(snaps[0]!.metrics).toEqual({
      impressions: null,
      views: null,
      likes: 2,
      replies: 1,
      reposts: 1,
      quotes: null,
      saves: null,
      clicks: null,
    });
    expect(await state(pcId)).toMatchObject({ metrics_step: 1, metrics_error: null });
    expect((await state(pcId)).metrics_next_at!.toISOString()).toBe(dueAt(at0, 1)!.toISOString());

    // The same instant again (a retried activity, a second sweep): nothing more is due, nothing doubled.
    await collectAt(readAt);
    expect(await snapshots(pcId)).toHaveLength(1);
  });

  test('GET /v1/posts/{id}/analytics: the latest figures with when each was read, and every reading', async () => {
    const at0 = new Date('2020-04-01T09:00:00Z');
    const { postId, org, channelId, statusId } = await published(at0);
    const status = mastodon.statuses.find((s) => s.id === statusId)!;
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    const app = await testApp();

    const before = await call(app, 'GET', `/v1/posts/${postId}/analytics`, { key });
    expect(before.status).toBe(200);
    expect(before.body.channels).toHaveLength(1);
    expect(before.body.channels[0]).toMatchObject({
      channelId,
      platform: 'MASTODON',
      status: 'published',
      history: [],
      lastReadingAt: null,
    });
    expect(before.body.channels[0].metrics.likes).toBeNull();
    expect(before.body.channels[0].nextReadingAt).toBe(dueAt(at0, 0)!.toISOString());

    Object.assign(status, { favourites_count: 2, reblogs_count: 1, replies_count: 1 });
    const first = new Date(at0.getTime() + HOUR + 1000);
    await collectAt(first);
    Object.assign(status, { favourites_count: 5 });
    const second = new Date(at0.getTime() + 6 * HOUR + 1000);
    await collectAt(second);

    const r = await call(app, 'GET', `/v1/posts/${postId}/analytics`, { key });
    expect(r.status).toBe(200);
    const c = r.body.channels[0];
    expect(c.metrics).toEqual({
      impressions: null,
      views: null,
      likes: 5,
      replies: 1,
      reposts: 1,
      quotes: null,
      saves: null,
      clicks: null,
    });
    expect(c.measuredAt.likes).toBe(second.toISOString());
    expect(c.measuredAt.impressions).toBeNull();
    expect(c.history.map((h: { measuredAt: string; metrics: { likes: number } }) => [h.measuredAt, h.metrics.likes])).toEqual([
      [first.toISOString(), 2],
      [second.toISOString(), 5],
    ]);
    expect(c.lastReadingAt).toBe(second.toISOString());
    expect(c.nextReadingAt).toBe(dueAt(at0, 2)!.toISOString());

    // Another organization's key: the post does not exist for it.
    const other = await makeKey((await makeOrg('PRO')).id);
    const hidden = await call(app, 'GET', `/v1/posts/${postId}/analytics`, { key: other.key });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('not_found');
  });

  test('a publish sets the first reading an hour later, where the platform reports metrics', async () => {
    const h = await harness();
    for (const withMetrics of [true, false]) {
      const at0 = new Date('2020-05-01T09:00:00Z');
      const { postId, channelId, pcId } = await published(at0);
      await db(`update post_channels set status = 'publishing', platform_post_id = null, metrics_next_at = null where id = $1`, [pcId]);
      await db(`update posts set status = 'publishing' where id = $1`, [postId]);
      const mastodonConnector = withMetrics ? connector : { ...connector, readMetrics: undefined };
      const activities = createActivities({ orm: h.orm, connectors: { MASTODON: mastodonConnector }, credentialsKey: h.credentialsKey });
      await new MockActivityEnvironment().run(activities.publishToChannel, { postId, channelId });
      const [row] = await db<{ status: string; published_at: Date; metrics_next_at: Date | null }>(
        'select status, published_at, metrics_next_at from post_channels where id = $1',
        [pcId],
      );
      expect(row!.status).toBe('published');
      if (withMetrics) expect(row!.metrics_next_at!.getTime()).toBe(row!.published_at.getTime() + HOUR);
      else expect(row!.metrics_next_at).toBeNull();
    }
  });

  test('a token the platform refuses marks the channel to be connected again; the reading is tried later', async () => {
    const at0 = new Date('2020-06-01T09:00:00Z');
    const { pcId } = await published(at0, 'active', 'revoked-token');
    const readAt = new Date(at0.getTime() + HOUR + 1000);
    await collectAt(readAt);
    const [channel] = await db<{ status: string }>(
      'select c.status from channels c join post_channels pc on pc.channel_id = c.id where pc.id = $1',
      [pcId],
    );
    expect(channel!.status).toBe('reauth_required');
    const s = await state(pcId);
    expect(s.metrics_error).toBe('the channel needs to be connected again');
    expect(s.metrics_next_at!.getTime()).toBe(readAt.getTime() + RETRY_AFTER);
    expect(await snapshots(pcId)).toHaveLength(0);
  });

  test('two sweeps at once read a due post once: the first claims it', async () => {
    const at0 = new Date('2020-07-01T09:00:00Z');
    const { pcId, statusId } = await published(at0);
    const before = mastodon.requests.length;
    const readAt = new Date(at0.getTime() + HOUR + 1000);
    await Promise.all([collectAt(readAt), collectAt(readAt)]);
    expect(mastodon.requests.slice(before).filter((r) => r.path === `/api/v1/statuses/${statusId}`)).toHaveLength(1);
    expect(await snapshots(pcId)).toHaveLength(1);
  });

  test('the platform’s rate limit stops the channel’s reads for now: each of its readings is tried again later', async () => {
    const at0 = new Date('2020-08-01T09:00:00Z');
    const first = await published(at0);
    // A second post on the same channel.
    const second = await published(at0, 'active', 'good-token', first.channelId);
    const before = mastodon.requests.length;
    // Whichever of the two is asked first answers 429.
    for (const id of [first.statusId, second.statusId]) mastodon.failNextShow(id, 1, { status: 429, body: { error: 'Too many requests' } });
    const readAt = new Date(at0.getTime() + HOUR + 1000);
    await collectAt(readAt);
    // One call answered 429; the channel's other reading was not asked for.
    const asked = mastodon.requests
      .slice(before)
      .filter((r) => r.path === `/api/v1/statuses/${first.statusId}` || r.path === `/api/v1/statuses/${second.statusId}`);
    expect(asked).toHaveLength(1);
    for (const pc of [first.pcId, second.pcId]) {
      const s = await state(pc);
      expect(s.metrics_error).toMatch(/429/);
      expect(s.metrics_next_at!.getTime()).toBe(readAt.getTime() + RETRY_AFTER);
    }
  });

  test('a sweep that dies after claiming loses nothing: the readings come due again once the claim runs out', async () => {
    const h = await harness();
    const at0 = new Date('2020-09-01T09:00:00Z');
    const { pcId } = await published(at0);
    const readAt = new Date(at0.getTime() + HOUR + 1000);
    // The worker dies while the platform is being asked (not a platform error: the activity fails).
    const dying = { ...connector, readMetrics: async () => Promise.reject(new Error('worker lost')) };
    const activities = createActivities({
      orm: h.orm,
      connectors: { MASTODON: dying },
      credentialsKey: h.credentialsKey,
      now: () => readAt,
    });
    await expect(new MockActivityEnvironment().run(activities.collectDueMetrics, { limit: 1000 })).rejects.toThrow('worker lost');
    // Claimed: another sweep at once does not take it; nothing was written.
    await collectAt(readAt);
    expect(await snapshots(pcId)).toHaveLength(0);
    // Past the claim, the next sweep reads it, once.
    await collectAt(new Date(readAt.getTime() + CLAIM_MS + 1000));
    expect(await snapshots(pcId)).toHaveLength(1);
    expect((await state(pcId)).metrics_step).toBe(1);
  });

  test('a post deleted on the platform is no longer followed, with the reason', async () => {
    const at0 = new Date('2020-02-01T09:00:00Z');
    const { pcId, statusId } = await published(at0);
    mastodon.statuses.splice(
      mastodon.statuses.findIndex((s) => s.id === statusId),
      1,
    );
    await collectAt(new Date(at0.getTime() + HOUR + 1000));
    expect(await snapshots(pcId)).toHaveLength(0);
    expect(await state(pcId)).toMatchObject({ metrics_next_at: null, metrics_error: 'the post is no longer on the platform' });
  });

  test('a channel that needs connecting again is not read: its reading is tried again later, with the reason', async () => {
    const at0 = new Date('2020-03-01T09:00:00Z');
    const { pcId, statusId } = await published(at0, 'reauth_required');
    const before = mastodon.requests.length;
    await collectAt(new Date(at0.getTime() + HOUR + 1000));
    expect(mastodon.requests.slice(before).some((r) => r.path === `/api/v1/statuses/${statusId}`)).toBe(false);
    expect(await snapshots(pcId)).toHaveLength(0);
    const s = await state(pcId);
    expect(s.metrics_error).toBe('the channel needs to be connected again');
    expect(s.metrics_step).toBe(0);
    expect(s.metrics_next_at!.getTime()).toBe(at0.getTime() + HOUR + 1000 + RETRY_AFTER);
  });
});
