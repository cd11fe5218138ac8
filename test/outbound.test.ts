// The outbound guard (lib/outbound.ts): the address classifier, refusals of loopback / private /
// link-local / … hosts, the connection going to the very address that was checked (DNS
// rebinding), redirects never followed, https still verified on the hostname, and a publish to a
// channel whose instance is refused failing permanently with a clear reason.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import {
  addressRefusal,
  checkOutboundUrl,
  classifyAddress,
  createOutboundFetch,
  OutboundRefusedError,
  type AddressClass,
  type Resolver,
} from '../lib/outbound.ts';
import { loadConfig } from '../lib/config.ts';
import { createMastodonConnector } from '../platforms/mastodon.ts';
import { addChannel } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { perTestServer } from './harness/per-test.ts';
import { startPostStack } from './harness/post-stack.ts';

const serve = perTestServer();

/** A local server that counts what reaches it. */
function server(answer: (req: Request) => Response | Promise<Response> = (req) => Response.json({ host: req.headers.get('host') })) {
  const seen: Request[] = [];
  const s = serve((req) => (seen.push(req), answer(req)));
  return { url: `http://127.0.0.1:${s.port}`, port: s.port, seen };
}

async function refusal(p: Promise<unknown>): Promise<OutboundRefusedError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundRefusedError);
    return err as OutboundRefusedError;
  }
  throw new Error('expected the guard to refuse');
}

/** A resolver that answers from a table and counts its calls. */
function resolver(answers: (name: string, call: number) => string[]) {
  const calls: string[] = [];
  const resolve: Resolver = async (name) => answers(name, calls.push(name));
  return { resolve, calls };
}

