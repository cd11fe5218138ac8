// The account created on an invitation's page: the account, its membership (the invitation's
// role) and the invitation's close are one transaction with the invitation locked, so a revoke or
// a replacement that comes first leaves no account and no membership. The page hashes the
// password between its first look at the invitation and the transaction; the tests hold that
// hash (Bun.password.hash, for one password) to land a revoke or a new invitation right there.
import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { Invitation, Membership, ROLES, User, type Role } from '../db/entities/index.ts';
import { harness, type Harness } from './harness/index.ts';
import { testApp } from './harness/fixtures.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let h: Harness;
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  h = await harness();
  app = await testApp({ web: { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} } });
});

const realHash = Bun.password.hash;
afterEach(() => {
  Bun.password.hash = realHash;
});

/** Holds the hash of `password` until released; `reached` resolves when the page is hashing it. */
function holdHashOf(password: string) {
  let reached!: () => void;
  let release!: () => void;
  const reachedP = new Promise<void>((r) => (reached = r));
  const released = new Promise<void>((r) => (release = r));
  Bun.password.hash = (async (p: Parameters<typeof realHash>[0], o?: Parameters<typeof realHash>[1]) => {
    if (p === password) {
      reached();
      await released;
    }
    return realHash.call(Bun.password, p, o);
  }) as typeof realHash;
  return { reached: reachedP, release };
}

const newEmail = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

async function invite(owner: Browser, email: string, role: Role) {
  const res = await owner.post('/settings/members/invitations', { email, role });
  expect(res.status).toBe(201);
  return new URL((await res.one('[data-testid="invitation-link"]')).attrs.value!).pathname;
}

const openInvitationOf = (organizationId: string, email: string) =>
  h.orm.em.fork().findOneOrFail(Invitation, { organization: organizationId, email, acceptedAt: null, declinedAt: null, revokedAt: null });

/** The account with this address (its home organization), and its memberships anywhere. */
async function accountOf(email: string) {
  const em = h.orm.em.fork();
  const user = await em.findOne(User, { email });
  const memberships = user ? await em.find(Membership, { user: user.id }, { orderBy: { id: 'asc' } }) : [];
  return {
    user: user ? { organization: user.organization } : null,
    memberships: memberships.map((m) => ({ organization: m.organization, role: m.role })),
  };
}

