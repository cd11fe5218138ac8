// The sign-in throttle: failed attempts counted per (email, client address) and per
// address in Postgres — shared by every API process, and unable to lock a user out from elsewhere.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createUser } from '../services/users.ts';
import { beginSignIn, clientAddress, normalizeAddress, SIGN_IN_LIMITS } from '../services/sign-in-throttle.ts';
import { harness, type Harness } from './harness/index.ts';
import { makeOrg, testApp } from './harness/fixtures.ts';
import { Browser } from './harness/web-browser.ts';

type App = Awaited<ReturnType<typeof testApp>>;
let h: Harness;

beforeAll(async () => {
  h = await harness();
});

const webOptions = (trustProxyHops: number) => ({
  publicBaseUrl: 'http://localhost',
  credentialsKey: h.credentialsKey,
  platforms: {},
  trustProxyHops,
});

/** A client address no other test uses. */
const someAddress = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

async function user(password = 'correct horse battery') {
  const org = await makeOrg();
  const email = `throttle-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await createUser(h.orm.em.fork(), { organizationId: org.id, email, password });
  return { email, password };
}

/** One sign-in through the form, from `from` (an X-Forwarded-For value) when given. */
async function signIn(app: { handle: (r: Request) => Promise<Response> }, email: string, password: string, from?: string, origin?: string) {
  const b = new Browser(app, origin);
  const headers: Record<string, string> = from ? { 'x-forwarded-for': from } : {};
  const form = await b.get('/sign-in', headers);
  const token = (await form.one('input[name="_csrf"]')).attrs.value!;
  return b.post('/sign-in', { _csrf: token, email, password, next: '' }, { csrf: false, headers });
}

async function fail(app: App, email: string, from: string, times: number) {
  for (let i = 0; i < times; i++) expect((await signIn(app, email, `wrong-${i}-password`, from)).status).toBe(401);
}

describe('sign-in throttle', () => {
  test('two API processes (two app instances) share one count per (email, address)', async () => {
    const [one, two] = [await testApp({ web: webOptions(1) }), await testApp({ web: webOptions(1) })];
    const { email, password } = await user();
    const from = someAddress();
    await fail(one, email, from, 5);
    await fail(two, email, from, 5);
    for (const app of [one, two]) {
      const res = await signIn(app, email, password, from);
      expect(res.status).toBe(429);
      expect((await res.one('[data-testid="sign-in-error"]')).text).toMatch(
        /^Too many failed attempts\. Try again in (1[0-5]|[1-9]) minutes?\.$/,
      );
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60);
      expect(res.setCookies.some((c) => c.startsWith('pp_session='))).toBe(false);
    }
  });

  test('failures from one address do not lock the same email out from another', async () => {
    const app = await testApp({ web: webOptions(1) });
    const { email, password } = await user();
    const attacker = someAddress();
    await fail(app, email, attacker, SIGN_IN_LIMITS.perEmailAndAddress);
    expect((await signIn(app, email, password, attacker)).status).toBe(429);
    const owner = await signIn(app, email, password, someAddress());
    expect(owner.status).toBe(303);
    expect(owner.setCookies.some((c) => c.startsWith('pp_session='))).toBe(true);
  });

  test('one address trying many emails is stopped after 50 failures, for every email; other addresses are not', async () => {
    const app = await testApp({ web: webOptions(1) });
    const { email, password } = await user();
    const sprayer = someAddress();
    // 45 failures on as many emails counted directly (no password hashing), 5 through the form.
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress - 5; i++) {
      expect(
        (await beginSignIn(h.orm.em.fork(), `sprayed-${i}-${crypto.randomUUID().slice(0, 6)}@example.com`, sprayer, new Date())).allowed,
      ).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      expect((await signIn(app, `nobody-${i}-${crypto.randomUUID().slice(0, 6)}@example.com`, 'guess-password', sprayer)).status).toBe(401);
    }
    expect((await signIn(app, `fresh-${crypto.randomUUID().slice(0, 6)}@example.com`, 'guess-password', sprayer)).status).toBe(429);
    expect((await signIn(app, email, password, sprayer)).status).toBe(429);
    expect((await signIn(app, email, password, someAddress())).status).toBe(303);
  });

  test('a right password gives its place back: signing in does not use up the address', async () => {
    const app = await testApp({ web: webOptions(1) });
    const office = someAddress();
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress - 1; i++) {
      expect(
        (await beginSignIn(h.orm.em.fork(), `colleague-${i}-${crypto.randomUUID().slice(0, 6)}@example.com`, office, new Date())).allowed,
      ).toBe(true);
    }
    // One place left: five people sign in one after the other, each using it and giving it back.
    for (let i = 0; i < 5; i++) {
      const { email, password } = await user();
      expect((await signIn(app, email, password, office)).status).toBe(303);
    }
    const { email } = await user();
    expect((await signIn(app, email, 'wrong-password', office)).status).toBe(401);
    expect((await signIn(app, email, 'wrong-password', office)).status).toBe(429);
  });

  test('concurrent guesses cannot slip past the limit', async () => {
    const app = await testApp({ web: webOptions(1) });
    const { email } = await user();
    const from = someAddress();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(app, email, `parallel-${i}-guess`, from)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(SIGN_IN_LIMITS.perEmailAndAddress);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - SIGN_IN_LIMITS.perEmailAndAddress);
  });

  test('the window ends after 15 minutes', async () => {
    let clock = new Date();
    const app = await testApp({ web: webOptions(1), now: () => clock });
    const { email, password } = await user();
    const from = someAddress();
    await fail(app, email, from, SIGN_IN_LIMITS.perEmailAndAddress);
    expect((await signIn(app, email, password, from)).status).toBe(429);
    clock = new Date(clock.getTime() + SIGN_IN_LIMITS.windowMs - 60_000);
    expect((await signIn(app, email, password, from)).status).toBe(429);
    clock = new Date(clock.getTime() + 61_000);
    expect((await signIn(app, email, password, from)).status).toBe(303);
  });
});

describe('the client address', () => {
  let plain: App & { server?: { port?: number } | null };
  let proxied: App & { server?: { port?: number } | null };

  beforeAll(async () => {
    plain = (await testApp({ web: webOptions(0) })).listen({ port: 0, hostname: '127.0.0.1' }) as never;
    proxied = (await testApp({ web: webOptions(1) })).listen({ port: 0, hostname: '127.0.0.1' }) as never;
  });
  afterAll(async () => {
    await (plain as unknown as { stop: () => Promise<void> })?.stop?.();
    await (proxied as unknown as { stop: () => Promise<void> })?.stop?.();
  });

  const overSocket = (app: { server?: { port?: number } | null }) => {
    const origin = `http://127.0.0.1:${app.server!.port}`;
    return { origin, client: { handle: (r: Request) => fetch(r, { redirect: 'manual' }) } };
  };

  test('without TRUST_PROXY the socket decides: a forged X-Forwarded-For changes nothing', async () => {
    const { origin, client } = overSocket(plain);
    const { email, password } = await user();
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndAddress; i++) {
      expect((await signIn(client, email, `wrong-${i}-password`, someAddress(), origin)).status).toBe(401);
    }
    expect((await signIn(client, email, password, someAddress(), origin)).status).toBe(429);
    // Counted under the socket's address (not the shared one of requests without a socket).
    const [row] = await h.orm.em
      .fork()
      .getConnection()
      .execute<{ failures: number }[]>("select failures from sign_in_attempts where key = 'addr:127.0.0.1'");
    expect(row?.failures).toBeGreaterThanOrEqual(SIGN_IN_LIMITS.perEmailAndAddress);
  });

  test('with TRUST_PROXY the proxy’s X-Forwarded-For entry decides (the client’s own entries to its left do not)', async () => {
    const { origin, client } = overSocket(proxied);
    const { email, password } = await user();
    const real = someAddress();
    for (let i = 0; i < SIGN_IN_LIMITS.perEmailAndAddress; i++) {
      // The client prepends a different forged address each time; the proxy appends the real one.
      expect((await signIn(client, email, `wrong-${i}-password`, `${someAddress()}, ${real}`, origin)).status).toBe(401);
    }
    expect((await signIn(client, email, password, `${someAddress()}, ${real}`, origin)).status).toBe(429);
    expect((await signIn(client, email, password, someAddress(), origin)).status).toBe(303);
  });

  test('parsing: hops from the right, ports and brackets, IPv4-mapped IPv6, IPv6 per /64', () => {
    const req = (xff?: string) => new Request('http://x/', { headers: xff ? { 'x-forwarded-for': xff } : {} });
    expect(clientAddress(req('1.1.1.1, 2.2.2.2'), '127.0.0.1', 0)).toBe('127.0.0.1');
    expect(clientAddress(req('1.1.1.1, 2.2.2.2'), '127.0.0.1', 1)).toBe('2.2.2.2');
    expect(clientAddress(req('1.1.1.1, 2.2.2.2'), '127.0.0.1', 2)).toBe('1.1.1.1');
    expect(clientAddress(req('2.2.2.2'), '127.0.0.1', 3)).toBe('2.2.2.2');
    expect(clientAddress(req('not-an-address'), '127.0.0.1', 1)).toBe('127.0.0.1');
    expect(clientAddress(req(), null, 1)).toBe('unknown');
    expect(clientAddress(req(), '::ffff:192.0.2.7', 0)).toBe('192.0.2.7');
    expect(normalizeAddress('192.0.2.7:4431')).toBe('192.0.2.7');
    expect(normalizeAddress('[2001:db8:1:2:3:4:5:6]:443')).toBe('2001:db8:1:2::/64');
    expect(normalizeAddress('2001:DB8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(normalizeAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});
