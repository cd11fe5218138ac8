// Admin CLI commands (`bun run cli …`). Each returns one JSON-able object; arguments are
// checked before anything is written.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel } from '../db/entities/index.ts';
import type { AuditTarget } from '../domain/audit.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../services/api-keys.ts';
import { addChannel, channelView, checkChannelAddress, listChannels, probeChannel, setChannelStatus } from '../domain/channels.ts';
import { createOrganization, getOrganization, setApprovalSettings, setOrganizationPlan } from '../domain/organizations.ts';
import { setLinkDefaults } from '../domain/links/choice.ts';
import { createUser } from '../services/users.ts';
import { isRole, ROLES } from '../domain/access.ts';
import { addMember } from '../domain/members.ts';
import { errors } from '../lib/errors.ts';
import { createConnectors } from '../platforms/index.ts';
import type { AccountLimits } from '../platforms/types.ts';
import { DEFAULT_OUTBOUND, type OutboundPolicy } from '../lib/outbound.ts';

export type Flags = Record<string, string | boolean | undefined>;

export interface CommandContext {
  em: EntityManager;
  credentialsKey: () => Buffer;
  /** OUTBOUND_ALLOW_PRIVATE (lib/config.ts); public addresses only when absent. */
  outbound?: OutboundPolicy;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command's audit event (domain/audit.ts, cli/audit.ts): its action and resource type, the
 * organization it changed (a flag, the answer, or for a command given only an id a look-up) and
 * the resource's id. null: the command only reads.
 */
export type CliAudit = AuditTarget & {
  org: (f: Record<string, string>, r: Result, em: EntityManager) => string | null | Promise<string | null>;
  id: (f: Record<string, string>, r: Result) => string | null;
};

type Result = Record<string, unknown>;

const str = (v: unknown) => (typeof v === 'string' ? v : null);
const orgFlag = (f: Record<string, string>) => f.org ?? null;
const answerId = (_: Record<string, string>, r: Result) => str(r.id);

export interface Command {
  usage: string;
  audit: CliAudit | null;
  /** Flag names this command takes (besides --json); all string-valued. */
  flags: string[];
  required: string[];
  run: (ctx: CommandContext, f: Record<string, string>) => Promise<unknown>;
}

function parseIsoDate(value: string, flag: string): Date {
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime())) throw new UsageError(`--${flag} must be an ISO 8601 date-time`);
  return d;
}

