// The TypeScript SDK (sdk/typescript) against the service on a real socket: one method per
// operation; a post with media through
// media.upload, published once at the fake Mastodon; a listing iterated over its pages; a 429
// retried after the API's Retry-After; a real webhook delivery verified; the API's errors as
// their classes with code, details and request id; a create retried with its Idempotency-Key.
import { describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { OPERATION_NAMES } from '../scripts/sdk/names.ts';
import {
  ConflictError,
  NotFoundError,
  OPERATIONS,
  Postpilot,
  RateLimitError,
  ServerError,
  ValidationError,
} from '../sdk/typescript/src/index.ts';
import { type SdkService, useSdkService } from './harness/sdk-service.ts';

let service: SdkService;
useSdkService((s) => {
  service = s;
});

const client = (key: string, o: { maxRetries?: number } = {}) => new Postpilot({ apiKey: key, baseUrl: service.url, ...o });

async function pngBytes(): Promise<Uint8Array> {
  const sharp = (await import('sharp')).default;
  return new Uint8Array(
    await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer(),
  );
}

async function until<T>(ms: number, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await Bun.sleep(100);
  }
}

describe('the TypeScript SDK', () => {
  test('has a method for every operation of the document', () => {
    const sdk = client('sk_live_unused') as unknown as Record<string, Record<string, unknown>>;
    for (const id of Object.keys(OPERATIONS)) {
      const [resource, name] = OPERATION_NAMES[id]!;
      expect({ id, kind: typeof sdk[resource]?.[name] }).toEqual({ id, kind: 'function' });
    }
  });

  test('media.upload, then a post with it, published once at the platform; a listing iterated over its pages', async () => {
    const a = await service.account('ENTERPRISE');
    const sdk = client(a.key);
    const png = await pngBytes();
    const item = await sdk.media.upload({
      file: new Blob([png as unknown as ArrayBuffer], { type: 'image/png' }),
      fileName: 'dot.png',
      altText: 'a green dot',
    });
    expect(item).toMatchObject({ status: 'ready', mimeType: 'image/png', altText: 'a green dot' });

    const text = `from the SDK ${crypto.randomUUID()}`;
    const post = await sdk.posts.create({ content: text, channelIds: [a.channelId], mediaIds: [item.id] });
    expect(post.media.map((m) => m.id)).toEqual([item.id]);
    const done = await until(
      20_000,
      () => sdk.posts.get(post.id),
      (p) => p.status === 'published' || p.status === 'failed',
    );
    expect(done.status).toBe('published');
    const sent = service.fake.statuses.filter((s) => s.text === text);
    expect(sent).toHaveLength(1);
    const uploaded = service.fake.media.filter((m) => sent[0]!.media_ids?.includes(m.id));
    expect(uploaded.map((m) => m.sha256)).toEqual([createHash('sha256').update(png).digest('hex')]);

    const later = new Date(Date.now() + 86_400_000);
    const ids = [post.id];
    for (let i = 0; i < 4; i++) {
      const p = await sdk.posts.create({
        content: `page ${i} ${text}`,
        channelIds: [a.channelId],
        publishAt: new Date(later.getTime() + i * 60_000).toISOString(),
      });
      ids.push(p.id);
    }
    const seen: string[] = [];
    for await (const p of sdk.posts.listAll({ limit: 2 })) seen.push(p.id);
    expect(seen.sort()).toEqual(ids.sort());
  });

  test('errors are their classes, with code, details and the request id; a create is retried with its key, never doubled', async () => {
    const a = await service.account('ENTERPRISE');
    const sdk = client(a.key);
    const missing = await sdk.posts.get('post_00000000000000000000000000').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: expect.stringMatching(/^req_/) });
    const invalid = await sdk.posts.create({ content: '', channelIds: [a.channelId] }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).fields.map((f) => f.path)).toContain('content');

    const body = {
      content: `once ${crypto.randomUUID()}`,
      channelIds: [a.channelId],
      publishAt: new Date(Date.now() + 86_400_000).toISOString(),
    };
    const first = await sdk.posts.create(body, { idempotencyKey: 'sdk-once' });
    const again = await sdk.posts.create(body, { idempotencyKey: 'sdk-once' });
    expect(again.id).toBe(first.id);
    // Another key is another request: the API's own guard against a double post answers it.
    const other = await sdk.posts.create(body).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ConflictError);
    expect(other).toMatchObject({ code: 'duplicate_post', details: { postId: first.id } });
  });

  test('a 503 is retried with the same Idempotency-Key (one post); a POST without a key is not retried', async () => {
    const a = await service.account('ENTERPRISE');
    const seen: { method: string; path: string; key: string | null }[] = [];
    let failNext = 0;
    // The network between the client and the service: the first answer of a request is lost
    // behind a 503 after the service did the work, as a proxy's timeout would.
    const flaky = (async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input as Request, init);
      seen.push({ method: request.method, path: new URL(request.url).pathname, key: request.headers.get('idempotency-key') });
      const res = await fetch(request);
      if (failNext > 0) {
        failNext--;
        return new Response(JSON.stringify({ error: { code: 'service_unavailable', message: 'try again' } }), {
          status: 503,
          headers: { 'retry-after': '0', 'content-type': 'application/json' },
        });
      }
      return res;
    }) as typeof fetch;
    const sdk = new Postpilot({ apiKey: a.key, baseUrl: service.url, fetch: flaky });
    failNext = 1;
    const text = `retried ${crypto.randomUUID()}`;
    const post = await sdk.posts.create({
      content: text,
      channelIds: [a.channelId],
      publishAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const creates = seen.filter((r) => r.method === 'POST' && r.path === '/v1/posts');
    expect(creates).toHaveLength(2);
    expect(creates[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(creates[1]!.key).toBe(creates[0]!.key!);
    expect((await sdk.posts.list()).data.filter((p) => p.content === text).map((p) => p.id)).toEqual([post.id]);

    seen.length = 0;
    failNext = 1;
    const tag = await sdk.tags.create({ name: `Once ${crypto.randomUUID().slice(0, 8)}` }).catch((e: unknown) => e);
    expect(tag).toBeInstanceOf(ServerError);
    expect(seen.filter((r) => r.path === '/v1/tags')).toHaveLength(1);
  });

  test('a 429 is retried after Retry-After; without retries it is a RateLimitError', async () => {
    const a = await service.account('PRO');
    const once = client(a.key, { maxRetries: 0 });
    let refused: unknown;
    for (let i = 0; i < 61 && !refused; i++)
      refused = await once.me.get().then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', requestId: expect.stringMatching(/^req_/) });
    expect((refused as RateLimitError).retryAfterMs).toBeGreaterThan(0);

    await fetch(`${service.url}/__test/rate-window?key=${a.keyId}&ms=1500`, { method: 'POST' });
    const started = Date.now();
    const me = await client(a.key).me.get();
    expect(me.organization.id).toBe(a.orgId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  test('webhooks.verify: a real delivery verifies with the endpoint secret; a changed body does not', async () => {
    const a = await service.account('ENTERPRISE');
    const sdk = client(a.key);
    const received: { body: string; headers: Headers }[] = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        received.push({ body: await req.text(), headers: req.headers });
        return new Response(null, { status: 204 });
      },
    });
    try {
      const created = await sdk.webhooks.create({ url: `http://127.0.0.1:${receiver.port}/hook`, events: 'all' });
      await sdk.webhooks.test(created.endpoint.id);
      const got = await until(
        20_000,
        async () => received.length,
        (n) => n > 0,
      );
      expect(got).toBe(1);
      const event = sdk.webhooks.verify(received[0]!.body, received[0]!.headers, created.secret);
      expect(event.type).toBe('webhook.test');
      expect(() =>
        sdk.webhooks.verify(received[0]!.body.replace('webhook.test', 'webhook.tost'), received[0]!.headers, created.secret),
      ).toThrow();
    } finally {
      receiver.stop(true);
    }
  });
});
