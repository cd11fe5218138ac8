// Admin CLI entry: `bun run cli <command> [flags] [--json]`. Talks to DATABASE_URL, or to the
// running embedded stack (npm start) when DATABASE_URL is unset.
// Exit codes: 0 done; 2 bad arguments (nothing written); 1 anything else (e.g. no database).
// What a command changes is recorded in the audit log (cli/audit.ts).
import { createOrm } from '../db/orm.ts';
import { ApiError } from '../lib/errors.ts';
import { ConfigError, loadConfig, parseCredentialsKey } from '../lib/config.ts';
import { embeddedDatabaseUrl, readEmbeddedCredentialsKey } from '../lib/embedded.ts';
import { helpText, parseCommand, UsageError } from './commands.ts';
import { runCommand } from './audit.ts';

function fail(code: number, message: string, json: boolean, details?: unknown): never {
  if (json) console.log(JSON.stringify({ error: { message, ...(details ? { details } : {}) } }));
  console.error(`error: ${message}`);
  process.exit(code);
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.includes('--json');
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help')) {
    console.log(helpText());
    return;
  }
  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(argv);
  } catch (e) {
    if (e instanceof UsageError) fail(2, `${e.message}\n\n${helpText()}`, json);
    throw e;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) fail(2, e.message, json);
    throw e;
  }
  const databaseUrl = config.databaseUrl ?? embeddedDatabaseUrl(config);
  let orm: Awaited<ReturnType<typeof createOrm>>;
  try {
    orm = await createOrm(databaseUrl, 2);
    await orm.em.getConnection().execute('select 1');
  } catch (e) {
    fail(
      1,
      `cannot reach the database at ${databaseUrl.replace(/:[^:@/]*@/, ':***@')}: ${(e as Error).message}. ` +
        'Start the service (npm start) or set DATABASE_URL.',
      json,
    );
  }
  const credentialsKey = () => {
    const raw = config.credentialsKey ? undefined : readEmbeddedCredentialsKey(config);
    if (config.credentialsKey) return config.credentialsKey;
    if (!raw) throw new UsageError('no CREDENTIALS_KEY: set it, or start the embedded stack once so .data/credentials-key exists');
    return parseCredentialsKey(raw);
  };
  try {
    const ctx = { em: orm.em.fork(), credentialsKey, outbound: config.outbound };
    const result = await runCommand(ctx, parsed.name, parsed.command, parsed.flags);
    console.log(parsed.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
  } catch (e) {
    if (e instanceof UsageError) fail(2, e.message, json);
    if (e instanceof ApiError && (e.code === 'validation_failed' || e.code === 'not_found')) {
      const fields = (e.details as { fields?: { path: string; message: string }[] } | undefined)?.fields;
      const detail = fields?.map((f) => `${f.path}: ${f.message}`).join('; ');
      fail(2, detail ? `${e.message} ${detail}` : e.message, json, e.details);
    }
    throw e;
  } finally {
    await orm.close();
  }
}

if (import.meta.main) {
  await main(process.argv.slice(2)).catch((e) => {
    console.error(`error: ${(e as Error).message}`);
    process.exit(1);
  });
}
