// People who sign in to the web application, and their sessions. Passwords are hashed with
// Argon2id (Bun.password); a session is an opaque random token in a cookie, stored only as its
// SHA-256, with an absolute expiry and a per-session CSRF token.
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Membership, Organization, Session, User, type IOrganization, type ISession, type IUser, type Role } from '../db/entities/index.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { getOrganization } from '../domain/organizations.ts';
import { joinWithNewAccount, type AnsweredInvitation } from '../domain/invitations.ts';
import type { MemberPrincipal } from '../domain/access.ts';
import { newId } from '../lib/ids.ts';

/** A session lasts this long after sign-in, and is extended when used in its second half. */
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
export const PASSWORD_MIN_LENGTH = 8;
/** Argon2 hashes any length, but a megabyte of "password" is only a way to burn CPU. */
export const PASSWORD_MAX_LENGTH = 1024;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface UserView {
  id: string;
  organizationId: string;
  email: string;
  createdAt: string;
}

export const userView = (u: IUser): UserView => ({
  id: u.id,
  organizationId: u.organization,
  email: u.email,
  createdAt: u.createdAt.toISOString(),
});

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * Argon2id's cost: Bun's (64 MiB, 2 passes) unless lowered by setPasswordHashCost. A hash carries
 * its own cost, so a password hashed at any cost is verified at that one.
 */
let hashCost: { memoryCost?: number; timeCost?: number } = {};

/**
 * Lowers the cost of the hashes made from now on in this process: the test suite's (its preload),
 * which makes and signs in hundreds of people; never the service's.
 */
export function setPasswordHashCost(cost: { memoryCost: number; timeCost: number }): void {
  hashCost = cost;
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id', ...hashCost });
}

function checkPassword(password: string, fields: FieldError[]): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
    fields.push({ path: 'password', message: `must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` });
  }
}

/** A person who signs in, a member of `organizationId` with `role` (default owner: domain/access.ts). */
export async function createUser(
  em: EntityManager,
  input: { organizationId: string; email: string; password: string; role?: Role },
): Promise<UserView> {
  const fields: FieldError[] = [];
  const email = normalizeEmail(input.email);
  if (email.length > 320 || !EMAIL.test(email)) fields.push({ path: 'email', message: 'must be an email address' });
  checkPassword(input.password, fields);
  if (fields.length) throw errors.validation(fields);
  await getOrganization(em, input.organizationId);
  if (await em.findOne(User, { email })) throw errors.validation([{ path: 'email', message: 'is already used by another user' }]);
  const user = em.create(User, {
    id: newId('usr'),
    organization: input.organizationId,
    email,
    passwordHash: await hashPassword(input.password),
  });
  em.create(Membership, { id: newId('mem'), organization: input.organizationId, user: user.id, role: input.role ?? 'owner' });
  await em.flush();
  return userView(user);
}

/**
 * The account of the person an invitation was sent to, created on the invitation's page: a
 * member with the invitation's role, the invitation closed, all or nothing
 * (domain/invitations.ts joinWithNewAccount). The password is hashed before the transaction, so
 * the invitation is held only for the inserts.
 */
export async function createUserFromInvitation(
  em: EntityManager,
  token: string,
  password: string,
  now: Date,
): Promise<{ user: IUser; invitation: AnsweredInvitation }> {
  const fields: FieldError[] = [];
  checkPassword(password, fields);
  if (fields.length) throw errors.validation(fields);
  const { user, ...invitation } = await joinWithNewAccount(
    em,
    token,
    { id: newId('usr'), passwordHash: await hashPassword(password) },
    now,
  );
  return { user, invitation };
}

export async function findUserByEmail(em: EntityManager, email: string): Promise<IUser | null> {
  return em.findOne(User, { email: normalizeEmail(email) });
}

/** Sets a new password (and signs the user out everywhere). */
export async function setUserPassword(em: EntityManager, userId: string, password: string): Promise<UserView> {
  const fields: FieldError[] = [];
  checkPassword(password, fields);
  if (fields.length) throw errors.validation(fields);
  const user = await em.findOne(User, { id: userId });
  if (!user) throw new ApiError('not_found', `User ${userId} not found.`);
  user.passwordHash = await hashPassword(password);
  await em.flush();
  await em.nativeDelete(Session, { user: userId });
  return userView(user);
}

