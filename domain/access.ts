// Who may do what: the one table of actions, the principals that act, and `authorize`.
//
// Rules:
// - Every operation of every interface (an /v1 route, a web route, an MCP tool, a CLI command)
//   names one action of ACCESS. The action says which member roles may do it and which key scope
//   it needs (null: never through a key — web app and CLI only). Nothing else decides it.
// - Principals:
//   - a member signed in to the web app: their role in the organization now;
//   - an API key: its scopes, and, when a member made it, that member's role now (read at every
//     use): a key never does more than its maker may. A key made with the CLI has no maker and is
//     held to its scopes. A maker who is no longer a member holds nothing (their keys are revoked
//     with them; this is the second line);
//   - a reviewer holding a preview link (domain/posts/preview-links.ts): may read the post and,
//     if the link decides, decide it on behalf of the member who made the link, while that member
//     may still approve;
//   - the operator (the admin CLI): everything;
//   - a scheduled maker (a feed's or a series' maker) is its key or member, resolved again at
//     every run (domain/makers.ts).
// - Four eyes: a post's approval is never decided by the person who asked for it, whatever the
//   path: the same member, a key that member made, or a link that member made (a key made with
//   the CLI is its own person). `403` saying who may decide.
// - Refusals: a member's is `403 forbidden_role`, a key's `403 forbidden_scope` (SPEC.md's code),
//   each naming the action, the scope or the role.
import { ROLES, type Role } from '../db/entities/index.ts';
import { ApiError, errors } from '../lib/errors.ts';
import type { Scope } from '../lib/scopes.ts';

export { ROLES, type Role };

const EVERYONE = ROLES;
const WRITERS: readonly Role[] = ['owner', 'admin', 'editor', 'contributor'];
const EDITORS: readonly Role[] = ['owner', 'admin', 'editor'];
const ADMINS: readonly Role[] = ['owner', 'admin'];

/** Each action: the roles that may do it, the key scope it needs (null: not through a key), and what it covers. */
export const ACCESS = {
  read: { roles: EVERYONE, scope: 'read', covers: 'read posts, media, channels, queues, series, feeds, tags, comments and figures' },
  'posts.write': {
    roles: WRITERS,
    scope: 'publish',
    covers:
      'create, edit and check posts (a contributor’s wait for approval), put the organization’s tags on them, import them, read their figures anew, share preview links',
  },
  'posts.publish': { roles: EDITORS, scope: 'publish', covers: 'cancel, delete and retry posts' },
  'posts.approve': {
    roles: EDITORS,
    scope: 'approve',
    covers: 'approve or reject another’s post or reply to a comment; share preview links that decide',
  },
  'posts.generate': { roles: WRITERS, scope: 'generate', covers: 'drafts and alt text from the model endpoint' },
  'media.write': { roles: WRITERS, scope: 'publish', covers: 'upload media' },
  'queues.write': { roles: EDITORS, scope: 'publish', covers: 'change a channel’s posting queue' },
  'series.write': { roles: EDITORS, scope: 'publish', covers: 'create, change, resume and delete recurring series' },
  'feeds.write': { roles: EDITORS, scope: 'publish', covers: 'create, change, read, resume and delete feeds' },
  'tags.manage': { roles: EDITORS, scope: 'publish', covers: 'make, rename, recolour and delete the organization’s tags' },
  'comments.reply': {
    roles: WRITERS,
    scope: 'publish',
    covers: 'answer comments (a contributor’s replies wait for approval, as their posts do)',
  },
  'comments.manage': {
    roles: EDITORS,
    scope: 'publish',
    covers: 'mark comments read or unread, give them to a member, hide and show them again, delete replies',
  },
  'webhooks.manage': { roles: ADMINS, scope: 'publish', covers: 'webhook endpoints, their secrets and deliveries' },
  'webhooks.read': { roles: ADMINS, scope: 'read', covers: 'read webhook endpoints and their deliveries' },
  'audit.read': { roles: ADMINS, scope: 'read', covers: 'read the audit log' },
  'channels.manage': { roles: ADMINS, scope: null, covers: 'connect and reconnect channels' },
  'keys.manage': { roles: ADMINS, scope: null, covers: 'make and revoke API keys' },
  'settings.manage': { roles: ADMINS, scope: null, covers: 'the organization’s settings (approval)' },
  'members.manage': { roles: ADMINS, scope: null, covers: 'invite members, change roles (not an owner’s), remove members' },
  'owners.manage': { roles: ['owner'], scope: null, covers: 'make, change and remove owners' },
} as const satisfies Record<string, { roles: readonly Role[]; scope: Scope | null; covers: string }>;

