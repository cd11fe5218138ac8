// Shareable preview links of a post, for a reviewer without an account.
//
// Rules:
// - A link is a row (who shared it, whether it decides, until when, revoked, its decision) and a
//   signed token naming it: `<payload>.<signature>`, the payload base64url JSON
//   {link, post, org, exp (seconds), decide (0|1)}, the signature HMAC-SHA256 of the payload under
//   a key derived from the service's CREDENTIALS_KEY. A changed byte anywhere → not found; past
//   `exp` → expired (410); revoked → gone (410). Rotating CREDENTIALS_KEY ends every link. A token
//   that names no row (signed before links were rows) shows the post and never decides.
// - Any member who may write posts (`posts.write`) shares one for a post of their organization,
//   valid 1 to 30 days (7 by default). Only a member who may approve (`posts.approve`) shares one
//   that decides, and not for a post whose approval they asked for (four eyes: the link stands for
//   the member who shared it).
// - It shows the post as each channel would publish it (its text per channel, media, thread),
//   its status and approval; never the organization's other posts, keys or settings.
// - A deciding link carries approve/reject while the organization allows reviewers to decide
//   (Settings → Approval), the post waits for a decision, and the member who shared it may still
//   approve (domain/access.ts: a reviewer principal stands for that member now). It decides ONCE:
//   its decision is final for the link (the buttons are gone; the team may still change the
//   post's approval). The decision goes through decideApproval, recorded with the reviewer's
//   name (the actor) and the link's id.
// - The member who shared a link, or any member who may approve, revokes it from the post's page.
// - A deleted post's link finds nothing (404).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Membership, Organization, PreviewLink, type IPreviewLink } from '../../db/entities/index.ts';
import { ApiError, errors } from '../../lib/errors.ts';
import { newId } from '../../lib/ids.ts';
import { authorize, authorizeDecision, can, type MemberPrincipal, type Principal } from '../access.ts';
import type { TemporalDeps } from '../temporal-calls.ts';
import { decideApproval, requesterPerson } from './approval.ts';
import { getPostForKey, type PostView } from './view.ts';

export const PREVIEW_DAYS = { default: 7, min: 1, max: 30 } as const;

export interface PreviewGrant {
  /** The link's row; null for a token signed before links were rows (it never decides). */
  linkId: string | null;
  postId: string;
  organizationId: string;
  expiresAt: Date;
  /** Made to decide (still subject to the rules above). */
  decide: boolean;
}

const signingKey = (credentialsKey: Buffer) => createHmac('sha256', credentialsKey).update('preview-links/v1').digest();

const sign = (credentialsKey: Buffer, payload: string) =>
  createHmac('sha256', signingKey(credentialsKey)).update(payload).digest('base64url');

export function signPreviewLink(credentialsKey: Buffer, grant: PreviewGrant): string {
  const payload = Buffer.from(
    JSON.stringify({
      ...(grant.linkId ? { link: grant.linkId } : {}),
      post: grant.postId,
      org: grant.organizationId,
      exp: Math.floor(grant.expiresAt.getTime() / 1000),
      decide: grant.decide ? 1 : 0,
    }),
  ).toString('base64url');
  return `${payload}.${sign(credentialsKey, payload)}`;
}

