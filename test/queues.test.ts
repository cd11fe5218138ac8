// Posting queues end to end: GET/PUT /v1/channels/{id}/queue, POST /v1/posts with
// `queue: true` (the earliest free slot common to every target channel, claimed in the insert's
// transaction), 20 concurrent queued creates, slots freed by DELETE and by PATCH publishAt.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Channel, Post, PostChannel, QueueClaim } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { claimQueueTime, setOrganizationTimeZone } from '../domain/queues/queues.ts';
import { slotInstants, type QueueSlotInput } from '../domain/queues/slots.ts';
import { WEEKDAYS } from '../lib/zoned-time.ts';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;

beforeAll(async () => {
  stack = await startPostStack();
});

afterAll(async () => {
  await stack?.stop();
});

async function account() {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const a = await makeChannel(org.id, 'MASTODON', { name: 'a' });
  const b = await makeChannel(org.id, 'MASTODON', { name: 'b' });
  return { org, key, a: a.id, b: b.id };
}

const daily = (times: string[]): QueueSlotInput[] => WEEKDAYS.flatMap((weekday) => times.map((time) => ({ weekday, time })));
const DAY = 86_400_000;

/** The slot instants the server should hand out, from its clock on. */
function expectedSlots(slots: QueueSlotInput[], tz: string, now: Date, days = 90): string[] {
  return slotInstants(slots, tz, now, new Date(now.getTime() + days * DAY)).map((d) => d.toISOString());
}

describe('GET and PUT /v1/channels/{id}/queue', () => {
  test('a channel without slots: the organization’s zone (UTC), nothing free', async () => {
    const { key, a } = await account();
    const r = await call(stack.app, 'GET', `/v1/channels/${a}/queue`, { key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ channelId: a, timeZone: 'UTC', timeZoneSource: 'organization', slots: [], nextFreeSlots: [] });
  });

  test('PUT replaces the slots; the next free times are the slots in the channel’s zone', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    const slots: QueueSlotInput[] = [
      { weekday: 'friday', time: '17:30' },
      { weekday: 'monday', time: '09:00' },
      { weekday: 'monday', time: '09:00' },
    ];
    const put = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots, timeZone: 'america/new_york' } });
    expect(put.status).toBe(200);
    expect(put.body.timeZone).toBe('America/New_York');
    expect(put.body.timeZoneSource).toBe('channel');
    expect(put.body.slots).toEqual([
      { weekday: 'monday', time: '09:00' },
      { weekday: 'friday', time: '17:30' },
    ]);
    expect(put.body.nextFreeSlots).toEqual(expectedSlots(slots, 'America/New_York', now).slice(0, 10));
    const got = await call(stack.app, 'GET', `/v1/channels/${a}/queue?count=3`, { key });
    expect(got.body.nextFreeSlots).toEqual(put.body.nextFreeSlots.slice(0, 3));
    // Replaced, not merged; null zone = the organization's again.
    const again = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, {
      key,
      body: { slots: [{ weekday: 'sunday', time: '00:00' }], timeZone: null },
    });
    expect(again.body.slots).toEqual([{ weekday: 'sunday', time: '00:00' }]);
    expect(again.body).toMatchObject({ timeZone: 'UTC', timeZoneSource: 'organization' });
  });

  test('the organization’s zone applies to channels that name none', async () => {
    const { org, key, a } = await account();
    await setOrganizationTimeZone(stack.h.orm.em.fork(), org.id, 'Asia/Tokyo');
    const now = await stack.syncClock();
    const slots: QueueSlotInput[] = [{ weekday: 'tuesday', time: '09:00' }];
    const put = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots } });
    expect(put.body).toMatchObject({ timeZone: 'Asia/Tokyo', timeZoneSource: 'organization' });
    expect(put.body.nextFreeSlots[0]).toBe(expectedSlots(slots, 'Asia/Tokyo', now)[0]);
    expect(put.body.nextFreeSlots[0]).toMatch(/T00:00:00\.000Z$/);
  });

  test('bad weekday, time or zone → 422 naming each field; nothing changes', async () => {
    const { key, a } = await account();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: [{ weekday: 'monday', time: '09:00' }] } });
    for (const body of [
      { slots: [{ weekday: 'someday', time: '09:00' }] },
      { slots: [{ weekday: 'monday', time: '24:00' }] },
      { slots: [{ weekday: 'monday', time: '9:00' }] },
      { slots: [{ weekday: 'monday', time: '09:00' }], timeZone: 'Mars/Olympus_Mons' },
      { slots: daily(Array.from({ length: 15 }, (_, h) => `${String(h).padStart(2, '0')}:00`)) },
      { slots: [{ weekday: 'monday', time: '09:00', extra: 1 }] },
    ]) {
      const r = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.details.fields.length).toBeGreaterThan(0);
    }
    const zone = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, {
      key,
      body: { slots: [{ weekday: 'monday', time: '09:00' }], timeZone: 'Mars/Olympus_Mons' },
    });
    expect(zone.body.error.details.fields).toEqual([{ path: 'timeZone', message: expect.stringContaining('IANA') }]);
    const got = await call(stack.app, 'GET', `/v1/channels/${a}/queue`, { key });
    expect(got.body.slots).toEqual([{ weekday: 'monday', time: '09:00' }]);
    expect((await call(stack.app, 'GET', `/v1/channels/${a}/queue?count=0`, { key })).status).toBe(422);
  });

  test('scopes, another organization’s channel, a channel-limited key', async () => {
    const { org, key, a, b } = await account();
    const other = await account();
    expect((await call(stack.app, 'GET', `/v1/channels/${other.a}/queue`, { key })).status).toBe(404);
    expect((await call(stack.app, 'PUT', `/v1/channels/${other.a}/queue`, { key, body: { slots: [] } })).status).toBe(404);
    const readOnly = (await makeKey(org.id, { scopes: ['read'] })).key;
    const refused = await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key: readOnly, body: { slots: [] } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden_scope');
    const limited = (await makeKey(org.id, { channels: [a] })).key;
    expect((await call(stack.app, 'GET', `/v1/channels/${a}/queue`, { key: limited })).status).toBe(200);
    const outside = await call(stack.app, 'GET', `/v1/channels/${b}/queue`, { key: limited });
    expect(outside.status).toBe(403);
    expect(outside.body.error.details).toEqual({ channelIds: [b] });
  });
});

