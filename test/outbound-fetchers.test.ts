// The production network policy (OUTBOUND_ALLOW_PRIVATE=false) where the server fetches a URL a
// tenant chose: the MCP tool upload_media_from_url, driven through the official MCP SDK client,
// and a webhook delivery attempt (activities/webhooks.ts). Loopback, cloud metadata, a redirect
// towards them and a DNS answer that turns private after the check are refused, each asserted by
// the reason the guard gives; an oversized file is a 422 tool error that writes no media row.
// The resolver and the transport under the guard are injected (lib/outbound.ts), so "public"
// hosts are answered here and nothing leaves the machine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createWebhookActivities } from '../activities/webhooks.ts';
import type { OutboundOptions, Resolver } from '../lib/outbound.ts';
import { createApp } from '../server/app.ts';
import { MAX_URL_FETCH_BYTES } from '../services/media-from-url.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { addDelivery } from './harness/webhook-failures.ts';

type Json = Record<string, any>;
const PUBLIC = '93.184.216.34';
const LOOPBACK_REFUSAL = 'is a loopback address; this service does not connect there';
const METADATA_REFUSAL = 'is a link-local address (where cloud metadata services answer); this service does not connect there';

let stack: Awaited<ReturnType<typeof startPostStack>>;
let app: ReturnType<typeof createApp>;
/** A real server on loopback: reachable, so a refusal is the policy's and not a dead port. */
let local: ReturnType<typeof Bun.serve>;
const localSeen: string[] = [];
let orgId = '';
let key = '';

// The "internet" under the guard: what each dialled address answers, and every dial made.
const dialled: string[] = [];
let answer: (url: URL) => Response = () => new Response('no', { status: 404 });
const transport = (async (input: string | URL | Request) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  dialled.push(url.host);
  return answer(url);
}) as typeof fetch;
// DNS: names map to answers; `rebind.test` answers a public address once, loopback afterwards.
const lookups: string[] = [];
const resolve: Resolver = async (name) => {
  const n = lookups.push(name);
  if (name === 'rebind.test') return lookups.filter((l) => l === name).length === 1 ? [PUBLIC] : ['127.0.0.1'];
  if (name === 'mixed.test') return [PUBLIC, '127.0.0.1'];
  if (name === 'metadata.test') return ['169.254.169.254'];
  if (name === 'localhost.test') return ['127.0.0.1'];
  void n;
  return [PUBLIC];
};
const production: OutboundOptions = { allowPrivate: false, resolve, fetch: transport };

beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
  local = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => {
      localSeen.push(req.url);
      return new Response('secret', { headers: { 'content-type': 'image/png' } });
    },
  });
  const clock = await stack.syncClock();
  app = createApp({
    orm: stack.h.orm,
    log: () => {},
    now: () => clock,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    storage: stack.storage,
    rateLimiter: stack.h.rateLimiter,
    outbound: production,
    webhooks: { credentialsKey: stack.h.credentialsKey, outbound: { allowPrivate: true } },
  });
  orgId = (await makeOrg('TEAM', 'Outbound org')).id;
  key = (await makeKey(orgId)).key;
});

afterAll(async () => {
  await stack?.stop();
  local?.stop(true);
});

async function mcpClient(): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: (url, init) => app.handle(new Request(String(url), init)),
    }),
  );
  return client;
}

async function mediaRows(): Promise<number> {
  const [r] = await stack.h.orm.em
    .fork()
    .getConnection()
    .execute<{ n: string }[]>('select count(*) as n from media_items where organization_id = ?', [orgId]);
  return Number(r!.n);
}

/** Calls upload_media_from_url and returns its tool error, checking it is our 422 on `url` and wrote no media row. */
async function refusedUpload(client: Client, url: string): Promise<string> {
  const before = await mediaRows();
  const r = (await client.callTool({ name: 'upload_media_from_url', arguments: { url } })) as Json;
  expect({ url, isError: r.isError }).toEqual({ url, isError: true });
  expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
  const error = r.structuredContent.error;
  expect(error.code).toBe('validation_failed');
  expect(error.details.fields).toHaveLength(1);
  expect(error.details.fields[0].path).toBe('url');
  expect(await mediaRows()).toBe(before);
  return error.details.fields[0].message as string;
}