describe('address classifier', () => {
  test('IPv4, IPv6 and IPv4-in-IPv6 forms', () => {
    const cases: [string, AddressClass][] = [
      ['8.8.8.8', 'public'],
      ['93.184.216.34', 'public'],
      ['172.32.0.1', 'public'],
      ['100.128.0.1', 'public'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['169.254.169.254', 'link-local'],
      ['169.254.0.1', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'reserved'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.2.1', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['2606:4700:4700::1111', 'public'],
      ['::ffff:8.8.8.8', 'public'],
      ['::', 'unspecified'],
      ['0:0:0:0:0:0:0:0', 'unspecified'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
      ['[::ffff:127.0.0.1]', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['::ffff:0:127.0.0.1', 'loopback'],
      ['::127.0.0.1', 'loopback'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::a9fe:a9fe', 'link-local'],
      ['2002:7f00:1::', 'loopback'],
      ['2002:c0a8:101::1', 'private'],
      ['fe80::1', 'link-local'],
      ['FE80::1%eth0', 'link-local'],
      ['febf::1', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['fec0::1', 'private'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'reserved'],
      ['2001::1', 'reserved'],
      ['not-an-ip', 'reserved'],
      ['1.2.3', 'reserved'],
      ['1:2:3', 'reserved'],
    ];
    for (const [ip, cls] of cases) expect([ip, classifyAddress(ip)]).toEqual([ip, cls]);
  });

  test('OUTBOUND_ALLOW_PRIVATE opens loopback, private, shared and unique-local only', () => {
    for (const ip of ['127.0.0.1', '10.1.1.1', '100.64.0.1', 'fd00::1', '::ffff:192.168.0.1']) {
      expect(addressRefusal(ip, { allowPrivate: false })).toBeTruthy();
      expect(addressRefusal(ip, { allowPrivate: true })).toBeNull();
    }
    for (const ip of ['169.254.169.254', 'fe80::1', '0.0.0.0', '::', '224.0.0.1', '255.255.255.255', '::ffff:169.254.169.254']) {
      expect(addressRefusal(ip, { allowPrivate: true })).toBeTruthy();
    }
    expect(addressRefusal('8.8.8.8', { allowPrivate: false })).toBeNull();
  });

  test('URL literals in odd forms are the addresses they name (decimal, octal, hex, short, IPv4-mapped)', async () => {
    const forms = [
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f000001/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::1]:3000/',
      'http://0/',
      'http://[::]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/',
      'http://10.0.0.1/',
      'https://192.168.0.1:8443/',
    ];
    for (const u of forms) {
      const err = await refusal(checkOutboundUrl(u, { allowPrivate: false }));
      expect(err.kind).toBe('address');
      expect(err.message).toMatch(/loopback|private|link-local|unspecified/);
    }
    expect((await refusal(checkOutboundUrl('http://2130706433/', { allowPrivate: false }))).message).toContain(
      '127.0.0.1 is a loopback address',
    );
    expect((await checkOutboundUrl('https://8.8.8.8/', { allowPrivate: false })).addresses).toEqual(['8.8.8.8']);
    expect((await refusal(checkOutboundUrl('ftp://example.com/', { allowPrivate: true }))).kind).toBe('scheme');
    expect((await refusal(checkOutboundUrl('file:///etc/passwd', { allowPrivate: true }))).kind).toBe('scheme');
  });

  test('a name is refused when any of its addresses is; "localhost" resolves to loopback', async () => {
    const mixed = resolver(() => ['93.184.216.34', '10.0.0.5']);
    const err = await refusal(checkOutboundUrl('https://mixed.test/', { allowPrivate: false, resolve: mixed.resolve }));
    expect(err.message).toBe(
      'mixed.test resolves to 10.0.0.5, which is a private-network address; this service does not connect there (a self-hosted service can allow private addresses with OUTBOUND_ALLOW_PRIVATE=true)',
    );
    expect((await refusal(checkOutboundUrl('http://localhost:3000/', { allowPrivate: false }))).message).toMatch(
      /^localhost:3000 resolves to (127\.0\.0\.1|::1), which is a loopback address/,
    );
  });
});

describe('guarded fetch', () => {
  test('127.0.0.1 refused when private addresses are not allowed (nothing reaches it), answered when they are', async () => {
    const s = server();
    const err = await refusal(createOutboundFetch({ allowPrivate: false })(`${s.url}/api/v2/instance`));
    expect(err.code).toBe('outbound_refused');
    expect(err.message).toContain('a loopback address');
    expect(s.seen).toHaveLength(0);

    const res = await createOutboundFetch({ allowPrivate: true })(`${s.url}/api/v2/instance`);
    expect(res.status).toBe(200);
    expect(s.seen).toHaveLength(1);
  });

  test('connects to the address it checked, resolving once per request (no second lookup by fetch)', async () => {
    const s = server();
    // ".invalid" never resolves in real DNS: only a connection to the checked address can succeed.
    const r = resolver(() => ['127.0.0.1']);
    const guarded = createOutboundFetch({ allowPrivate: true, resolve: r.resolve });
    for (let i = 0; i < 2; i++) {
      const res = await guarded(`http://instance.invalid:${s.port}/x`);
      expect(await res.json()).toEqual({ host: `instance.invalid:${s.port}` });
    }
    expect(r.calls).toEqual(['instance.invalid', 'instance.invalid']);
    expect(s.seen).toHaveLength(2);
  });

  test('DNS rebinding: public at the check, private afterwards → the request goes to the checked public address only', async () => {
    const local = server();
    const dialled: string[] = [];
    const transport = (async (input: string | URL | Request, init?: RequestInit) => {
      dialled.push(`${String(input)} Host=${new Headers(init?.headers).get('host')}`);
      return new Response('ok');
    }) as typeof fetch;
    // The attacker's DNS: a public answer first (passes the check), loopback for every later lookup.
    const r = resolver((_name, n) => (n === 1 ? ['93.184.216.34'] : ['127.0.0.1']));
    const guarded = createOutboundFetch({ allowPrivate: false, resolve: r.resolve, fetch: transport });

    expect(await (await guarded(`http://rebind.test:${local.port}/api/v1/statuses`, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect(dialled).toEqual([`http://93.184.216.34:${local.port}/api/v1/statuses Host=rebind.test:${local.port}`]);
    expect(r.calls).toHaveLength(1);

    // The next request looks the name up again and is refused before any connection.
    const err = await refusal(guarded(`http://rebind.test:${local.port}/api/v1/statuses`));
    expect(err.message).toContain(`rebind.test:${local.port} resolves to 127.0.0.1, which is a loopback address`);
    expect(dialled).toHaveLength(1);
    expect(local.seen).toHaveLength(0);
  });

  test('redirects are never followed: not to a private address, not anywhere', async () => {
    const inner = server(() => new Response('internal secret'));
    const outer = server(() => new Response(null, { status: 302, headers: { Location: `${inner.url}/secret?token=abc` } }));
    const err = await refusal(createOutboundFetch({ allowPrivate: true })(`${outer.url}/api/v2/instance`));
    expect(err.kind).toBe('redirect');
    expect(err.message).toBe(
      `${outer.url} answered 302 with a redirect to ${inner.url}; redirects are not followed, so enter the final address`,
    );
    expect(inner.seen).toHaveLength(0);
    // A caller asking for the 3xx itself gets it, still without the hop.
    const manual = await createOutboundFetch({ allowPrivate: true })(`${outer.url}/x`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(inner.seen).toHaveLength(0);

    // A public first hop redirecting to cloud metadata.
    let calls = 0;
    const transport = (async () => (
      calls++, new Response(null, { status: 301, headers: { Location: 'http://169.254.169.254/latest/meta-data/' } })
    )) as unknown as typeof fetch;
    const viaPublic = createOutboundFetch({ allowPrivate: false, resolve: async () => ['93.184.216.34'], fetch: transport });
    expect((await refusal(viaPublic('https://public.test/api/v2/instance'))).kind).toBe('redirect');
    expect(calls).toBe(1);
  });

  test('another checked address is tried when the first refuses the connection', async () => {
    const s = server(async (req) => new Response(await req.text()));
    const guarded = createOutboundFetch({ allowPrivate: true, resolve: async () => ['::1', '127.0.0.1'] });
    const res = await guarded(`http://dual.invalid:${s.port}/`, { method: 'POST', body: 'same bytes' });
    expect(await res.text()).toBe('same bytes');
    expect(s.seen).toHaveLength(1);
  });
});

describe('https to the checked address', () => {
  // test/fixtures/tls: a test CA and certificates for outbound.test and other.test (openssl, valid to 2126).
  const fx = (name: string) => Bun.file(join(import.meta.dir, 'fixtures', 'tls', name)).text();
  let tls: { port: number; stop: (force?: boolean) => unknown; ca: string };

  beforeAll(async () => {
    const s = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: [
        { serverName: 'outbound.test', cert: await fx('outbound.test.pem'), key: await fx('outbound.test.key') },
        { serverName: 'other.test', cert: await fx('other.test.pem'), key: await fx('other.test.key') },
      ],
      fetch: (req) => Response.json({ host: req.headers.get('host') }),
    });
    tls = { port: s.port!, stop: (f) => s.stop(f), ca: await fx('ca.pem') };
  });
  afterAll(() => tls?.stop(true));

  /** The real fetch trusting the test CA (production uses the system roots). */
  const trusting = (ca: string) =>
    ((input: string | URL | Request, init?: RequestInit & { tls?: Record<string, unknown> }) =>
      fetch(input, { ...init, tls: { ...init?.tls, ca } } as RequestInit)) as typeof fetch;

  test('SNI and the certificate check use the hostname although the connection goes to the address', async () => {
    const guarded = createOutboundFetch({ allowPrivate: true, resolve: async () => ['127.0.0.1'], fetch: trusting(tls.ca) });
    // Each name gets its own certificate, so the server saw that name in SNI.
    for (const name of ['outbound.test', 'other.test']) {
      const res = await guarded(`https://${name}:${tls.port}/api/v2/instance`);
      expect(await res.json()).toEqual({ host: `${name}:${tls.port}` });
    }
    // A name the certificate does not carry fails verification: it is not skipped for an IP connection.
    const err = await guarded(`https://third.test:${tls.port}/`).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});

describe('OUTBOUND_ALLOW_PRIVATE', () => {
  test('off unless set', () => {
    expect(loadConfig({}).outbound).toEqual({ allowPrivate: false });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'true' }).outbound).toEqual({ allowPrivate: true });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'false' }).outbound).toEqual({ allowPrivate: false });
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'yes' })).toThrow(/OUTBOUND_ALLOW_PRIVATE/);
  });
});

