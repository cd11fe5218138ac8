// Invitations to join an organization with a role.
//
// Rules:
// - Members with `members.manage` (owner, admin) invite; only an owner invites an owner
//   (`owners.manage`), as for a change of role (domain/members.ts).
// - An invitation is a link with a random token (only its SHA-256 is stored), valid
//   INVITATION_TTL_MS. Inviting the same address again replaces the pending invitation (the old
//   link stops working). An address that is already a member is refused (`409`).
// - It is accepted by the person it was sent to: signed in with that e-mail address, or, when no
//   account has it, by creating the account on the invitation's page. Accepted, declined,
//   revoked or expired, the link opens nothing more.
// - An account created on the invitation's page is created with its membership (the
//   invitation's role) and the invitation closed in one transaction, the invitation locked: a
//   revoke, a replacement or an expiry that comes first leaves no account and no membership.
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, randomBytes } from 'node:crypto';
import { Invitation, Membership, Organization, User, type IInvitation, type IUser, type Role } from '../db/entities/index.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { authorize } from './access.ts';
import type { Actor } from './members.ts';

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
}

/** A new invitation; its token is returned here only (the link is /invitations/{token}). */
export async function invite(
  em: EntityManager,
  organizationId: string,
  actor: Actor,
  input: { email: string; role: Role },
  now: Date,
): Promise<{ invitation: PendingInvitation; token: string }> {
  authorize(actor, 'members.manage');
  if (input.role === 'owner') authorize(actor, 'owners.manage');
  const email = input.email.trim().toLowerCase();
  if (email.length > 320 || !EMAIL.test(email)) throw errors.validation([{ path: 'email', message: 'must be an email address' }]);
  const user = await em.findOne(User, { email });
  if (user && (await em.findOne(Membership, { organization: organizationId, user: user.id }))) {
    throw new ApiError('conflict', `${email} is already a member of this organization.`);
  }
  const token = randomBytes(32).toString('base64url');
  const invitation = await em.transactional(async (tx) => {
    await tx.nativeUpdate(Invitation, { organization: organizationId, email, ...OPEN }, { revokedAt: now });
    const row = tx.create(Invitation, {
      id: newId('inv'),
      organization: organizationId,
      email,
      role: input.role,
      tokenHash: sha256(token),
      invitedByUserId: actor.userId,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
    });
    await tx.flush();
    return row;
  });
  return { invitation: pendingView(invitation), token };
}

const OPEN = { acceptedAt: null, declinedAt: null, revokedAt: null } as const;

const pendingView = (i: IInvitation): PendingInvitation => ({
  id: i.id,
  email: i.email,
  role: i.role,
  expiresAt: i.expiresAt.toISOString(),
});

export async function pendingInvitations(em: EntityManager, organizationId: string, now: Date): Promise<PendingInvitation[]> {
  const rows = await em.find(
    Invitation,
    { organization: organizationId, ...OPEN, expiresAt: { $gt: now } },
    { orderBy: { createdAt: 'asc' } },
  );
  return rows.map(pendingView);
}

/** What the invitation's page shows; null when the link opens nothing (unknown, used or expired). */
export interface OpenInvitation {
  invitation: IInvitation;
  organizationName: string;
  invitedBy: string;
  /** Whether an account already has the invited address (then it signs in to accept). */
  accountExists: boolean;
}

export async function openInvitation(em: EntityManager, token: string, now: Date): Promise<OpenInvitation | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const invitation = await em.findOne(Invitation, { tokenHash: sha256(token), ...OPEN, expiresAt: { $gt: now } });
  if (!invitation) return null;
  const [org, inviter, account] = await Promise.all([
    em.findOne(Organization, { id: invitation.organization }),
    em.findOne(User, { id: invitation.invitedByUserId }),
    em.findOne(User, { email: invitation.email }),
  ]);
  if (!org) return null;
  return { invitation, organizationName: org.name, invitedBy: inviter?.email ?? 'a member', accountExists: account !== null };
}

/** The invitation a link was answered for. */
export interface AnsweredInvitation {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
}

const answered = (i: IInvitation): AnsweredInvitation => ({ id: i.id, organizationId: i.organization, email: i.email, role: i.role });

