// Where the embedded default keeps its state (all under DATA_DIR, `.data` by default), shared by
// the dev launcher and the CLI so the CLI finds a running embedded stack without configuration.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Config } from './config.ts';

export const EMBEDDED_DB_NAME = 'postpilot';
export const EMBEDDED_DB_USER = 'postgres';
export const EMBEDDED_DB_PASSWORD = 'postgres';

export function embeddedPaths(config: Pick<Config, 'dataDir'>) {
  const root = resolve(config.dataDir);
  return {
    root,
    pg: resolve(root, 'pg'),
    temporalDb: resolve(root, 'temporal.sqlite'),
    /** The launcher's Temporal dev server's pid while it runs (scripts/embedded/leftovers.ts). */
    temporalPid: resolve(root, 'temporal.pid'),
    devApiKey: resolve(root, 'dev-api-key'),
    credentialsKey: resolve(root, 'credentials-key'),
    logs: resolve(root, 'logs'),
  };
}

/**
 * SQLite settings of the embedded Temporal dev server's file (docs/decisions.md "The embedded
 * Temporal's SQLite file"). WAL: a commit appends to the log instead of rewriting pages through a
 * rollback journal — most of the gain over the CLI's default. synchronous=FULL: the log is synced
 * at every commit, so a workflow start the server acknowledged survives a power loss or an OS
 * crash too (NORMAL would sync only at checkpoints: ~15% more raw starts/s here, but creates
 * through the API are no faster, and a lost acknowledged start leaves a post without workflow).
 */
export const EMBEDDED_TEMPORAL_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=full'];

export function embeddedDatabaseUrl(config: Pick<Config, 'embeddedPgPort'>): string {
  return `postgres://${EMBEDDED_DB_USER}:${EMBEDDED_DB_PASSWORD}@127.0.0.1:${config.embeddedPgPort}/${EMBEDDED_DB_NAME}`;
}

/** Writes a secret file readable by its owner only. */
export function writeSecret(path: string, value: string): void {
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** The embedded stack's credential-encryption key: generated once, then reused. */
export function ensureCredentialsKey(config: Pick<Config, 'dataDir'>): string {
  const { root, credentialsKey } = embeddedPaths(config);
  mkdirSync(root, { recursive: true });
  if (!existsSync(credentialsKey)) writeSecret(credentialsKey, randomBytes(32).toString('hex'));
  return readFileSync(credentialsKey, 'utf8').trim();
}

export function readEmbeddedCredentialsKey(config: Pick<Config, 'dataDir'>): string | undefined {
  const { credentialsKey } = embeddedPaths(config);
  return existsSync(credentialsKey) ? readFileSync(credentialsKey, 'utf8').trim() : undefined;
}