describe('publishing to a channel whose instance is refused', () => {
  let stack: Awaited<ReturnType<typeof startPostStack>>;
  let fake: FakeMastodon;
  beforeAll(async () => {
    // Production's policy: public addresses only.
    stack = await startPostStack({
      connectors: { MASTODON: createMastodonConnector({ timeoutMs: 2_000, outbound: { allowPrivate: false } }) },
    });
    fake = await startFakeMastodon();
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await fake?.stop();
  });

  test('fails permanently at the first attempt with the reason; nothing reaches the address', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    // Saved directly (as a channel added before this check, or one whose name now resolves elsewhere).
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'internal',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    await stack.syncClock();
    const r = await call(stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `refused ${crypto.randomUUID()}`, channelIds: [channel.id] },
    });
    expect(r.status).toBe(201);
    await stack.settle(r.body.id);
    const got = await call(stack.app, 'GET', `/v1/posts/${r.body.id}`, { key });
    expect(got.body.status).toBe('failed');
    expect(got.body.channels[0].status).toBe('failed');
    expect(got.body.channels[0].error).toBe(
      `Mastodon instanceUrl refused: ${fake.url.replace('http://', '')} is a loopback address; this service does not connect there (a self-hosted service can allow private addresses with OUTBOUND_ALLOW_PRIVATE=true)`,
    );
    expect(fake.requests).toHaveLength(0);
    const [row] = await stack.h.orm.em
      .fork()
      .getConnection()
      .execute<{ attempts: number }[]>('select attempts from post_channels where post_id = ? and channel_id = ?', [r.body.id, channel.id]);
    expect(row!.attempts).toBe(1); // permanent: not retried
  });
});
