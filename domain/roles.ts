// A member's role in an organization, and what each role may do.
//
// Rules:
// - A person (user) belongs to one or more organizations, with one role in each (memberships).
// - owner: everything, including the organization's owners. admin: members (not owners),
//   channels, API keys, webhooks, settings, and everything an editor does. editor: posts, media,
//   queues, series and feeds, published without approval. contributor: creates and edits posts and media
//   that wait for approval before they are published. viewer: reads.
// - An organization always has an owner: the last one can neither leave nor lose the role.
// - An API key's scopes never exceed what its creator's role may do (KEY_SCOPES).
import { ROLES, type Role } from '../db/entities/index.ts';
import type { Scope } from '../lib/scopes.ts';

export { ROLES, type Role };

export const ACTIONS = [
  'read',
  'posts.write',
  'posts.publish',
  'posts.approve',
  'media.write',
  'queues.write',
  'series.write',
  'feeds.write',
  'channels.manage',
  'keys.manage',
  'webhooks.manage',
  'settings.manage',
  'members.manage',
  'owners.manage',
] as const;
export type Action = (typeof ACTIONS)[number];

const EDITOR: Action[] = [
  'read',
  'posts.write',
  'posts.publish',
  'posts.approve',
  'media.write',
  'queues.write',
  'series.write',
  'feeds.write',
];
const ADMIN: Action[] = [...EDITOR, 'channels.manage', 'keys.manage', 'webhooks.manage', 'settings.manage', 'members.manage'];

const ALLOWED: Record<Role, ReadonlySet<Action>> = {
  owner: new Set(ACTIONS),
  admin: new Set(ADMIN),
  editor: new Set(EDITOR),
  contributor: new Set<Action>(['read', 'posts.write', 'media.write']),
  viewer: new Set<Action>(['read']),
};

export function can(role: Role, action: Action): boolean {
  return ALLOWED[role].has(action);
}

/** The API key scopes a member of this role may give a key (and so hold through one). */
export const KEY_SCOPES: Record<Role, readonly Scope[]> = {
  owner: ['read', 'generate', 'publish', 'approve'],
  admin: ['read', 'generate', 'publish', 'approve'],
  editor: ['read', 'generate', 'publish', 'approve'],
  contributor: ['read', 'generate', 'publish'],
  viewer: ['read'],
};

export const isRole = (v: unknown): v is Role => typeof v === 'string' && (ROLES as readonly string[]).includes(v);
