// The auto-disable rule (activities/webhook-auto-disable.ts, docs/api.md "Webhooks"): an
// endpoint whose deliveries have all failed for 5 days is disabled when one more ends failed, and
// the organization sees why and when (API and web page); enabling it again clears both and starts
// the count afresh. Days pass by injecting the delivery rows' timestamps and the attempt's clock.
import { describe, expect, test } from 'bun:test';
import { AUTO_DISABLE_AFTER_MS } from '../activities/webhook-auto-disable.ts';
import { call, makeKey, makeOrg, testApp } from './harness/fixtures.ts';
import { addDelivery, daysBefore, lastAttempt, REFUSING_URL } from './harness/webhook-failures.ts';

async function setup() {
  const app = await testApp();
  const org = await makeOrg('PRO');
  const { key } = await makeKey(org.id);
  const res = await call(app, 'POST', '/v1/webhooks', { key, body: { url: REFUSING_URL, events: 'all' } });
  expect(res.status).toBe(201);
  const id = res.body.endpoint.id as string;
  const endpoint = async () => (await call(app, 'GET', `/v1/webhooks/${id}`, { key })).body;
  return { app, key, id, endpoint };
}

/** The moment of the final attempt in each test: a fixed day, days after the rows below. */
const NOW = new Date('2026-11-20T12:00:00.000Z');

describe('webhook auto-disable', () => {
  test('the rule is 5 days', () => {
    expect(AUTO_DISABLE_AFTER_MS).toBe(5 * 86_400_000);
  });

  test('only failures for 6 days: the next failed delivery disables the endpoint, with why and when; enabling clears both', async () => {
    const { app, key, id, endpoint } = await setup();
    await addDelivery(id, { createdAt: daysBefore(NOW, 6), status: 'failed', lastAttemptAt: daysBefore(NOW, 3) });
    await addDelivery(id, { createdAt: daysBefore(NOW, 4), status: 'failed', lastAttemptAt: daysBefore(NOW, 1) });
    const current = await addDelivery(id, { createdAt: daysBefore(NOW, 3), status: 'pending' });

    expect(await lastAttempt(current, NOW)).toEqual({ outcome: 'failed' });
    const shown = await endpoint();
    expect(shown.enabled).toBe(false);
    expect(shown.disabledAt).toBe(NOW.toISOString());
    expect(shown.disabledReason).toContain('no delivery succeeded for 6 days');
    expect(shown.disabledReason).toContain(`since ${daysBefore(NOW, 6).toISOString()}`);
    expect(shown.disabledReason).toContain('3 deliveries');
    const list = await call(app, 'GET', '/v1/webhooks', { key });
    expect(list.body.data[0]).toMatchObject({ id, enabled: false, disabledAt: NOW.toISOString(), disabledReason: shown.disabledReason });
    // Nothing more is sent to it.
    expect((await call(app, 'POST', `/v1/webhooks/${id}/test`, { key })).status).toBe(409);

    // Enabled again by its owner: reason and time cleared; the old failures no longer count, so
    // the next failed delivery does not disable it at once.
    const enabled = await call(app, 'PATCH', `/v1/webhooks/${id}`, { key, body: { enabled: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    const next = await addDelivery(id, { createdAt: new Date(), status: 'pending' });
    expect(await lastAttempt(next, new Date(Date.now() + 60_000))).toEqual({ outcome: 'failed' });
    expect((await endpoint()).enabled).toBe(true);
  });

  test('a success 2 days ago: not disabled, however old the failures before it', async () => {
    const { id, endpoint } = await setup();
    await addDelivery(id, { createdAt: daysBefore(NOW, 9), status: 'failed', lastAttemptAt: daysBefore(NOW, 6) });
    await addDelivery(id, { createdAt: daysBefore(NOW, 2), status: 'delivered' });
    const current = await addDelivery(id, { createdAt: daysBefore(NOW, 3), status: 'pending' });
    expect(await lastAttempt(current, NOW)).toEqual({ outcome: 'failed' });
    expect(await endpoint()).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
  });

  test('failures for only 4 days: not disabled yet', async () => {
    const { id, endpoint } = await setup();
    await addDelivery(id, { createdAt: daysBefore(NOW, 10), status: 'delivered' });
    await addDelivery(id, { createdAt: daysBefore(NOW, 4), status: 'failed', lastAttemptAt: daysBefore(NOW, 1) });
    const current = await addDelivery(id, { createdAt: daysBefore(NOW, 3), status: 'pending' });
    expect(await lastAttempt(current, NOW)).toEqual({ outcome: 'failed' });
    expect((await endpoint()).enabled).toBe(true);
  });

  test('disabled by its owner: disabledAt set, no reason (the service did not disable it)', async () => {
    const { app, key, id } = await setup();
    const before = Date.now();
    const res = await call(app, 'PATCH', `/v1/webhooks/${id}`, { key, body: { enabled: false } });
    expect(res.body).toMatchObject({ enabled: false, disabledReason: null });
    expect(Date.parse(res.body.disabledAt)).toBeGreaterThanOrEqual(before - 1000);
  });
});
