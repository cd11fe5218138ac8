import type { EntityManager } from '@mikro-orm/postgresql';
import { admissionChanged } from '../db/admission-changes.ts';
import { ApiKey, Channel, Organization, type IApiKey, type IOrganization } from '../db/entities/index.ts';
import { generateApiKey, hashApiKey, hashesEqual, KEY_PATTERN } from '../lib/crypto.ts';
import { ApiError, errors, type FieldError } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { isScope, SCOPES, type Scope } from '../lib/scopes.ts';
import { getOrganization } from '../domain/organizations.ts';
import { authorize, everyRoleMay, KEY_SCOPES, scopeOf, type Action, type Maker, type Principal } from '../domain/access.ts';
import type { Caller } from './account.ts';
import { sql } from '../db/sql.ts';
import type { Role } from '../db/entities/index.ts';

/** The member who made a key, as they stand now (role null: no longer a member); null for a key made with the CLI. */
export async function keyMaker(em: EntityManager, keyId: string): Promise<Maker | null> {
  const [row] = await sql<{ user_id: string | null; role: Role | null }>(
    em,
    `select k.created_by_user_id as user_id, m.role from api_keys k
       left join memberships m on m.organization_id = k.organization_id and m.user_id = k.created_by_user_id
     where k.id = ?`,
    [keyId],
  );
  return row?.user_id ? { userId: row.user_id, role: row.role } : null;
}

/**
 * The calling key allowed `action` (domain/access.ts authorize): its scope, and its maker's role
 * now, read only when some role may not do the action. Every interface that takes a key (the
 * API's routes, the MCP tools) asks here.
 */
export async function authorizeCaller(caller: Pick<Caller, 'key' | 'principal'>, action: Action): Promise<void> {
  const scope = scopeOf(action);
  if (scope !== null && !caller.key.scopes.includes(scope)) throw errors.forbiddenScope(scope);
  if (scope === null || !everyRoleMay(action)) authorize(await caller.principal(), action);
}

/** A key as a principal (domain/access.ts), its maker read now. */
export async function keyPrincipal(
  em: EntityManager,
  key: Pick<IApiKey, 'id' | 'organization' | 'name' | 'prefix' | 'scopes'>,
): Promise<Principal> {
  return {
    type: 'api_key',
    organizationId: key.organization,
    keyId: key.id,
    name: key.name,
    scopes: key.scopes,
    maker: await keyMaker(em, key.id),
  };
}

export interface CreateKeyInput {
  organizationId: string;
  name: string;
  scopes: string[];
  /** 'all' or a list of channel ids of that organization. */
  channels: 'all' | string[];
  expiresAt?: Date | null;
  /** The member making it in the web app: its scopes stay within what their role may hold (domain/access.ts KEY_SCOPES). */
  createdBy?: { userId: string; role: Role };
  /** Posts made with it wait for approval (domain/posts/approval.ts). */
  requiresApproval?: boolean;
}

export interface KeyView {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  channels: 'all' | string[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

export const keyChannels = (k: Pick<IApiKey, 'channelIds'>): 'all' | string[] =>
  k.channelIds === null || k.channelIds === undefined ? 'all' : [...k.channelIds];

export const keyView = (k: IApiKey): KeyView => ({
  id: k.id,
  organizationId: k.organization,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes as Scope[],
  channels: keyChannels(k),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  createdAt: k.createdAt.toISOString(),
});

/** Creates a key; the full key is returned here and never again (only its hash is stored). */
export async function createApiKey(
  em: EntityManager,
  input: CreateKeyInput,
  now = new Date(),
): Promise<{ id: string; key: string; prefix: string }> {
  const fields: FieldError[] = [];
  const name = input.name.trim();
  if (!name || name.length > 200) fields.push({ path: 'name', message: 'must be 1 to 200 characters' });
  const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
  if (!scopes.length || !scopes.every(isScope)) {
    fields.push({ path: 'scopes', message: `must be a non-empty list of ${SCOPES.join(', ')}` });
  } else if (input.createdBy) {
    const allowed = KEY_SCOPES[input.createdBy.role];
    if (!scopes.every((s) => allowed.includes(s))) {
      fields.push({ path: 'scopes', message: `your role (${input.createdBy.role}) gives a key at most: ${allowed.join(', ')}` });
    }
  }
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    fields.push({ path: 'expiresAt', message: 'must be in the future' });
  }
  if (input.channels !== 'all' && input.channels.length === 0) {
    fields.push({ path: 'channels', message: 'must be "all" or at least one channel id' });
  }
  if (fields.length) throw errors.validation(fields);
  await getOrganization(em, input.organizationId);
  let channelIds: string[] | null = null;
  if (input.channels !== 'all') {
    channelIds = [...new Set(input.channels)];
    const found = await em.find(Channel, { id: { $in: channelIds }, organization: input.organizationId });
    const missing = channelIds.filter((id) => !found.some((c) => c.id === id));
    if (missing.length) {
      throw errors.validation([{ path: 'channels', message: `unknown channel(s) for this organization: ${missing.join(', ')}` }]);
    }
  }
  const material = generateApiKey();
  const key = em.create(ApiKey, {
    id: newId('key'),
    organization: input.organizationId,
    name,
    hash: material.hash,
    prefix: material.prefix,
    scopes,
    channelIds,
    expiresAt: input.expiresAt ?? null,
    createdByUserId: input.createdBy?.userId ?? null,
    requiresApproval: input.requiresApproval === true,
  });
  await em.flush();
  return { id: key.id, key: material.key, prefix: material.prefix };
}

export async function listApiKeys(em: EntityManager, organizationId: string): Promise<KeyView[]> {
  await getOrganization(em, organizationId);
  const keys = await em.find(ApiKey, { organization: organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return keys.map(keyView);
}

export async function revokeApiKey(em: EntityManager, id: string, now = new Date()): Promise<KeyView> {
  const key = await em.findOne(ApiKey, { id });
  if (!key) throw new ApiError('not_found', `API key ${id} not found.`);
  key.revokedAt ??= now;
  await em.flush();
  admissionChanged({ keyId: key.id });
  return keyView(key);
}

export interface AuthenticatedKey {
  key: IApiKey;
  organization: IOrganization;
}

/**
 * Resolves a bearer key to its key row and organization, or throws 401 (scripts/dev.ts; API
 * requests are admitted by services/admission.ts, with the same checks). The lookup is by hash
 * (an index seek that reveals nothing about near misses); the stored hash is then compared in
 * constant time.
 */
export async function authenticateKey(em: EntityManager, rawKey: string, now = new Date()): Promise<AuthenticatedKey> {
  if (!KEY_PATTERN.test(rawKey)) throw errors.unauthorized('The API key is malformed.');
  const hash = hashApiKey(rawKey);
  const key = await em.findOne(ApiKey, { hash });
  if (!key || !hashesEqual(key.hash, hash)) throw errors.unauthorized('The API key is not recognised.');
  if (key.revokedAt) throw errors.unauthorized('The API key has been revoked.');
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) throw errors.unauthorized('The API key has expired.');
  const organization = await em.findOneOrFail(Organization, { id: key.organization });
  return { key, organization };
}