/**
 * Accepts for the signed-in user, who must have the invited address; the membership is added and
 * the invitation closed in one transaction, so a link is used once.
 */
export async function acceptInvitation(
  em: EntityManager,
  token: string,
  user: { id: string; email: string },
  now: Date,
): Promise<AnsweredInvitation> {
  return em.transactional(async (tx) => {
    const open = await openInvitation(tx, token, now);
    if (!open) throw new ApiError('not_found', 'This invitation is no longer valid.');
    const { invitation } = open;
    if (invitation.email !== user.email) {
      throw new ApiError('conflict', `This invitation is for ${invitation.email}; sign in with that address to accept it.`);
    }
    const closed = await tx.nativeUpdate(Invitation, { id: invitation.id, ...OPEN }, { acceptedAt: now });
    if (closed !== 1) throw new ApiError('not_found', 'This invitation is no longer valid.');
    if (!(await tx.findOne(Membership, { organization: invitation.organization, user: user.id }))) {
      tx.create(Membership, { id: newId('mem'), organization: invitation.organization, user: user.id, role: invitation.role });
    }
    return answered(invitation);
  });
}

/** The account to create for the address invited: services/users.ts checks the password and hashes it. */
export interface NewAccount {
  id: string;
  passwordHash: string;
}

/**
 * Creates the account of the person invited, a member with the invitation's role, and closes the
 * invitation: all in one transaction that holds the invitation's row, so a revoke or a new
 * invitation for the address waits for it, and one that came first leaves nothing created.
 */
export async function joinWithNewAccount(
  em: EntityManager,
  token: string,
  account: NewAccount,
  now: Date,
): Promise<AnsweredInvitation & { user: IUser }> {
  const gone = () => new ApiError('not_found', 'This invitation is no longer valid.');
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw gone();
  try {
    return await em.transactional(async (tx) => {
      const invitation = await tx.findOne(
        Invitation,
        { tokenHash: sha256(token), ...OPEN, expiresAt: { $gt: now } },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!invitation) throw gone();
      if (await tx.findOne(User, { email: invitation.email })) throw accountExists(invitation.email);
      const user = tx.create(User, {
        id: account.id,
        organization: invitation.organization,
        email: invitation.email,
        passwordHash: account.passwordHash,
      });
      tx.create(Membership, { id: newId('mem'), organization: invitation.organization, user: user.id, role: invitation.role });
      await tx.flush();
      const closed = await tx.nativeUpdate(Invitation, { id: invitation.id, ...OPEN }, { acceptedAt: now });
      if (closed !== 1) throw gone();
      return { ...answered(invitation), user };
    });
  } catch (err) {
    // Another account took the address meanwhile (the e-mail is unique across the service).
    if (err instanceof UniqueConstraintViolationException) throw accountExists('this address');
    throw err;
  }
}

const accountExists = (email: string) =>
  new ApiError('conflict', `An account already uses ${email}: sign in with it to accept the invitation.`);

/** Declined by the person invited (the link is the proof): it opens nothing more. */
export async function declineInvitation(em: EntityManager, token: string, now: Date): Promise<AnsweredInvitation> {
  const open = /^[A-Za-z0-9_-]{43}$/.test(token)
    ? await em.findOne(Invitation, { tokenHash: sha256(token), ...OPEN, expiresAt: { $gt: now } })
    : null;
  const closed = open ? await em.nativeUpdate(Invitation, { id: open.id, ...OPEN }, { declinedAt: now }) : 0;
  if (closed !== 1) throw new ApiError('not_found', 'This invitation is no longer valid.');
  return answered(open!);
}

export async function revokeInvitation(em: EntityManager, organizationId: string, actor: Actor, id: string, now: Date): Promise<void> {
  authorize(actor, 'members.manage');
  // An owner's invitation is an owner's to revoke, as it was theirs to make.
  const open = await em.findOne(Invitation, { id, organization: organizationId, ...OPEN });
  if (open?.role === 'owner') authorize(actor, 'owners.manage');
  const closed = await em.nativeUpdate(Invitation, { id, organization: organizationId, ...OPEN }, { revokedAt: now });
  if (closed !== 1) throw errors.notFound('invitation');
}