/** A valid hash to verify against when the email is unknown, so both cases take the same time. */
let dummyHash: Promise<string> | undefined;

/** The user with this email and password, or null. Unknown emails cost the same as wrong passwords. */
export async function authenticateUser(em: EntityManager, email: string, password: string): Promise<IUser | null> {
  if (password.length > PASSWORD_MAX_LENGTH) return null;
  const user = await findUserByEmail(em, email);
  if (!user) {
    await Bun.password.verify(password, await (dummyHash ??= hashPassword(randomBytes(16).toString('hex'))));
    return null;
  }
  return (await Bun.password.verify(password, user.passwordHash)) ? user : null;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const token = () => randomBytes(32).toString('base64url');
/** base64url of 32 bytes. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export interface NewSession {
  /** The cookie value; shown here only. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export async function createSession(em: EntityManager, user: IUser, now = new Date()): Promise<NewSession> {
  const value = token();
  const session = em.create(Session, {
    id: sha256(value),
    user: user.id,
    organization: user.organization,
    csrfToken: token(),
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    lastSeenAt: now,
  });
  await em.flush();
  // Sign-in is a good moment to forget sessions that ran out (there is no other sweeper).
  await em.nativeDelete(Session, { expiresAt: { $lt: now } });
  return { token: value, csrfToken: session.csrfToken, expiresAt: session.expiresAt };
}

export interface SignedIn {
  session: ISession;
  user: IUser;
  organization: IOrganization;
  /** The user's role in the session's organization (domain/access.ts). */
  role: Role;
  /** Every organization the user belongs to, by name (the web app switches between them). */
  organizations: { id: string; name: string; role: Role }[];
  /** Set when the session was extended: the cookie must be sent again with this expiry. */
  renewedUntil?: Date;
}

/** The signed-in member as a principal (domain/access.ts). */
export const memberPrincipal = (s: Pick<SignedIn, 'user' | 'organization' | 'role'>): MemberPrincipal => ({
  type: 'member',
  organizationId: s.organization.id,
  userId: s.user.id,
  name: s.user.email,
  role: s.role,
});

/** The session a cookie value names, if it exists and has not expired. */
export async function findSession(em: EntityManager, value: string, now = new Date()): Promise<SignedIn | null> {
  if (!TOKEN_PATTERN.test(value)) return null;
  const session = await em.findOne(Session, { id: sha256(value) });
  if (!session) return null;
  if (session.expiresAt.getTime() <= now.getTime()) {
    await em.nativeDelete(Session, { id: session.id });
    return null;
  }
  const [user, organization, memberships] = await Promise.all([
    em.findOne(User, { id: session.user }),
    em.findOne(Organization, { id: session.organization }),
    em.find(Membership, { user: session.user }),
  ]);
  const membership = memberships.find((m) => m.organization === session.organization);
  // No longer a member there: the session no longer opens it.
  if (!user || !organization || !membership) return null;
  const names = await em.find(
    Organization,
    { id: { $in: memberships.map((m) => m.organization) } },
    { orderBy: { name: 'asc', id: 'asc' } },
  );
  const organizations = names.map((o) => ({ id: o.id, name: o.name, role: memberships.find((m) => m.organization === o.id)!.role }));
  let renewedUntil: Date | undefined;
  if (session.expiresAt.getTime() - now.getTime() < SESSION_TTL_MS / 2) {
    renewedUntil = new Date(now.getTime() + SESSION_TTL_MS);
    await em.nativeUpdate(Session, { id: session.id }, { expiresAt: renewedUntil, lastSeenAt: now });
    session.expiresAt = renewedUntil;
  }
  return { session, user, organization, role: membership.role, organizations, renewedUntil };
}

/** The session opens another of its user's organizations (false: not a member there). */
export async function switchOrganization(em: EntityManager, session: ISession, organizationId: string): Promise<boolean> {
  if (!(await em.findOne(Membership, { user: session.user, organization: organizationId }))) return false;
  await em.nativeUpdate(Session, { id: session.id }, { organization: organizationId });
  return true;
}

export async function deleteSession(em: EntityManager, value: string): Promise<void> {
  if (TOKEN_PATTERN.test(value)) await em.nativeDelete(Session, { id: sha256(value) });
}

/** Constant-time comparison of a submitted CSRF token with the session's. */
export function csrfMatches(session: Pick<ISession, 'csrfToken'>, submitted: string | null | undefined): boolean {
  if (!submitted) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
