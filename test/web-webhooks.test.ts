// Settings → Webhooks in the web application: add an endpoint (the secret once, then
// never again), CSRF on every form, another organization's endpoint is a 404, a test event shows
// up in the delivery log with the receiver's status, Redeliver sends it again, disable and delete.
// The stack is real: the time-skipping Temporal server, a worker, a receiver on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { startPostStack } from './harness/post-stack.ts';
import { signedInUser } from './harness/web-browser.ts';
import { addDelivery, daysBefore, lastAttempt, REFUSING_URL } from './harness/webhook-failures.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let receiver: ReturnType<typeof Bun.serve>;
const received: { path: string; headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response('ok');
    },
  });
  stack = await startPostStack({ publicBaseUrl: 'http://localhost' });
});
afterAll(async () => {
  await stack?.stop();
  receiver?.stop(true);
});

const at = (path: string) => received.filter((r) => r.path === path);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

async function addEndpoint(browser: Awaited<ReturnType<typeof signedInUser>>['browser'], path: string) {
  const posted = await browser.post('/settings/webhooks', {
    url: `http://127.0.0.1:${receiver.port}${path}`,
    events: 'some',
    types: ['post.published', 'webhook.test'],
    description: 'CI receiver',
  });
  expect(posted.status).toBe(303);
  expect(posted.location).toMatch(/^\/settings\/webhooks\/wh_[0-9a-z]+\?notice=created$/);
  return { id: /\/(wh_[0-9a-z]+)\?/.exec(posted.location!)![1]!, location: posted.location! };
}