function parseJsonObject(value: string, flag: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`--${flag} must be a JSON object`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--${flag} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

/**
 * Refuses an instance address the service must not contact (422 on that credential), and reads
 * per-account limits from the platform when a channel is added (a Mastodon instance's
 * max_characters). If the platform cannot be reached, the platform default stays and a warning
 * says so; --max-chars sets it by hand.
 */
async function readAccountLimits(
  platform: string,
  credentials: Record<string, unknown>,
  outbound = DEFAULT_OUTBOUND,
): Promise<AccountLimits> {
  const limits = await probeChannel(createConnectors({}, outbound), platform, credentials, outbound, (message) =>
    console.error(`warning: could not read the account's limits (${message}); using the platform default. Pass --max-chars to set it.`),
  );
  return limits;
}

/** A yes/no flag: undefined when absent. */
function yesNo(v: string | undefined, flag: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'yes' || v === 'no') return v === 'yes';
  throw errors.validation([{ path: flag, message: 'must be yes or no' }]);
}

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const COMMANDS: Record<string, Command> = {
  'org create': {
    audit: { action: 'organization.create', resource: 'organization', org: answerId, id: answerId },
    usage: 'org create --name NAME [--plan FREE|PRO|TEAM|ENTERPRISE]',
    flags: ['name', 'plan'],
    required: ['name'],
    run: ({ em }, f) => createOrganization(em, { name: f.name!, plan: f.plan }),
  },
  'org set-plan': {
    audit: { action: 'organization.plan_change', resource: 'organization', org: orgFlag, id: orgFlag },
    usage: 'org set-plan --org ID --plan FREE|PRO|TEAM|ENTERPRISE',
    flags: ['org', 'plan'],
    required: ['org', 'plan'],
    run: ({ em }, f) => setOrganizationPlan(em, f.org!, f.plan!),
  },
  'org set-approval': {
    audit: { action: 'settings.update', resource: 'organization', org: orgFlag, id: orgFlag },
    usage: 'org set-approval --org ID --approval none|contributors|everyone [--preview-decisions yes|no]',
    flags: ['org', 'approval', 'preview-decisions'],
    required: ['org', 'approval'],
    run: ({ em }, f) =>
      setApprovalSettings(em, f.org!, { approval: f.approval!, previewDecisions: yesNo(f['preview-decisions'], 'preview-decisions') }),
  },
  'org set-links': {
    audit: { action: 'settings.update', resource: 'organization', org: orgFlag, id: orgFlag },
    usage: 'org set-links --org ID --shorten yes|no [--utm yes|no] [--campaign NAME]',
    flags: ['org', 'shorten', 'utm', 'campaign'],
    required: ['org', 'shorten'],
    // The links choice of the organization's posts that give none (domain/links/choice.ts); a
    // campaign implies UTM parameters.
    run: async ({ em }, f) => {
      const utm = yesNo(f.utm, 'utm') ?? f.campaign !== undefined;
      if (!utm && f.campaign !== undefined) throw new UsageError('--campaign names the UTM campaign: it cannot go with --utm no');
      const choice = {
        shorten: yesNo(f.shorten, 'shorten')!,
        ...(utm ? { utm: f.campaign !== undefined ? { campaign: f.campaign } : {} } : {}),
      };
      return setLinkDefaults(em, f.org!, choice);
    },
  },
  'key create': {
    audit: { action: 'key.create', resource: 'api_key', org: orgFlag, id: answerId },
    usage:
      'key create --org ID --name NAME --scopes read,generate,publish,approve [--channels all|ID,ID] [--expires ISO] [--requires-approval yes|no]',
    flags: ['org', 'name', 'scopes', 'channels', 'expires', 'requires-approval'],
    required: ['org', 'name', 'scopes'],
    run: ({ em }, f) => {
      const channels = !f.channels || f.channels === 'all' ? 'all' : list(f.channels);
      const expiresAt = f.expires ? parseIsoDate(f.expires, 'expires') : null;
      const requiresApproval = yesNo(f['requires-approval'], 'requires-approval') ?? false;
      return createApiKey(em, { organizationId: f.org!, name: f.name!, scopes: list(f.scopes!), channels, expiresAt, requiresApproval });
    },
  },
  'key list': {
    audit: null,
    usage: 'key list --org ID',
    flags: ['org'],
    required: ['org'],
    run: async ({ em }, f) => ({ data: await listApiKeys(em, f.org!) }),
  },
  'key revoke': {
    audit: { action: 'key.revoke', resource: 'api_key', org: (_f, r) => str(r.organizationId), id: answerId },
    usage: 'key revoke --id ID',
    flags: ['id'],
    required: ['id'],
    run: ({ em }, f) => revokeApiKey(em, f.id!),
  },
  'channel add': {
    audit: { action: 'channel.connect', resource: 'channel', org: orgFlag, id: answerId },
    usage: 'channel add --org ID --platform PLATFORM --name NAME --credentials JSON [--max-chars N]',
    flags: ['org', 'platform', 'name', 'credentials', 'max-chars'],
    required: ['org', 'platform', 'name', 'credentials'],
    run: async ({ em, credentialsKey, outbound }, f) => {
      const credentials = parseJsonObject(f.credentials!, 'credentials');
      let maxChars: number | undefined;
      if (f['max-chars'] !== undefined) {
        maxChars = Number(f['max-chars']);
        if (!Number.isInteger(maxChars) || maxChars <= 0) throw new UsageError('--max-chars must be a positive integer');
      }
      let limits: AccountLimits = {};
      if (maxChars === undefined) maxChars = (limits = await readAccountLimits(f.platform!, credentials, outbound)).maxChars;
      else await checkChannelAddress(f.platform!, credentials, outbound ?? DEFAULT_OUTBOUND);
      const channel = await addChannel(em, credentialsKey(), {
        organizationId: f.org!,
        platform: f.platform!,
        name: f.name!,
        credentials,
        maxChars,
        charactersReservedPerUrl: limits.charactersReservedPerUrl,
      });
      return { ...channel, organizationId: f.org! };
    },
  },
  'channel list': {
    audit: null,
    usage: 'channel list --org ID',
    flags: ['org'],
    required: ['org'],
    run: async ({ em }, f) => {
      await getOrganization(em, f.org!);
      return { data: (await listChannels(em, f.org!)).map(channelView) };
    },
  },
  'user create': {
    audit: { action: 'member.add', resource: 'member', org: orgFlag, id: answerId },
    usage: 'user create --org ID --email EMAIL --password PASSWORD [--role owner|admin|editor|contributor|viewer]',
    flags: ['org', 'email', 'password', 'role'],
    required: ['org', 'email', 'password'],
    // A member of the organization who signs in to the web application (password hashed with
    // Argon2id), with a role there (domain/access.ts; default owner).
    run: async ({ em }, f) => {
      if (f.role !== undefined && !isRole(f.role))
        throw errors.validation([{ path: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
      return createUser(em, { organizationId: f.org!, email: f.email!, password: f.password!, role: f.role });
    },
  },
  'member add': {
    audit: { action: 'member.add', resource: 'member', org: orgFlag, id: (_f, r) => str(r.userId) },
    usage: 'member add --org ID --email EMAIL --role owner|admin|editor|contributor|viewer',
    flags: ['org', 'email', 'role'],
    required: ['org', 'email', 'role'],
    // A person who already signs in joins another organization (they switch between them in the web app).
    run: async ({ em }, f) => {
      if (!isRole(f.role)) throw errors.validation([{ path: 'role', message: `must be one of ${ROLES.join(', ')}` }]);
      await getOrganization(em, f.org!);
      return addMember(em, f.org!, f.email!, f.role);
    },
  },
  'channel set-status': {
    audit: {
      action: 'channel.update',
      resource: 'channel',
      org: async (f, _r, em) => (await em.findOne(Channel, { id: f.id! }))?.organization ?? null,
      id: answerId,
    },
    usage: 'channel set-status --id ID --status active|reauth_required|disabled',
    flags: ['id', 'status'],
    required: ['id', 'status'],
    run: ({ em }, f) => setChannelStatus(em, f.id!, f.status!),
  },
};

export function helpText(): string {
  return ['usage: bun run cli <command> [flags] [--json]', '', 'commands:', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join(
    '\n',
  );
}

/** Splits argv into a command and its flags, or throws UsageError. Accepts `--flag value` and `--flag=value`. */
export function parseCommand(argv: string[]): { name: string; command: Command; flags: Record<string, string>; json: boolean } {
  const words: string[] = [];
  let i = 0;
  while (i < argv.length && !argv[i]!.startsWith('-') && words.length < 2) words.push(argv[i++]!);
  const name = words.join(' ');
  const command = COMMANDS[name];
  if (!command) throw new UsageError(name ? `unknown command "${name}"` : 'no command given');
  const flags: Record<string, string> = {};
  let json = false;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') {
      json = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!command.flags.includes(flag)) throw new UsageError(`unknown flag --${flag} for "${name}"`);
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${flag} needs a value`);
      i++;
    }
    // An empty value is an error, not "flag absent": `--channels ""` must not mean all channels.
    if (value.trim() === '') throw new UsageError(`--${flag} needs a value`);
    if (flag in flags) throw new UsageError(`--${flag} given twice`);
    flags[flag] = value;
  }
  const missing = command.required.filter((f) => !flags[f]);
  if (missing.length) throw new UsageError(`missing ${missing.map((f) => `--${f}`).join(', ')}\nusage: bun run cli ${command.usage}`);
  return { name, command, flags, json };
}

export { errors };