export type Action = keyof typeof ACCESS;
export const ACTIONS = Object.keys(ACCESS) as Action[];

export const isAction = (v: unknown): v is Action => typeof v === 'string' && Object.hasOwn(ACCESS, v);
export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);

export function can(role: Role, action: Action): boolean {
  return (ACCESS[action].roles as readonly Role[]).includes(role);
}

/** The key scope an action needs; null: the action is never done through a key. */
export const scopeOf = (action: Action): Scope | null => ACCESS[action].scope;

/** Every role may do it: a key's maker need not be looked up. */
export const everyRoleMay = (action: Action): boolean => ROLES.every((r) => can(r, action));

/** The API key scopes a member of this role may give a key (and so hold through one): those of the actions the role may do. */
export const KEY_SCOPES: Record<Role, readonly Scope[]> = Object.fromEntries(
  ROLES.map((role) => [role, [...new Set(ACTIONS.filter((a) => can(role, a)).flatMap((a) => (ACCESS[a].scope ? [ACCESS[a].scope] : [])))]]),
) as Record<Role, Scope[]>;

/** The member behind a key or a link, as they stand now (role null: no longer a member). */
export interface Maker {
  userId: string;
  role: Role | null;
}

export type Principal =
  | { type: 'member'; organizationId: string; userId: string; name: string; role: Role }
  | { type: 'api_key'; organizationId: string; keyId: string; name: string; scopes: readonly string[]; maker: Maker | null }
  | { type: 'reviewer'; organizationId: string; linkId: string; name: string; maker: Maker }
  | { type: 'operator'; name: string };

export type MemberPrincipal = Extract<Principal, { type: 'member' }>;

/** The actions a reviewer's link may stand for. */
const REVIEWER_ACTIONS: readonly Action[] = ['read', 'posts.approve'];

/** Throws the refusal when `p` may not do `action` (rules above); an API key's maker must be read into `p` unless everyRoleMay(action). */
export function authorize(p: Principal, action: Action): void {
  switch (p.type) {
    case 'operator':
      return;
    case 'member':
      if (!can(p.role, action)) throw errors.forbiddenRole(p.role, action);
      return;
    case 'api_key': {
      const scope = scopeOf(action);
      if (scope === null) throw keyRefused(`This is done in the web app, not with an API key (${action}).`, { action });
      if (!p.scopes.includes(scope)) throw errors.forbiddenScope(scope);
      if (!p.maker || everyRoleMay(action)) return;
      if (p.maker.role === null)
        throw keyRefused('The member who made this API key is no longer a member.', { requiredScope: scope, action });
      if (!can(p.maker.role, action)) {
        throw keyRefused(`This API key belongs to a member whose role (${p.maker.role}) may not do this (${action}).`, {
          requiredScope: scope,
          role: p.maker.role,
          action,
        });
      }
      return;
    }
    case 'reviewer':
      if (!REVIEWER_ACTIONS.includes(action) || p.maker.role === null || !can(p.maker.role, action)) {
        throw new ApiError('forbidden_role', 'This preview link may not do this; ask the team for a new one.', {
          details: { action, reason: 'link' },
        });
      }
      return;
  }
}

const keyRefused = (message: string, details: Record<string, unknown>) => new ApiError('forbidden_scope', message, { details });

/** A person, for four eyes: a member (also through their key or link), or a key of no member. */
export type Person = `user:${string}` | `key:${string}`;

export function personOf(p: Principal): Person | null {
  switch (p.type) {
    case 'member':
      return `user:${p.userId}`;
    case 'api_key':
      return p.maker ? `user:${p.maker.userId}` : `key:${p.keyId}`;
    case 'reviewer':
      return `user:${p.maker.userId}`;
    case 'operator':
      return null;
  }
}

/** Four eyes: the one who asked for a post's approval never decides it. */
export function authorizeDecision(p: Principal, requester: Person | null): void {
  authorize(p, 'posts.approve');
  if (requester === null || personOf(p) !== requester) return;
  const who = `another member who may approve (${ACCESS['posts.approve'].roles.join(', ')})`;
  const message =
    p.type === 'reviewer'
      ? `This link was shared by the member who asked for the post's approval; ${who} must decide it.`
      : `You asked for this post's approval; ${who} must decide it.`;
  throw new ApiError(p.type === 'api_key' ? 'forbidden_scope' : 'forbidden_role', message, {
    details: { action: 'posts.approve', reason: 'own_post', mayDecide: ACCESS['posts.approve'].roles },
  });
}
