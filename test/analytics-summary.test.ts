// GET /v1/analytics (domain/analytics/summary.ts): totals over the posts that report a figure,
// a series of every day or week in the organization's time zone, the top posts by engagement,
// and a channel-limited key counting only its channels.
import { describe, expect, test } from 'bun:test';
import { zonedToUtc } from '../lib/zoned-time.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, publishedPostWithReadings, testApp } from './harness/fixtures.ts';

const db = async (text: string, values: unknown[] = []) => (await (await harness()).pool.query(text, values)).rows;

const publishedPost = publishedPostWithReadings;

describe('GET /v1/analytics', () => {
  test('totals, a day series in the organization’s zone, top posts, and a channel-limited key', async () => {
    const org = await makeOrg('PRO');
    await db(`update organizations set time_zone = 'America/New_York' where id = $1`, [org.id]);
    const a = await makeChannel(org.id, 'MASTODON', { name: 'a' });
    const b = await makeChannel(org.id, 'MASTODON', { name: 'b' });
    // 2026-01-02T03:00Z is still 1 January in New York.
    const p1 = await publishedPost(org.id, a.id, '2026-01-02T03:00:00Z', [
      ['2026-01-02T04:00:00Z', { likes: 1, impressions: 50 }],
      ['2026-01-02T09:00:00Z', { likes: 4 }],
    ]);
    const p2 = await publishedPost(org.id, b.id, '2026-01-02T15:00:00Z', [['2026-01-02T16:00:00Z', { likes: 2, replies: 3 }]]);
    await publishedPost(org.id, a.id, '2026-01-03T15:00:00Z', []);
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    const app = await testApp();

    const r = await call(app, 'GET', '/v1/analytics?from=2026-01-01T05:00:00Z&to=2026-01-04T05:00:00Z', { key });
    expect(r.status).toBe(200);
    expect(r.body.timeZone).toBe('America/New_York');
    expect(r.body.posts).toBe(3);
    // The latest figure of each post: p1 likes 4 (its impressions 50 kept from the first reading).
    expect(r.body.totals).toEqual({
      impressions: 50,
      views: null,
      likes: 6,
      replies: 3,
      reposts: null,
      quotes: null,
      saves: null,
      clicks: null,
    });
    expect(r.body.series.map((s: { period: string; posts: number }) => [s.period, s.posts])).toEqual([
      ['2026-01-01', 1],
      ['2026-01-02', 1],
      ['2026-01-03', 1],
    ]);
    expect(r.body.series[0].start).toBe('2026-01-01T05:00:00.000Z');
    expect(r.body.series[2].totals.likes).toBeNull();
    expect(r.body.topPosts.map((t: { postId: string; engagement: number }) => [t.postId, t.engagement]).slice(0, 2)).toEqual([
      [p2, 5],
      [p1, 4],
    ]);

    const weeks = await call(app, 'GET', '/v1/analytics?from=2026-01-01T05:00:00Z&to=2026-01-14T05:00:00Z&groupBy=week', { key });
    // Thursday 1 January's week starts on Monday 29 December.
    expect(weeks.body.series.map((s: { period: string; posts: number }) => [s.period, s.posts])).toEqual([
      ['2025-12-29', 3],
      ['2026-01-05', 0],
      ['2026-01-12', 0],
    ]);

    const onlyB = await makeKey(org.id, { scopes: ['read'], channels: [b.id] });
    const limited = await call(app, 'GET', '/v1/analytics?from=2026-01-01T05:00:00Z&to=2026-01-04T05:00:00Z', { key: onlyB.key });
    expect(limited.body.posts).toBe(1);
    expect(limited.body.topPosts.map((t: { postId: string }) => t.postId)).toEqual([p2]);
    const other = await call(app, 'GET', `/v1/analytics?from=2026-01-01T05:00:00Z&to=2026-01-04T05:00:00Z&channelId=${a.id}`, {
      key: onlyB.key,
    });
    expect(other.body.posts).toBe(0);
    expect(other.body.totals.likes).toBeNull();
  });

  test('a range backwards, too long, or grouped by anything but day or week is a 422 naming the field', async () => {
    const org = await makeOrg('PRO');
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    const app = await testApp();
    const backwards = await call(app, 'GET', '/v1/analytics?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', { key });
    expect(backwards.status).toBe(422);
    expect(backwards.body.error.details.fields).toEqual([{ path: 'from', message: 'must be before to' }]);
    const long = await call(app, 'GET', '/v1/analytics?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', { key });
    expect(long.status).toBe(422);
    expect(long.body.error.details.fields[0].path).toBe('to');
    // A `to` in year 1 leaves no room before it: the default `from` cannot be before it.
    const first = await call(app, 'GET', '/v1/analytics?to=0000-01-01T00:00:00Z', { key });
    expect(first.status).toBe(422);
    expect(first.body.error.details.fields[0].path).toBe('from');
    const month = await call(app, 'GET', '/v1/analytics?groupBy=month', { key });
    expect(month.status).toBe(422);
    expect(month.body.error.details.fields[0].path).toBe('groupBy');
  });

  test('GET /v1/channels/{id}/best-times: engagement by weekday and hour in the channel’s zone, ranked, as queue slots', async () => {
    const org = await makeOrg('PRO');
    const channel = await makeChannel(org.id, 'MASTODON', { name: 'best' });
    await db(`update channels set time_zone = 'Europe/Berlin' where id = $1`, [channel.id]);
    // A Monday three weeks back, as a wall date in Berlin.
    const base = new Date(Date.now() - 21 * 86_400_000);
    const monday = new Date(base.getTime() - ((base.getUTCDay() + 6) % 7) * 86_400_000);
    const wall = (dayOffset: number, hour: number, minute: number) => {
      const d = new Date(monday.getTime() + dayOffset * 86_400_000);
      return zonedToUtc(
        { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour, minute },
        'Europe/Berlin',
      ).toISOString();
    };
    const read = (likes: number): [string, Record<string, number>][] => [[new Date().toISOString(), { likes }]];
    await publishedPost(org.id, channel.id, wall(0, 9, 10), read(10));
    await publishedPost(org.id, channel.id, wall(7, 9, 50), read(20));
    await publishedPost(org.id, channel.id, wall(1, 18, 0), read(2));
    await publishedPost(org.id, channel.id, wall(8, 18, 30), read(4));
    await publishedPost(org.id, channel.id, wall(2, 7, 0), read(100)); // alone in its cell: shown, not ranked
    await publishedPost(org.id, channel.id, wall(3, 12, 0), []); // never read: not counted
    const { key } = await makeKey(org.id);
    const app = await testApp();

    const r = await call(app, 'GET', `/v1/channels/${channel.id}/best-times`, { key });
    expect(r.status).toBe(200);
    expect(r.body.timeZone).toBe('Europe/Berlin');
    expect(r.body.posts).toBe(5);
    expect(r.body.cells).toEqual([
      { weekday: 'monday', hour: 9, posts: 2, averageEngagement: 15 },
      { weekday: 'tuesday', hour: 18, posts: 2, averageEngagement: 3 },
      { weekday: 'wednesday', hour: 7, posts: 1, averageEngagement: 100 },
    ]);
    expect(r.body.best.map((c: { weekday: string; hour: number }) => [c.weekday, c.hour])).toEqual([
      ['monday', 9],
      ['tuesday', 18],
    ]);
    expect(r.body.suggestedSlots).toEqual([
      { weekday: 'monday', time: '09:00' },
      { weekday: 'tuesday', time: '18:00' },
    ]);
    // The suggestion is a queue as it stands.
    const queue = await call(app, 'PUT', `/v1/channels/${channel.id}/queue`, { key, body: { slots: r.body.suggestedSlots } });
    expect(queue.status).toBe(200);
    expect(queue.body.slots).toEqual(r.body.suggestedSlots);

    const other = await makeChannel(org.id, 'MASTODON', { name: 'other' });
    const limited = await makeKey(org.id, { scopes: ['read'], channels: [other.id] });
    // As for its queue: a channel outside a limited key's list is refused for the scope.
    const refused = await call(app, 'GET', `/v1/channels/${channel.id}/best-times`, { key: limited.key });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden_scope');
    expect((await call(app, 'GET', '/v1/channels/ch_nothere/best-times', { key })).status).toBe(404);
  });
});
