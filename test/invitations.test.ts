// Invitations end to end: an owner invites by e-mail through a real SMTP server (smtp-server as the
// sink, the message parsed with mailparser), the person invited creates their account or signs in,
// accepts or declines; links are used once, replaced by a new invitation, refused to another
// account; without SMTP the inviter gets the link to share. The sink reads each message as sent:
// its headers and its quoted-printable text.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SMTPServer } from 'smtp-server';
import { Invitation, Membership } from '../db/entities/index.ts';
import { createUser } from '../services/users.ts';
import { harness, type Harness } from './harness/index.ts';
import { testApp } from './harness/fixtures.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let h: Harness;
let app: Awaited<ReturnType<typeof testApp>>;
let bare: Awaited<ReturnType<typeof testApp>>;
let smtp: SMTPServer;
const inbox: { to: string; subject: string; text: string }[] = [];

beforeAll(async () => {
  h = await harness();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo[0]?.address ?? '', ...readMessage(Buffer.concat(chunks).toString('utf8')) });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as { port: number }).port;
  const web = { publicBaseUrl: 'http://localhost', credentialsKey: h.credentialsKey, platforms: {} };
  app = await testApp({ web: { ...web, mail: { url: `smtp://127.0.0.1:${port}`, from: 'Postpilot <team@example.com>' } } });
  bare = await testApp({ web });
});

/** The subject and the text of a single-part message (nodemailer's quoted-printable text/plain). */
function readMessage(raw: string): { subject: string; text: string } {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(head)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
  const body = rest.join('\n\n');
  const text = /quoted-printable/i.test(head)
    ? body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : body;
  return { subject, text };
}

afterAll(async () => {
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
});

const linkIn = (text: string) => /http:\/\/localhost(\/invitations\/[A-Za-z0-9_-]{43})/.exec(text)?.[1];

async function inviteFrom(browser: Browser, email: string, role: string) {
  const res = await browser.post('/settings/members/invitations', { email, role });
  return { res, link: res.status === 201 ? new URL((await res.one('[data-testid="invitation-link"]')).attrs.value!).pathname : undefined };
}

describe('invitations', () => {
  test('by mail: a new person creates their account on the link, joins with the role, and the link is used up', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const email = `new-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const { res, link } = await inviteFrom(owner, email, 'editor');
    expect(res.status).toBe(201);
    expect((await res.one('[data-testid="invited"]')).text).toContain(`An invitation went to ${email}`);
    const mail = inbox.find((m) => m.to === email)!;
    expect(mail.subject).toContain(org.name);
    expect(linkIn(mail.text)).toBe(link);
    expect(
      (await (await owner.get('/settings/members')).query('[data-testid="pending-invitation"]')).map((i) => i.attrs['data-email']),
    ).toEqual([email]);

    const guest = new Browser(app);
    const page = await guest.get(link!);
    expect(page.status).toBe(200);
    expect((await page.one('[data-testid="invitation-role"]')).text).toBe('editor');
    const weak = await guest.post(`${link}/register`, { password: 'short' }, { csrf: false });
    expect(weak.status).toBe(422);
    const joined = await guest.post(`${link}/register`, { password: 'long enough pass' }, { csrf: false });
    expect({ status: joined.status, location: joined.location }).toEqual({ status: 303, location: '/calendar' });
    expect((await (await guest.get('/settings/members')).one('[data-testid="my-role"]')).text).toBe('editor');
    expect((await guest.get(link!)).status).toBe(404);
    expect(await (await owner.get('/settings/members')).query('[data-testid="pending-invitation"]')).toHaveLength(0);
  });

  test('an existing account signs in, accepts, and switches to the new organization; another account cannot accept it', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const { browser: other, email } = await signedInUser(app);
    const { link } = await inviteFrom(owner, email, 'viewer');
    // Signed out: the page sends them to sign in first.
    const anonymous = await new Browser(app).get(link!);
    expect((await anonymous.one('[data-testid="invitation-sign-in"]')).attrs.href).toBe(`/sign-in?next=${encodeURIComponent(link!)}`);
    // Someone else, signed in, cannot use it.
    const { browser: stranger } = await signedInUser(app);
    expect(await (await stranger.get(link!)).query('[data-testid="invitation-other-account"]')).toHaveLength(1);
    const refused = await stranger.post(`${link}/accept`);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain(`This invitation is for ${email}`);
    // The person invited accepts.
    const accepted = await other.post(`${link}/accept`);
    expect({ status: accepted.status, location: accepted.location }).toEqual({ status: 303, location: '/calendar' });
    const calendar = await other.get('/calendar');
    expect((await calendar.query('[data-testid="org-select"] option[selected]'))[0]?.attrs.value).toBe(org.id);
    expect((await (await other.get('/settings/members')).one('[data-testid="my-role"]')).text).toBe('viewer');
  });

  test('declined, withdrawn or replaced: the link opens nothing; inviting a member or, as an admin, an owner is refused', async () => {
    const { browser: owner, org } = await signedInUser(app);
    const email = `d-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const first = await inviteFrom(owner, email, 'editor');
    const second = await inviteFrom(owner, email, 'contributor');
    expect((await new Browser(app).get(first.link!)).status).toBe(404);
    const declined = await new Browser(app).post(`${second.link}/decline`, {}, { csrf: false });
    expect(declined.status).toBe(200);
    expect((await new Browser(app).get(second.link!)).status).toBe(404);
    const third = await inviteFrom(owner, email, 'viewer');
    const pending = await h.orm.em
      .fork()
      .findOneOrFail(Invitation, { organization: org.id, email, acceptedAt: null, declinedAt: null, revokedAt: null });
    expect((await owner.post(`/settings/members/invitations/${pending.id}/revoke`)).status).toBe(303);
    expect((await new Browser(app).get(third.link!)).status).toBe(404);

    const adminEmail = `a-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await createUser(h.orm.em.fork(), { organizationId: org.id, email: adminEmail, password: 'long enough', role: 'admin' });
    const admin = new Browser(app);
    await admin.signIn(adminEmail, 'long enough');
    const asOwner = await admin.post('/settings/members/invitations', { email: 'boss@example.com', role: 'owner' });
    expect(asOwner.status).toBe(403);
    const member = await owner.post('/settings/members/invitations', { email: adminEmail, role: 'viewer' });
    expect(member.status).toBe(409);
    expect(await h.orm.em.fork().count(Membership, { organization: org.id })).toBe(2);
  });

  test('without SMTP the inviter gets the link to share, and nothing is sent', async () => {
    const { browser: owner } = await signedInUser(bare);
    const before = inbox.length;
    const email = `nomail-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const { res, link } = await inviteFrom(owner, email, 'editor');
    expect(res.status).toBe(201);
    expect((await res.one('[data-testid="invited"]')).text).toContain(`No mail is sent from this service: send ${email} this link`);
    expect(link).toMatch(/^\/invitations\//);
    expect(inbox.length).toBe(before);
  });
});
