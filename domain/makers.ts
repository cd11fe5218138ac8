// The maker of a feed or a series, resolved again at every run: a feed posts and a series makes
// an occurrence only while the one who made it may still do so.
//
// Rules:
// - A feed's or a series' maker is the API key that made it (held to the key's scopes and to its
//   member's role now, domain/access.ts), else the member who made it in the web app.
// - At every run (a feed's read, a series' occurrence) the maker is resolved anew. It stands when
//   the key is neither revoked nor expired, its member (if any) still belongs to the organization,
//   and the principal is allowed both the feed's or series' action (`feeds.write`,
//   `series.write`) and `posts.write`. Otherwise the run makes nothing and the feed or series is
//   paused with the reason (pauseFeed / pauseSeries in their modules: `pausedReason`, a
//   `feed.paused` / `series.paused` webhook, an audit event by the service itself).
// - The posts it makes are its maker's: their approval is what the maker's own posts would need
//   now (domain/posts/approval.ts). A maker is never "nobody": one of neither kind (made before
//   makers were recorded) is judged by the organization's setting alone.
// - Resuming (PATCH status active) is a take-over: the member or key that resumes becomes the maker.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApprovalSetting } from '../db/entities/index.ts';
import { recordAudit } from './audit.ts';
import type { WebhookEvents } from './webhooks/outbox.ts';
import { sql } from '../db/sql.ts';
import { ApiError } from '../lib/errors.ts';
import { authorize, type Action, type Principal, type Role } from './access.ts';
import type { Requester } from './posts/approval.ts';

export interface MadeBy {
  organizationId: string;
  apiKeyId: string | null;
  createdByUserId: string | null;
}

export type Standing = { stands: true; requester: Requester } | { stands: false; reason: string };

/** Whether the maker still stands for `action` (rules above), and as whom its posts are made. */
export async function makerStanding(em: EntityManager, made: MadeBy, action: Action, now: Date): Promise<Standing> {
  const [org] = await sql<{ approval: ApprovalSetting }>(em, 'select approval from organizations where id = ?', [made.organizationId]);
  const setting = org?.approval ?? 'contributors';
  if (made.apiKeyId) {
    const [k] = await sql<{
      name: string;
      prefix: string;
      scopes: string[];
      revoked_at: Date | null;
      expires_at: Date | null;
      requires_approval: boolean;
      created_by_user_id: string | null;
      role: Role | null;
    }>(
      em,
      `select k.name, k.prefix, k.scopes, k.revoked_at, k.expires_at, k.requires_approval, k.created_by_user_id, m.role
         from api_keys k left join memberships m on m.organization_id = k.organization_id and m.user_id = k.created_by_user_id
       where k.id = ? and k.organization_id = ?`,
      [made.apiKeyId, made.organizationId],
    );
    if (!k) return { stands: false, reason: 'The API key that made it no longer exists.' };
    const named = `The API key “${k.name}” (${k.prefix}…) that made it`;
    if (k.revoked_at) return { stands: false, reason: `${named} was revoked.` };
    if (k.expires_at && new Date(k.expires_at).getTime() <= now.getTime()) return { stands: false, reason: `${named} has expired.` };
    const principal: Principal = {
      type: 'api_key',
      organizationId: made.organizationId,
      keyId: made.apiKeyId,
      name: k.name,
      scopes: k.scopes,
      maker: k.created_by_user_id ? { userId: k.created_by_user_id, role: k.role } : null,
    };
    const refused = refusal(principal, action);
    if (refused) return { stands: false, reason: `${named} may no longer do this: ${refused}` };
    return {
      stands: true,
      requester: {
        actor: { type: 'api_key', id: made.apiKeyId, name: k.name },
        role: k.role,
        requiresApproval: k.requires_approval,
        setting,
      },
    };
  }
  if (made.createdByUserId) {
    const [m] = await sql<{ email: string; role: Role }>(
      em,
      'select u.email, m.role from memberships m join users u on u.id = m.user_id where m.organization_id = ? and m.user_id = ?',
      [made.organizationId, made.createdByUserId],
    );
    if (!m) return { stands: false, reason: 'The member who made it is no longer a member of the organization.' };
    const principal: Principal = {
      type: 'member',
      organizationId: made.organizationId,
      userId: made.createdByUserId,
      name: m.email,
      role: m.role,
    };
    const refused = refusal(principal, action);
    if (refused) return { stands: false, reason: `The member who made it (${m.email}) may no longer do this: ${refused}` };
    return {
      stands: true,
      requester: { actor: { type: 'member', id: made.createdByUserId, name: m.email }, role: m.role, requiresApproval: false, setting },
    };
  }
  return {
    stands: true,
    requester: { actor: { type: 'system', id: null, name: 'Postpilot' }, role: null, requiresApproval: false, setting },
  };
}

/** Why the principal may not make posts through a feed or series, or null. */
function refusal(p: Principal, action: Action): string | null {
  try {
    authorize(p, action);
    authorize(p, 'posts.write');
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return err.message;
    throw err;
  }
}

/** What is paused when its maker no longer stands: a feed or a series. */
export interface Made {
  kind: 'feed' | 'series';
  id: string;
  organizationId: string;
  /** The webhook event's data after the pause, read in its transaction. */
  data: (tx: EntityManager) => Promise<Record<string, unknown>>;
}

const PAUSED = {
  feed: { table: 'feeds', event: 'feed.paused', audit: 'feed.pause' },
  series: { table: 'series', event: 'series.paused', audit: 'series.pause' },
} as const;

/**
 * Pauses an active feed or series whose maker no longer stands, in one transaction: its status
 * and `paused_reason`, the `feed.paused` / `series.paused` webhook (with `reason`), and an audit
 * event whose actor is the service. Paused already (a concurrent run): nothing more.
 */
export async function pauseForMaker(em: EntityManager, events: WebhookEvents, made: Made, reason: string, now: Date): Promise<void> {
  const kind = PAUSED[made.kind];
  let deliveries: string[] = [];
  await em.fork().transactional(async (tx) => {
    const paused = await sql<{ id: string }>(
      tx,
      `update ${kind.table} set status = 'paused', paused_reason = ?, updated_at = ? where id = ? and status = 'active' returning id`,
      [reason, now, made.id],
    );
    if (!paused.length) return;
    deliveries = await events.write(tx, made.organizationId, kind.event, async () => ({ ...(await made.data(tx)), reason }));
    await recordAudit(tx, {
      organizationId: made.organizationId,
      actor: { type: 'system', id: null, name: 'Postpilot' },
      action: kind.audit,
      resource: made.kind,
      resourceId: made.id,
      origin: { ip: null, userAgent: null },
      details: { reason },
    });
  });
  await events.dispatch(em.fork(), deliveries);
}