describe('POST /v1/posts with queue: true', () => {
  test('takes the earliest free slot common to every target channel; the next create the one after', async () => {
    const { key, a, b } = await account();
    const now = await stack.syncClock();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['09:00', '13:00']), timeZone: 'Europe/Berlin' } });
    // b: 07:00 UTC, which is 09:00 in Berlin in summer and 08:00 in winter; plus 13:00 Berlin, which b shares.
    await call(stack.app, 'PUT', `/v1/channels/${b}/queue`, { key, body: { slots: daily(['13:00']), timeZone: 'Europe/Berlin' } });
    const expected = expectedSlots(daily(['13:00']), 'Europe/Berlin', now);
    const first = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'queued one', channelIds: [a, b], queue: true } });
    expect(first.status).toBe(201);
    expect(first.body.scheduledAt).toBe(expected[0]);
    expect(first.body.status).toBe('scheduled');
    const second = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'queued two', channelIds: [a, b], queue: true } });
    expect(second.body.scheduledAt).toBe(expected[1]);
    // On a alone, 09:00 slots are still free; 13:00 ones taken by the two posts are not listed.
    const queueA = await call(stack.app, 'GET', `/v1/channels/${a}/queue?count=100`, { key });
    expect(queueA.body.nextFreeSlots).not.toContain(expected[0]);
    expect(queueA.body.nextFreeSlots).not.toContain(expected[1]);
    expect(queueA.body.nextFreeSlots).toContain(expected[2]);
  });

  test('a post scheduled at a slot time (without the queue) occupies it', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['10:00']) } });
    const expected = expectedSlots(daily(['10:00']), 'UTC', now);
    const manual = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'by hand', channelIds: [a], publishAt: expected[0] },
    });
    expect(manual.status).toBe(201);
    const queued = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'queued', channelIds: [a], queue: true } });
    expect(queued.body.scheduledAt).toBe(expected[1]);
  });

  test('validate answers the time a queued create would get, and claims nothing', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['11:00']) } });
    const v = await call(stack.app, 'POST', '/v1/posts/validate', { key, body: { content: 'x', channelIds: [a], queue: true } });
    expect(v.status).toBe(200);
    expect(v.body.publishAt).toBe(expectedSlots(daily(['11:00']), 'UTC', now)[0]);
    const created = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [a], queue: true } });
    expect(created.body.scheduledAt).toBe(v.body.publishAt);
  });

  test('422: with publishAt; a channel without slots; no common slot within 90 days', async () => {
    const { key, a, b } = await account();
    const now = await stack.syncClock();
    const both = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: 'x', channelIds: [a], queue: true, publishAt: new Date(now.getTime() + DAY).toISOString() },
    });
    expect(both.status).toBe(422);
    expect(both.body.error.details.fields[0].path).toBe('queue');
    const empty = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [a], queue: true } });
    expect(empty.status).toBe(422);
    expect(empty.body.error.details.fields[0].message).toContain(`channel ${a} has no queue slots`);
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['09:00']) } });
    await call(stack.app, 'PUT', `/v1/channels/${b}/queue`, { key, body: { slots: daily(['10:00']) } });
    const apart = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'x', channelIds: [a, b], queue: true } });
    expect(apart.status).toBe(422);
    expect(apart.body.error.details.fields[0].message).toContain('within 90 days');
  });

  test('a full queue (every slot within 90 days taken) → 422', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    // One slot a week: 13 (or 12) of them within 90 days.
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: [{ weekday: 'monday', time: '09:00' }] } });
    const n = expectedSlots([{ weekday: 'monday', time: '09:00' }], 'UTC', now).length;
    for (let i = 0; i < n; i++) {
      const r = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: `week ${i}`, channelIds: [a], queue: true } });
      expect(r.status).toBe(201);
    }
    const full = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'one too many', channelIds: [a], queue: true } });
    expect(full.status).toBe(422);
    expect(full.body.error.code).toBe('validation_failed');
  });

  test('20 concurrent queued creates never take the same slot on a channel', async () => {
    const { key, a, b } = await account();
    const now = await stack.syncClock();
    const slots = daily(['08:00', '12:00', '16:00']);
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots } });
    await call(stack.app, 'PUT', `/v1/channels/${b}/queue`, { key, body: { slots } });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(stack.app, 'POST', '/v1/posts', {
          key,
          body: { content: `concurrent ${i}`, channelIds: i % 2 ? [a, b] : [b, a], queue: true },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const times = results.map((r) => r.body.scheduledAt as string).sort();
    expect(new Set(times).size).toBe(20);
    // And they are exactly the first 20 slots: none was skipped.
    expect(times).toEqual(expectedSlots(slots, 'UTC', now).slice(0, 20));
    const claims = await stack.h.orm.em.fork().find(QueueClaim, { channel: a });
    expect(claims).toHaveLength(20);
  });

  test('the claims alone (no organization lock) keep 20 concurrent transactions off each other’s slots', async () => {
    // createPost also serialises an organization's inserts; this runs the claim protocol without that lock.
    const { org, key, a, b } = await account();
    const now = await stack.syncClock();
    const slots = daily(['08:00', '12:00', '16:00']);
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots } });
    await call(stack.app, 'PUT', `/v1/channels/${b}/queue`, { key, body: { slots } });
    const channels = await stack.h.orm.em.fork().find(Channel, { id: { $in: [a, b] } });
    const times = await Promise.all(
      Array.from({ length: 20 }, () =>
        stack.h.orm.em.fork().transactional(async (tx) => {
          const postId = newId('post');
          const at = await claimQueueTime(tx, org.id, channels, postId, now);
          tx.create(Post, { id: postId, organization: org.id, status: 'scheduled', content: 'x', source: 'api', scheduledAt: at });
          for (const c of channels)
            tx.create(PostChannel, { id: newId('pc'), post: postId, channel: c.id, platform: c.platform, content: 'x' });
          return at.toISOString();
        }),
      ),
    );
    expect(new Set(times).size).toBe(20);
    expect(times.sort()).toEqual(expectedSlots(slots, 'UTC', now).slice(0, 20));
  });

  test('DELETE and PATCH publishAt free the slot for the next queued post', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['09:00']) } });
    const expected = expectedSlots(daily(['09:00']), 'UTC', now);
    const p1 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'one', channelIds: [a], queue: true } });
    const p2 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'two', channelIds: [a], queue: true } });
    expect([p1.body.scheduledAt, p2.body.scheduledAt]).toEqual([expected[0], expected[1]]);
    expect((await call(stack.app, 'DELETE', `/v1/posts/${p1.body.id}`, { key })).status).toBe(204);
    const p3 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'three', channelIds: [a], queue: true } });
    expect(p3.body.scheduledAt).toBe(expected[0]);
    const moved = await call(stack.app, 'PATCH', `/v1/posts/${p2.body.id}`, {
      key,
      body: { publishAt: new Date(Date.parse(expected[5]!) + 3_600_000).toISOString() },
    });
    expect(moved.status).toBe(200);
    const p4 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'four', channelIds: [a], queue: true } });
    expect(p4.body.scheduledAt).toBe(expected[1]);
  });

  test('a stale claim (its post deleted without the route’s release) is taken over', async () => {
    const { key, a } = await account();
    const now = await stack.syncClock();
    await call(stack.app, 'PUT', `/v1/channels/${a}/queue`, { key, body: { slots: daily(['09:00']) } });
    const expected = expectedSlots(daily(['09:00']), 'UTC', now);
    const p1 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'one', channelIds: [a], queue: true } });
    // As the web app's delete would leave it: the post gone, its claim still there.
    await stack.h.orm.em.fork().getConnection().execute(`update posts set deleted_at = now() where id = ?`, [p1.body.id]);
    const p2 = await call(stack.app, 'POST', '/v1/posts', { key, body: { content: 'two', channelIds: [a], queue: true } });
    expect(p2.body.scheduledAt).toBe(expected[0]);
  });
});