/** The grant a token carries; 'invalid' for anything not signed by this service, 'expired' past its time. */
export function readPreviewLink(credentialsKey: Buffer, token: string, now: Date): PreviewGrant | 'invalid' | 'expired' {
  const match = /^([A-Za-z0-9_-]{1,1000})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return 'invalid';
  const [, payload, signature] = match as unknown as [string, string, string];
  const expected = Buffer.from(sign(credentialsKey, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid';
  let body: { link?: unknown; post?: unknown; org?: unknown; exp?: unknown; decide?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (typeof body.post !== 'string' || typeof body.org !== 'string' || typeof body.exp !== 'number') return 'invalid';
  const expiresAt = new Date(body.exp * 1000);
  if (expiresAt.getTime() <= now.getTime()) return 'expired';
  const linkId = typeof body.link === 'string' ? body.link : null;
  return { linkId, postId: body.post, organizationId: body.org, expiresAt, decide: linkId !== null && body.decide === 1 };
}

/** Shares a link (rules above): its row and its token. */
export async function sharePreviewLink(
  em: EntityManager,
  credentialsKey: Buffer,
  by: MemberPrincipal,
  input: { postId: string; days: number; decide: boolean; now: Date },
): Promise<{ token: string; link: IPreviewLink }> {
  authorize(by, 'posts.write');
  const post = await getPostForKey(em, by.organizationId, input.postId, 'all');
  if (!Number.isInteger(input.days) || input.days < PREVIEW_DAYS.min || input.days > PREVIEW_DAYS.max)
    throw errors.validation([{ path: 'days', message: `must be a whole number from ${PREVIEW_DAYS.min} to ${PREVIEW_DAYS.max}` }]);
  // Decisions only where there is one to make and the organization lets reviewers make it; else a link that shows.
  const org = await em.findOneOrFail(Organization, { id: by.organizationId });
  const decide = input.decide && org.previewDecisions && post.approval !== null;
  if (decide) authorizeDecision(by, await requesterPerson(em, post.approval!.requestedBy));
  const link = em.create(PreviewLink, {
    id: newId('plk'),
    organization: by.organizationId,
    postId: post.id,
    createdByUserId: by.userId,
    decide,
    expiresAt: new Date(input.now.getTime() + input.days * 86_400_000),
    createdAt: input.now,
    revokedAt: null,
    decision: null,
    reviewerName: null,
    decidedAt: null,
  });
  await em.flush();
  const token = signPreviewLink(credentialsKey, {
    linkId: link.id,
    postId: post.id,
    organizationId: by.organizationId,
    expiresAt: link.expiresAt,
    decide: link.decide,
  });
  return { token, link };
}

/** The link's row for a grant; a revoked link is gone (410). A grant and a row that disagree are not found. */
export async function previewLinkOf(em: EntityManager, grant: PreviewGrant): Promise<IPreviewLink | null> {
  if (!grant.linkId) return null;
  const link = await em.findOne(PreviewLink, { id: grant.linkId });
  if (!link || link.postId !== grant.postId || link.organization !== grant.organizationId) throw errors.notFound('Preview link');
  if (link.revokedAt) throw new ApiError('not_found', 'This preview link was revoked. Ask for a new one.', { status: 410 });
  return link;
}

/** The reviewer holding a link, standing for the member who shared it, as that member stands now. */
export async function reviewerPrincipal(em: EntityManager, link: IPreviewLink, name: string): Promise<Principal> {
  const m = await em.findOne(Membership, { organization: link.organization, user: link.createdByUserId });
  return {
    type: 'reviewer',
    organizationId: link.organization,
    linkId: link.id,
    name,
    maker: { userId: link.createdByUserId, role: m?.role ?? null },
  };
}

/** Whether the link may decide the post now (rules above); the reason when it may not. */
export async function linkMayDecide(em: EntityManager, link: IPreviewLink | null, post: PostView): Promise<boolean> {
  if (!link?.decide || link.decidedAt || !post.approval || post.status !== 'scheduled') return false;
  const org = await em.findOne(Organization, { id: link.organization });
  if (!org?.previewDecisions) return false;
  try {
    authorizeDecision(await reviewerPrincipal(em, link, 'reviewer'), await requesterPerson(em, post.approval.requestedBy));
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return false;
    throw err;
  }
}

/**
 * A reviewer's decision through a link: once per link. The link's row is locked while the decision
 * is made, so two submits of one link decide once; a decision refused leaves the link unused.
 */
export async function decideByLink(
  em: EntityManager,
  temporal: TemporalDeps | undefined,
  grant: PreviewGrant,
  d: { decision: 'approve' | 'reject'; reviewer: string; comment: string | null; now: Date },
): Promise<void> {
  await em.transactional(async (tx) => {
    const link = await tx.findOne(PreviewLink, { id: grant.linkId ?? '' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!link || link.revokedAt || link.postId !== grant.postId) throw errors.notFound('Preview link');
    if (link.decidedAt) throw errors.conflict(`This link has already decided (${link.decision === 'approve' ? 'approved' : 'rejected'}).`);
    const post = await getPostForKey(tx, grant.organizationId, grant.postId, 'all');
    if (!(await linkMayDecide(tx, link, post))) throw errors.notFound('Preview link');
    await decideApproval(tx, temporal, grant.organizationId, grant.postId, 'all', {
      decision: d.decision,
      by: await reviewerPrincipal(tx, link, d.reviewer),
      comment: d.comment,
      now: d.now,
    });
    link.decision = d.decision;
    link.reviewerName = d.reviewer;
    link.decidedAt = d.now;
  });
}

/** The links shared for a post, newest first (the post's page). */
export async function previewLinksOfPost(em: EntityManager, organizationId: string, postId: string): Promise<IPreviewLink[]> {
  return em.find(PreviewLink, { organization: organizationId, postId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

/** Revokes a link: by the member who shared it, or one who may approve. */
export async function revokePreviewLink(em: EntityManager, by: MemberPrincipal, postId: string, linkId: string, now: Date): Promise<void> {
  const link = await em.findOne(PreviewLink, { id: linkId, organization: by.organizationId, postId });
  if (!link) throw errors.notFound('Preview link');
  if (link.createdByUserId !== by.userId && !can(by.role, 'posts.approve')) {
    throw new ApiError('forbidden_role', 'Only the member who shared this link, or one who may approve, revokes it.', {
      details: { role: by.role, action: 'posts.approve' },
    });
  }
  link.revokedAt ??= now;
  await em.flush();
}
