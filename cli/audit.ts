// The audit of the admin CLI (domain/audit.ts): every command names its action in its own entry
// (cli/commands.ts `audit`; null: it only reads), and runCommand records each one that succeeded
// with the operator as its actor (the operating-system user; a CLI has no client address).
// Secrets among the flags (a password, credentials) are never recorded.
import { hostname, userInfo } from 'node:os';
import { recordAudit } from '../domain/audit.ts';
import type { Command, CommandContext } from './commands.ts';

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
  const target = command.audit;
  if (target === undefined) throw new Error(`no audit action for the command "${name}": its entry's audit (cli/commands.ts)`);
  if (target === null) return result;
  const r = (result ?? {}) as Record<string, unknown>;
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
