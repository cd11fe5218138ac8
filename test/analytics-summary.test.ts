// GET /v1/analytics (domain/analytics/summary.ts): totals over the posts that report a figure,
// a series of every day or week in the organization's time zone, the top posts by engagement,
// and a channel-limited key counting only its channels.
import { describe, expect, test } from 'bun:test';
import { newId } from '../lib/ids.ts';
import { metricsOf } from '../domain/analytics/metrics.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

const db = async (text: string, values: unknown[] = []) => (await (await harness()).pool.query(text, values)).rows;

/** A channel post published at `at` with these readings ([measuredAt, figures]). */
async function publishedPost(orgId: string, channelId: string, at: string, readings: [string, Record<string, number>][]) {
  const postId = newId('post');
  const pcId = newId('pc');
  await db(
    `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, created_at, updated_at)
     values ($1, $2, 'published', 'x', 'api', $3, $3, now(), now())`,
    [postId, orgId, at],
  );
  await db(
    `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, created_at, updated_at)
     values ($1, $2, $3, 'MASTODON', 'published', 'x', $4, $5, $6, now(), now())`,
    [pcId, postId, channelId, `s${pcId}`, `https://mastodon.example/@u/${pcId}`, at],
  );
  for (const [i, [measuredAt, figures]] of readings.entries()) {
    await db('insert into post_metrics (id, post_channel_id, step, measured_at, metrics) values ($1, $2, $3, $4, $5)', [
      newId('pm'),
      pcId,
      i,
      measuredAt,
      JSON.stringify(metricsOf(figures)),
    ]);
  }
  return postId;
}

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
    const month = await call(app, 'GET', '/v1/analytics?groupBy=month', { key });
    expect(month.status).toBe(422);
    expect(month.body.error.details.fields[0].path).toBe('groupBy');
  });
});