describe('Webhooks page', () => {
  test('add: the secret once (POST → 303 → the page, no-store), never again; listed with its events; CSRF required', async () => {
    const { browser } = await signedInUser(stack.app);
    const empty = await browser.get('/settings/webhooks');
    expect(empty.status).toBe(200);
    expect(await empty.query('[data-testid="no-webhooks"]')).toHaveLength(1);

    // Without the CSRF token: refused, nothing created.
    const forged = await browser.post('/settings/webhooks', { url: `http://127.0.0.1:${receiver.port}/x`, events: 'all' }, { csrf: false });
    expect(forged.status).toBe(403);
    expect(await (await browser.get('/settings/webhooks')).query('[data-testid="webhook-row"]')).toHaveLength(0);

    const { id, location } = await addEndpoint(browser, '/once');
    const shown = await browser.get(location);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    const secret = (await shown.one('[data-testid="new-webhook-secret"]')).attrs.value!;
    expect(secret).toMatch(/^whsec_/);
    expect(shown.html.split(secret).length - 1).toBe(1);
    expect((await shown.one('[data-testid="webhook-events"]')).text).toBe('post.published, webhook.test');

    const again = await browser.get(`/settings/webhooks/${id}`);
    expect(again.html).not.toContain(secret);
    expect(await again.query('[data-testid="new-webhook-secret"]')).toHaveLength(0);
    const list = await browser.get('/settings/webhooks');
    expect(list.html).not.toContain(secret);
    const row = await list.one('[data-testid="webhook-row"]');
    expect(row.attrs['data-webhook-id']).toBe(id);
    expect(row.attrs['data-status']).toBe('active');

    // Rotating shows the new secret once too.
    expect((await browser.post(`/settings/webhooks/${id}/rotate-secret`, {}, { csrf: false })).status).toBe(403);
    const rotated = await browser.post(`/settings/webhooks/${id}/rotate-secret`, {});
    expect(rotated.status).toBe(303);
    const next = (await (await browser.get(rotated.location!)).one('[data-testid="new-webhook-secret"]')).attrs.value!;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect((await browser.get(`/settings/webhooks/${id}`)).html).not.toContain(next);
  });

  test('bad input: the form again with the reasons (422), nothing created', async () => {
    const { browser } = await signedInUser(stack.app);
    const none = await browser.post('/settings/webhooks', { url: `http://127.0.0.1:${receiver.port}/x`, events: 'some', description: 'x' });
    expect(none.status).toBe(422);
    expect((await none.one('[data-testid="form-errors"]')).text).toContain('choose at least one event');
    const r = await browser.post('/settings/webhooks', { url: 'ftp://example.com/', events: 'all', description: 'x' });
    expect(r.status).toBe(422);
    expect((await r.one('[data-testid="form-errors"]')).text).toContain('url: must be an http(s) URL');
    expect((await r.one('[data-testid="webhook-url"]')).attrs.value).toBe('ftp://example.com/');
    expect(await (await browser.get('/settings/webhooks')).query('[data-testid="webhook-row"]')).toHaveLength(0);
  });

  test("another organization's endpoint: 404 for its page and every action; it stays", async () => {
    const owner = await signedInUser(stack.app);
    const { id } = await addEndpoint(owner.browser, '/theirs');
    const { browser } = await signedInUser(stack.app);
    expect((await browser.get(`/settings/webhooks/${id}`)).status).toBe(404);
    expect((await browser.get(`/settings/webhooks/${id}/delete`)).status).toBe(404);
    for (const action of ['test', 'disable', 'enable', 'rotate-secret', 'delete', 'deliveries/whd_00000000000000000000000000/redeliver'])
      expect((await browser.post(`/settings/webhooks/${id}/${action}`, { confirm: 'yes' })).status).toBe(404);
    expect((await browser.get('/settings/webhooks')).html).not.toContain(id);
    expect((await owner.browser.get(`/settings/webhooks/${id}`)).status).toBe(200);
  });

  test('an endpoint the service disabled after days of failed deliveries: the page says why and when; Enable clears it', async () => {
    const { browser } = await signedInUser(stack.app);
    const posted = await browser.post('/settings/webhooks', { url: REFUSING_URL, events: 'all', description: 'down for days' });
    expect(posted.status).toBe(303);
    const id = /\/(wh_[0-9a-z]+)\?/.exec(posted.location!)![1]!;
    const now = new Date();
    await addDelivery(id, { createdAt: daysBefore(now, 6), status: 'failed', lastAttemptAt: daysBefore(now, 3) });
    expect(await lastAttempt(await addDelivery(id, { createdAt: daysBefore(now, 3), status: 'pending' }), now)).toEqual({
      outcome: 'failed',
    });

    const detail = await browser.get(`/settings/webhooks/${id}`);
    expect((await detail.one('[data-testid="webhook-detail"]')).attrs['data-status']).toBe('disabled');
    expect((await detail.one('[data-testid="webhook-disabled-reason"]')).text).toContain('no delivery succeeded for 6 days');
    expect((await detail.one('[data-testid="webhook-disabled-at"] time')).attrs.datetime).toBe(now.toISOString());
    const row = await (await browser.get('/settings/webhooks')).one(`[data-testid="webhook-row"][data-webhook-id="${id}"]`);
    expect(row.attrs['data-status']).toBe('disabled');
    expect(row.text).toContain('no delivery succeeded for 6 days');

    expect((await browser.post(`/settings/webhooks/${id}/enable`, {})).status).toBe(303);
    const enabled = await browser.get(`/settings/webhooks/${id}`);
    expect((await enabled.one('[data-testid="webhook-detail"]')).attrs['data-status']).toBe('active');
    expect(await enabled.query('[data-testid="webhook-disabled-reason"]')).toHaveLength(0);
    expect(await enabled.query('[data-testid="webhook-disabled-at"]')).toHaveLength(0);
  });

  test('send a test: a signed delivery, in the log with status 200; Redeliver sends the same webhook-id again; disable, then delete after confirming', async () => {
    const { browser } = await signedInUser(stack.app);
    const { id, location } = await addEndpoint(browser, '/test-flow');
    const secret = (await (await browser.get(location)).one('[data-testid="new-webhook-secret"]')).attrs.value!;
    expect(await (await browser.get(`/settings/webhooks/${id}`)).query('[data-testid="no-deliveries"]')).toHaveLength(1);

    expect((await browser.post(`/settings/webhooks/${id}/test`, {}, { csrf: false })).status).toBe(403);
    const sent = await browser.post(`/settings/webhooks/${id}/test`, {});
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`/settings/webhooks/${id}?notice=test-sent`);
    await until('the delivery to be logged as delivered', async () => {
      const p = await browser.get(`/settings/webhooks/${id}`);
      return (await p.query('[data-testid="delivery-row"][data-status="delivered"]')).length === 1;
    });
    const first = at('/test-flow');
    expect(first).toHaveLength(1);
    const payload = new Webhook(secret).verify(first[0]!.body, first[0]!.headers) as { type: string };
    expect(payload.type).toBe('webhook.test');
    const log = await browser.get(`/settings/webhooks/${id}`);
    expect((await log.one('[data-testid="delivery-event"]')).text).toBe('webhook.test');
    expect((await log.one('[data-testid="delivery-code"]')).text).toBe('200');
    expect((await log.one('[data-testid="delivery-duration"]')).text).toMatch(/^\d+ ms$/);
    expect((await log.one('[data-testid="delivery-error"]')).text).toBe('');
    const deliveryId = (await log.one('[data-testid="delivery-row"]')).attrs['data-delivery-id']!;

    expect((await browser.post(`/settings/webhooks/${id}/deliveries/${deliveryId}/redeliver`, {}, { csrf: false })).status).toBe(403);
    const again = await browser.post(`/settings/webhooks/${id}/deliveries/${deliveryId}/redeliver`, {});
    expect(again.status).toBe(303);
    await until('the redelivery', () => at('/test-flow').length === 2);
    expect(at('/test-flow')[1]!.headers['webhook-id']).toBe(first[0]!.headers['webhook-id']!);
    await until('the log to show the second attempt', async () => {
      const p = await browser.get(`/settings/webhooks/${id}`);
      return (
        (await p.one('[data-testid="delivery-attempts"]')).text === '2' &&
        (await p.one('[data-testid="delivery-row"]')).attrs['data-status'] === 'delivered'
      );
    });

    // Disable: no test, no redeliver (409 shown as a page), listed as disabled; enable again.
    expect((await browser.post(`/settings/webhooks/${id}/disable`, {})).status).toBe(303);
    const disabled = await browser.get(`/settings/webhooks/${id}`);
    expect((await disabled.one('[data-testid="webhook-detail"]')).attrs['data-status']).toBe('disabled');
    expect(await disabled.query('[data-testid="webhook-test"]')).toHaveLength(0);
    expect(await disabled.query('[data-testid="delivery-redeliver"]')).toHaveLength(0);
    const refused = await browser.post(`/settings/webhooks/${id}/test`, {});
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('enable it first');
    expect((await (await browser.get('/settings/webhooks')).one('[data-testid="webhook-row"]')).attrs['data-status']).toBe('disabled');
    expect((await browser.post(`/settings/webhooks/${id}/enable`, {})).status).toBe(303);
    expect((await (await browser.get(`/settings/webhooks/${id}`)).one('[data-testid="webhook-detail"]')).attrs['data-status']).toBe(
      'active',
    );

    // Delete: a confirmation page; without confirm=yes or CSRF nothing happens.
    const confirm = await browser.get(`/settings/webhooks/${id}/delete`);
    expect(await confirm.query('[data-testid="webhook-delete-submit"]')).toHaveLength(1);
    expect((await browser.post(`/settings/webhooks/${id}/delete`, {})).status).toBe(422);
    expect((await browser.post(`/settings/webhooks/${id}/delete`, { confirm: 'yes' }, { csrf: false })).status).toBe(403);
    expect((await browser.get(`/settings/webhooks/${id}`)).status).toBe(200);
    const deleted = await browser.post(`/settings/webhooks/${id}/delete`, { confirm: 'yes' });
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe('/settings/webhooks?notice=deleted');
    expect((await browser.get(`/settings/webhooks/${id}`)).status).toBe(404);
    expect(await (await browser.get('/settings/webhooks')).query('[data-testid="webhook-row"]')).toHaveLength(0);
  });
});
