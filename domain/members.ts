// An organization's members: who they are, a change of role, a removal.
//
// Rules (what a role may do is domain/access.ts):
// - Members with `members.manage` (owner, admin) change roles and remove members; only an owner
//   (`owners.manage`) makes someone an owner, changes an owner's role or removes an owner.
// - The organization keeps at least one owner: its last owner can be neither demoted nor removed
//   (a second owner first). The check runs under a lock on the organization's memberships, so two
//   owners demoting each other at once cannot both succeed.
// - A member removed (or whose role changed) is held to it from their next request: sessions read
//   the membership on every request.
// - A person may belong to several organizations; each membership is added once (`409` for a
//   second) and a session opens one of them at a time (services/users.ts).
// - The API keys a member made go with them: removing a member revokes their keys, and a new role
//   revokes those whose scopes it no longer allows (domain/access.ts KEY_SCOPES).
import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { ApiKey, Membership, User, type IApiKey, type Role } from '../db/entities/index.ts';
import { admissionChanged } from '../db/admission-changes.ts';
import { ApiError, errors } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { authorize, KEY_SCOPES, type MemberPrincipal } from './access.ts';

export interface MemberView {
  userId: string;
  email: string;
  role: Role;
  since: string;
}

export async function listMembers(em: EntityManager, organizationId: string): Promise<MemberView[]> {
  const rows = await em.find(Membership, { organization: organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const users = await em.find(User, { id: { $in: rows.map((m) => m.user) } });
  return rows.map((m) => ({
    userId: m.user,
    email: users.find((u) => u.id === m.user)?.email ?? '',
    role: m.role,
    since: m.createdAt.toISOString(),
  }));
}

/** The member an API key belongs to (who made it in the web app); null for a key made by an operator (the CLI). */
export async function keyMember(em: EntityManager, organizationId: string, keyId: string): Promise<Omit<MemberView, 'since'> | null> {
  const key = await em.findOne(ApiKey, { id: keyId, organization: organizationId });
  if (!key?.createdByUserId) return null;
  const [user, membership] = await Promise.all([
    em.findOne(User, { id: key.createdByUserId }),
    em.findOne(Membership, { organization: organizationId, user: key.createdByUserId }),
  ]);
  // A maker who left took their keys with them (revoked): such a key is not admitted this far.
  if (!user || !membership) return null;
  return { userId: user.id, email: user.email, role: membership.role };
}

/** Adds a person (a user, by email) to an organization with a role. */
export async function addMember(em: EntityManager, organizationId: string, email: string, role: Role): Promise<MemberView> {
  const user = await em.findOne(User, { email: email.trim().toLowerCase() });
  if (!user) throw errors.validation([{ path: 'email', message: 'no user has this email' }]);
  if (await em.findOne(Membership, { organization: organizationId, user: user.id })) {
    throw new ApiError('conflict', `${user.email} is already a member of this organization.`);
  }
  const m = em.create(Membership, { id: newId('mem'), organization: organizationId, user: user.id, role });
  await em.flush();
  return { userId: user.id, email: user.email, role, since: m.createdAt.toISOString() };
}

/** The acting member (domain/access.ts). */
export type Actor = MemberPrincipal;

/** A new role for a member (rules above). */
export function setMemberRole(em: EntityManager, organizationId: string, actor: Actor, userId: string, role: Role, now = new Date()) {
  return changeMember(em, organizationId, actor, userId, role, now);
}

/** Removes a member from the organization (rules above). */
export function removeMember(em: EntityManager, organizationId: string, actor: Actor, userId: string, now = new Date()) {
  return changeMember(em, organizationId, actor, userId, null, now);
}

/**
 * A member's new role, or (null) their removal, under the lock on the organization's memberships;
 * their API keys that the new role no longer allows (all, when removed) are revoked in the same
 * transaction and told to the admission caches after it.
 */
async function changeMember(
  em: EntityManager,
  organizationId: string,
  actor: Actor,
  userId: string,
  to: Role | null,
  now: Date,
): Promise<void> {
  let revoked: IApiKey[] = [];
  await em.transactional(async (tx) => {
    const members = await lockedMembers(tx, organizationId);
    const target = members.find((m) => m.user === userId);
    if (!target) throw new ApiError('not_found', `No member ${userId} in this organization.`);
    if (target.role === to) return;
    assertMayTouch(actor, target.role, to);
    assertOwnerRemains(members, target, to);
    if (to) target.role = to;
    else tx.remove(target);
    const allowed: readonly string[] = to ? KEY_SCOPES[to] : [];
    const keys = await tx.find(ApiKey, { organization: organizationId, createdByUserId: userId, revokedAt: null });
    revoked = keys.filter((k) => !k.scopes.every((s) => allowed.includes(s)));
    for (const k of revoked) k.revokedAt = now;
  });
  for (const k of revoked) admissionChanged({ keyId: k.id });
}

/** Every membership of the organization, locked for this transaction. */
function lockedMembers(tx: EntityManager, organizationId: string) {
  return tx.find(Membership, { organization: organizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } });
}

function assertMayTouch(actor: Actor, from: Role, to: Role | null): void {
  authorize(actor, 'members.manage');
  if (from === 'owner' || to === 'owner') authorize(actor, 'owners.manage');
}

function assertOwnerRemains(members: { user: string; role: Role }[], target: { user: string; role: Role }, to: Role | null): void {
  if (target.role !== 'owner' || to === 'owner') return;
  if (members.filter((m) => m.role === 'owner').length <= 1) {
    throw new ApiError('conflict', 'The organization needs an owner: make another member an owner first.');
  }
}