describe('creating the account on an invitation', () => {
  test('a revoke that lands while the page is creating the account leaves no account and no membership', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const email = newEmail('race');
    const link = await invite(owner, email, 'editor');
    const pending = await openInvitationOf(org.id, email);
    const hold = holdHashOf('held password one');
    const registering = new Browser(app).post(`${link}/register`, { password: 'held password one' }, { csrf: false });
    await hold.reached;
    expect((await owner.post(`/settings/members/invitations/${pending.id}/revoke`)).status).toBe(303);
    hold.release();
    const res = await registering;
    expect(await accountOf(email)).toEqual({ user: null, memberships: [] });
    expect(res.status).toBe(404);
    expect(await res.query('[data-testid="invitation-gone"]')).toHaveLength(1);
    expect(res.setCookies.some((c) => c.startsWith('pp_session='))).toBe(false);
    const row = await h.orm.em.fork().findOneOrFail(Invitation, { id: pending.id });
    expect({ revoked: row.revokedAt !== null, accepted: row.acceptedAt }).toEqual({ revoked: true, accepted: null });
  });

  test('an invitation replaced meanwhile (another role) creates nothing on the old link; the new link gives its own role', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const email = newEmail('replaced');
    const oldLink = await invite(owner, email, 'admin');
    const hold = holdHashOf('held password two');
    const registering = new Browser(app).post(`${oldLink}/register`, { password: 'held password two' }, { csrf: false });
    await hold.reached;
    const newLink = await invite(owner, email, 'viewer');
    hold.release();
    const res = await registering;
    expect(await accountOf(email)).toEqual({ user: null, memberships: [] });
    expect(res.status).toBe(404);

    const guest = new Browser(app);
    const joined = await guest.post(`${newLink}/register`, { password: 'long enough pass' }, { csrf: false });
    expect({ status: joined.status, location: joined.location }).toEqual({ status: 303, location: '/calendar' });
    expect(await accountOf(email)).toEqual({ user: { organization: org.id }, memberships: [{ organization: org.id, role: 'viewer' }] });
  });

  test('a revoke at any moment of a register: the invitation ends accepted with one member of its role, or revoked with nothing', async () => {
    const { browser: owner, org } = await signedInUser(app);
    // How long a register takes here, to spread the revokes over it.
    const warmup = await invite(owner, newEmail('warmup'), 'viewer');
    const started = performance.now();
    expect((await new Browser(app).post(`${warmup}/register`, { password: 'long enough pass' }, { csrf: false })).status).toBe(303);
    const span = performance.now() - started;
    const roles: Role[] = ['admin', 'editor', 'contributor', 'viewer'];
    const outcomes = [];
    for (let i = 0; i <= 7; i++) {
      const email = newEmail(`both${i}`);
      const role = roles[i % roles.length]!;
      const link = await invite(owner, email, role);
      const { id } = await openInvitationOf(org.id, email);
      const registering = () => new Browser(app).post(`${link}/register`, { password: 'long enough pass' }, { csrf: false });
      const revoking = () => owner.post(`/settings/members/invitations/${id}/revoke`);
      // The first revoke is answered before its register starts, the last after its register is
      // answered; the others are sent during the register, spread over how long one takes.
      const [register, revoke] =
        i === 0
          ? await revoking().then(async (r) => [await registering(), r] as const)
          : i === 7
            ? await registering().then(async (r) => [r, await revoking()] as const)
            : await Promise.all([registering(), Bun.sleep((span * i) / 7).then(revoking)]);
      const row = await h.orm.em.fork().findOneOrFail(Invitation, { id });
      const { user, memberships } = await accountOf(email);
      outcomes.push({
        answers: { register: register.status, revoke: revoke.status },
        state: row.acceptedAt ? 'accepted' : row.revokedAt ? 'revoked' : 'open',
        user: user !== null,
        memberships,
        role,
      });
    }
    for (const o of outcomes) {
      if (o.state === 'accepted') {
        expect(o).toEqual({
          answers: { register: 303, revoke: 404 },
          state: 'accepted',
          user: true,
          memberships: [{ organization: org.id, role: o.role }],
          role: o.role,
        });
      } else {
        expect(o).toEqual({ answers: { register: 404, revoke: 303 }, state: 'revoked', user: false, memberships: [], role: o.role });
      }
    }
    // The revokes came before, during and after the registers.
    expect(new Set(outcomes.map((o) => o.state))).toEqual(new Set(['accepted', 'revoked']));
  }, 120_000);

  test('revoked, expired or already used: registering creates no account and no membership', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const revokedEmail = newEmail('revoked');
    const revokedLink = await invite(owner, revokedEmail, 'editor');
    const pending = await openInvitationOf(org.id, revokedEmail);
    expect((await owner.post(`/settings/members/invitations/${pending.id}/revoke`)).status).toBe(303);
    expect((await new Browser(app).post(`${revokedLink}/register`, { password: 'long enough pass' }, { csrf: false })).status).toBe(404);
    expect(await accountOf(revokedEmail)).toEqual({ user: null, memberships: [] });

    const expiredEmail = newEmail('expired');
    const expiredLink = await invite(owner, expiredEmail, 'editor');
    await h.orm.em
      .fork()
      .nativeUpdate(Invitation, { organization: org.id, email: expiredEmail }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await new Browser(app).post(`${expiredLink}/register`, { password: 'long enough pass' }, { csrf: false })).status).toBe(404);
    expect(await accountOf(expiredEmail)).toEqual({ user: null, memberships: [] });

    const usedEmail = newEmail('used');
    const usedLink = await invite(owner, usedEmail, 'contributor');
    expect((await new Browser(app).post(`${usedLink}/register`, { password: 'long enough pass' }, { csrf: false })).status).toBe(303);
    const first = await accountOf(usedEmail);
    expect((await new Browser(app).post(`${usedLink}/register`, { password: 'another password' }, { csrf: false })).status).toBe(404);
    expect(await accountOf(usedEmail)).toEqual(first);
    expect(first).toEqual({ user: { organization: org.id }, memberships: [{ organization: org.id, role: 'contributor' }] });
  });

  test("the membership has the invitation's role, owner only when invited as owner", async () => {
    const { browser: owner, org } = await signedInUser(app);
    for (const role of ROLES) {
      const email = newEmail(role);
      const link = await invite(owner, email, role);
      const guest = new Browser(app);
      expect((await guest.post(`${link}/register`, { password: 'long enough pass' }, { csrf: false })).status).toBe(303);
      expect((await (await guest.get('/settings/members')).one('[data-testid="my-role"]')).text).toBe(role);
      expect((await accountOf(email)).memberships).toEqual([{ organization: org.id, role }]);
    }
  });
});