describe('upload_media_from_url under the production policy, through the MCP SDK client', () => {
  test('loopback and cloud metadata, as literals and as names, are refused before any connection', async () => {
    const client = await mcpClient();
    dialled.length = 0;
    expect(await refusedUpload(client, `http://127.0.0.1:${local.port}/square.png`)).toStartWith(
      `127.0.0.1:${local.port} ${LOOPBACK_REFUSAL}`,
    );
    expect(await refusedUpload(client, 'http://[::1]/a.png')).toStartWith(`[::1] ${LOOPBACK_REFUSAL}`);
    expect(await refusedUpload(client, 'http://169.254.169.254/latest/meta-data/')).toBe(`169.254.169.254 ${METADATA_REFUSAL}`);
    // WHATWG URL parsing turns the decimal form of 169.254.169.254 into the dotted quad the guard checks.
    expect(await refusedUpload(client, 'http://2852039166/latest/meta-data/')).toBe(`169.254.169.254 ${METADATA_REFUSAL}`);
    expect(await refusedUpload(client, 'http://metadata.test/latest/meta-data/')).toBe(
      `metadata.test resolves to 169.254.169.254, which ${METADATA_REFUSAL}`,
    );
    expect(await refusedUpload(client, `http://localhost.test:${local.port}/a.png`)).toStartWith(
      `localhost.test:${local.port} resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`,
    );
    // One private answer among public ones is enough: the connection could go to any of them.
    expect(await refusedUpload(client, 'http://mixed.test/a.png')).toStartWith(
      `mixed.test resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`,
    );
    expect(dialled).toEqual([]);
    expect(localSeen).toEqual([]);
    await client.close();
  });

  test('a public host redirecting to cloud metadata or loopback: the redirect is refused, never followed', async () => {
    const client = await mcpClient();
    dialled.length = 0;
    answer = (url) =>
      new Response(null, {
        status: url.pathname === '/to-metadata' ? 302 : 307,
        headers: {
          location:
            url.pathname === '/to-metadata' ? 'http://169.254.169.254/latest/meta-data/iam' : `http://127.0.0.1:${local.port}/secret`,
        },
      });
    expect(await refusedUpload(client, 'http://cdn.example.test/to-metadata')).toBe(
      'http://cdn.example.test answered 302 with a redirect to http://169.254.169.254; redirects are not followed, so enter the final address',
    );
    expect(await refusedUpload(client, 'http://cdn.example.test/to-loopback')).toBe(
      `http://cdn.example.test answered 307 with a redirect to http://127.0.0.1:${local.port}; redirects are not followed, so enter the final address`,
    );
    expect(dialled).toEqual([PUBLIC, PUBLIC]);
    expect(localSeen).toEqual([]);
    await client.close();
  });

  test('a DNS answer that turns to loopback after the check: the connection goes to the checked address, the next lookup is refused', async () => {
    const client = await mcpClient();
    dialled.length = 0;
    answer = () => new Response('gone', { status: 404 });
    // The first lookup answers public: the request is made, to that address (the 404 is the host's answer).
    expect(await refusedUpload(client, `http://rebind.test:${local.port}/a.png`)).toBe('answered HTTP 404');
    expect(dialled).toEqual([`${PUBLIC}:${local.port}`]);
    // Every later lookup answers loopback: refused, nothing dialled.
    expect(await refusedUpload(client, `http://rebind.test:${local.port}/a.png`)).toStartWith(
      `rebind.test:${local.port} resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`,
    );
    expect(dialled).toEqual([`${PUBLIC}:${local.port}`]);
    expect(localSeen).toEqual([]);
    await client.close();
  });

  test('a file over the size limit is a 422 tool error and writes no media row, whether its length is declared or streamed', async () => {
    const client = await mcpClient();
    const over = MAX_URL_FETCH_BYTES + 1;
    answer = () => new Response('x', { headers: { 'content-type': 'image/png', 'content-length': String(over) } });
    expect(await refusedUpload(client, 'http://files.example.test/declared.png')).toBe(
      `the file is ${over} bytes; files fetched by URL may be at most ${MAX_URL_FETCH_BYTES} bytes (use the three-step upload)`,
    );
    // No Content-Length: the body is counted as it arrives and cut off at the first byte past the limit.
    const chunk = new Uint8Array(1024 * 1024).fill(0x41);
    let sent = 0;
    answer = () => {
      sent = 0;
      return new Response(
        new ReadableStream({
          pull(controller) {
            if (sent > MAX_URL_FETCH_BYTES + 4 * chunk.byteLength) return controller.close();
            sent += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
        { headers: { 'content-type': 'image/png' } },
      );
    };
    expect(await refusedUpload(client, 'http://files.example.test/streamed.png')).toBe(
      `the file is larger than ${MAX_URL_FETCH_BYTES} bytes; files fetched by URL may be at most that (use the three-step upload)`,
    );
    expect(sent).toBeLessThanOrEqual(MAX_URL_FETCH_BYTES + 2 * chunk.byteLength);
    await client.close();
  }, 60_000);
});

describe('a webhook delivery attempt under the production policy', () => {
  const activities = () =>
    createWebhookActivities({
      orm: stack.h.orm,
      credentialsKey: stack.h.credentialsKey,
      // The worker's policy in production, with this file's resolver and transport underneath.
      outbound: production,
      timeoutMs: 5_000,
    });

  /** An endpoint at `url` (set in the row: creating one checks the URL with the stack's own policy) and a pending delivery to it. */
  async function deliveryTo(url: string): Promise<string> {
    const res = await call(app, 'POST', '/v1/webhooks', { key, body: { url: `http://127.0.0.1:${local.port}/hook`, events: 'all' } });
    expect(res.status).toBe(201);
    const endpointId = res.body.endpoint.id as string;
    await stack.h.orm.em.fork().getConnection().execute('update webhook_endpoints set url = ? where id = ?', [url, endpointId]);
    return addDelivery(endpointId, { createdAt: new Date(), status: 'pending' });
  }

  async function attempt(url: string) {
    const deliveryId = await deliveryTo(url);
    const result = await activities().attemptWebhookDelivery({ deliveryId, plannedDelayMs: 5_000 });
    const [row] = await stack.h.orm.em
      .fork()
      .getConnection()
      .execute<{ status: string; attempts: number; last_status_code: number | null; last_error: string | null }[]>(
        'select status, attempts, last_status_code, last_error from webhook_deliveries where id = ?',
        [deliveryId],
      );
    return { result, row: row! };
  }

  test('loopback, cloud metadata and names resolving to them: the attempt fails with the guard’s reason and connects nowhere', async () => {
    dialled.length = 0;
    const cases: [string, string][] = [
      [`http://127.0.0.1:${local.port}/hook`, `127.0.0.1:${local.port} ${LOOPBACK_REFUSAL}`],
      ['http://169.254.169.254/latest/meta-data/', `169.254.169.254 ${METADATA_REFUSAL}`],
      ['http://metadata.test/hook', `metadata.test resolves to 169.254.169.254, which ${METADATA_REFUSAL}`],
      [`http://localhost.test:${local.port}/hook`, `localhost.test:${local.port} resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`],
      ['http://mixed.test/hook', `mixed.test resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`],
    ];
    for (const [url, reason] of cases) {
      const { result, row } = await attempt(url);
      expect({ url, result, status: row.status, code: row.last_status_code }).toEqual({
        url,
        result: { outcome: 'retry', nextDelayMs: 5_000 },
        status: 'pending',
        code: null,
      });
      expect(row.last_error).toStartWith(reason);
    }
    expect(dialled).toEqual([]);
    expect(localSeen).toEqual([]);
  });

  test('a redirect towards cloud metadata is recorded as the 3xx it is, and not followed', async () => {
    dialled.length = 0;
    answer = () => new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/iam' } });
    const { result, row } = await attempt('http://hooks.example.test/in');
    expect(result).toEqual({ outcome: 'retry', nextDelayMs: 5_000 });
    expect({ code: row.last_status_code, error: row.last_error }).toEqual({ code: 302, error: 'HTTP 302' });
    expect(dialled).toEqual([PUBLIC]);
    expect(localSeen).toEqual([]);
  });

  test('a DNS answer that turns to loopback: the attempt goes to the checked public address, the next is refused', async () => {
    dialled.length = 0;
    lookups.splice(0, lookups.length, ...lookups.filter((l) => l !== 'rebind.test'));
    answer = () => new Response('ok');
    const first = await attempt(`http://rebind.test:${local.port}/hook`);
    expect(first.result).toEqual({ outcome: 'delivered' });
    expect(dialled).toEqual([`${PUBLIC}:${local.port}`]);
    const second = await attempt(`http://rebind.test:${local.port}/hook`);
    expect(second.result).toEqual({ outcome: 'retry', nextDelayMs: 5_000 });
    expect(second.row.last_error).toStartWith(`rebind.test:${local.port} resolves to 127.0.0.1, which ${LOOPBACK_REFUSAL}`);
    expect(dialled).toEqual([`${PUBLIC}:${local.port}`]);
    expect(localSeen).toEqual([]);
  });
});
