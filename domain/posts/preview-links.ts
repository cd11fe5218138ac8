// Shareable read-only preview links of a post, for a reviewer without an account.
//
// Rules:
// - A link is signed, not stored: `<payload>.<signature>`, the payload base64url JSON
//   {post, org, exp (seconds), decide (0|1)}, the signature HMAC-SHA256 of the payload under a key
//   derived from the service's CREDENTIALS_KEY. A changed byte anywhere → not found; past `exp` →
//   expired (410). Rotating CREDENTIALS_KEY ends every link.
// - Any member who may write posts makes one for a post of their organization, valid 1 to 30 days
//   (7 by default).
// - It shows the post as each channel would publish it (its text per channel, media, thread),
//   its status and approval; never the organization's other posts, keys or settings.
// - It carries approve/reject buttons only when made with `decide` and while the organization
//   allows reviewers to decide (Settings → Approval); both are checked at the decision, which goes
//   through the same decideApproval as the API's (the reviewer's name is the actor's name).
// - A deleted post's link finds nothing (404).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PREVIEW_DAYS = { default: 7, min: 1, max: 30 } as const;

export interface PreviewGrant {
  postId: string;
  organizationId: string;
  expiresAt: Date;
  /** Approve/reject buttons (still subject to the organization's setting). */
  decide: boolean;
}

const signingKey = (credentialsKey: Buffer) => createHmac('sha256', credentialsKey).update('preview-links/v1').digest();

const sign = (credentialsKey: Buffer, payload: string) =>
  createHmac('sha256', signingKey(credentialsKey)).update(payload).digest('base64url');

export function signPreviewLink(credentialsKey: Buffer, grant: PreviewGrant): string {
  const payload = Buffer.from(
    JSON.stringify({
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
  let body: { post?: unknown; org?: unknown; exp?: unknown; decide?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (typeof body.post !== 'string' || typeof body.org !== 'string' || typeof body.exp !== 'number') return 'invalid';
  const expiresAt = new Date(body.exp * 1000);
  if (expiresAt.getTime() <= now.getTime()) return 'expired';
  return { postId: body.post, organizationId: body.org, expiresAt, decide: body.decide === 1 };
}
