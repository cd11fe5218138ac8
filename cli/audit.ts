// The audit of the admin CLI (domain/audit.ts): every command names its action here (null: it
// only reads), and runCommand records each one that succeeded with the operator as its actor (the
// operating-system user; a CLI has no client address). Secrets among the flags (a password,
// credentials) are never recorded.
import { hostname, userInfo } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel } from '../db/entities/index.ts';
import { recordAudit, type AuditTarget } from '../domain/audit.ts';
import type { Command, CommandContext } from './commands.ts';

type Result = Record<string, unknown>;

type CliAuditTarget = AuditTarget & {
  /** The organization changed: a flag, the answer, or (for a command given only an id) a look-up. */
  org: (f: Record<string, string>, r: Result, em: EntityManager) => string | null | Promise<string | null>;
  id: (f: Record<string, string>, r: Result) => string | null;
};

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const orgFlag = (f: Record<string, string>) => f.org ?? null;
const answerId = (_: Record<string, string>, r: Result) => str(r.id);

export const CLI_AUDIT: Record<string, CliAuditTarget | null> = {
  'org create': { action: 'organization.create', resource: 'organization', org: answerId, id: answerId },
  'org set-plan': { action: 'organization.plan_change', resource: 'organization', org: orgFlag, id: orgFlag },
  'org set-approval': { action: 'settings.update', resource: 'organization', org: orgFlag, id: orgFlag },
  'key create': { action: 'key.create', resource: 'api_key', org: orgFlag, id: answerId },
  'key list': null,
  'key revoke': { action: 'key.revoke', resource: 'api_key', org: (_f, r) => str(r.organizationId), id: answerId },
  'channel add': { action: 'channel.connect', resource: 'channel', org: orgFlag, id: answerId },
  'channel list': null,
  'channel set-status': {
    action: 'channel.update',
    resource: 'channel',
    org: async (f, _r, em) => (await em.findOne(Channel, { id: f.id! }))?.organization ?? null,
    id: answerId,
  },
  'user create': { action: 'member.add', resource: 'member', org: orgFlag, id: answerId },
  'member add': { action: 'member.add', resource: 'member', org: orgFlag, id: (_f, r) => str(r.userId) },
};

/** Flags worth reading in the log; the rest (a password, credentials) stay out of it. */
const SHOWN_FLAGS = [
  'name',
  'plan',
  'approval',
  'preview-decisions',
  'scopes',
  'channels',
  'expires',
  'requires-approval',
  'platform',
  'email',
  'role',
  'status',
];

/** Runs a command and records what it changed. */
export async function runCommand(ctx: CommandContext, name: string, command: Command, flags: Record<string, string>): Promise<unknown> {
  const result = await command.run(ctx, flags);
  const target = CLI_AUDIT[name];
  if (target === undefined) throw new Error(`no audit action for the command "${name}": cli/audit.ts`);
  if (target === null) return result;
  const r = (result ?? {}) as Result;
  const em = ctx.em.fork();
  const organizationId = await target.org(flags, r, em);
  // Every changing command names an organization it found; none found means nothing was changed.
  if (!organizationId) return result;
  await recordAudit(em, {
    organizationId,
    actor: { type: 'operator', id: null, name: userInfo().username },
    action: target.action,
    resource: target.resource,
    resourceId: target.id(flags, r),
    origin: { ip: null, userAgent: null },
    details: {
      command: name,
      host: hostname(),
      ...Object.fromEntries(Object.entries(flags).filter(([k]) => SHOWN_FLAGS.includes(k))),
    },
  });
  return result;
}
