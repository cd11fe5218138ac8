// A real Bluesky network for the metrics tests (test/harness/bsky-network.mjs under Node 22):
// its own Redis (Debian's redis-server, on a free port, nothing saved) and a database of the
// run's Postgres. Accounts, posts, likes, reposts and replies go through the PDS's XRPC API as
// an app would write them; sync() waits until the AppView has indexed them.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { findNode22 } from './pds.ts';
import { harness } from './index.ts';
import { freePort } from './ports.ts';

const PDS_MODULES = resolve(import.meta.dir, '../../.tools/pds');
const SERVER_SCRIPT = resolve(import.meta.dir, 'bsky-network.mjs');

export interface NetworkAccount {
  did: string;
  handle: string;
  password: string;
  appPassword: string;
  accessJwt: string;
}

export interface BlueskyNetwork {
  pdsUrl: string;
  appviewUrl: string;
  newAccount(prefix: string): Promise<NetworkAccount>;
  /** Writes a record in the account's repo (like, repost, post), as an app would. */
  createRecord(account: NetworkAccount, collection: string, record: Record<string, unknown>): Promise<{ uri: string; cid: string }>;
  /** Resolves once the AppView has indexed every write so far. */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

export async function startBlueskyNetwork(): Promise<BlueskyNetwork> {
  const h = await harness();
  const database = `bsky_network_${crypto.randomUUID().slice(0, 8)}`;
  await h.pg.createDatabase(database);
  const redisPort = await freePort();
  const redis = spawn(
    process.env.REDIS_SERVER_PATH ?? 'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const child = spawn(findNode22(), [SERVER_SCRIPT], {
    env: { ...process.env, PDS_MODULES, DB_POSTGRES_URL: h.pg.url(database), REDIS_HOST: `127.0.0.1:${redisPort}`, LOG_ENABLED: 'false' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Redis lives as long as the network process.
  child.once('exit', () => redis.kill('SIGTERM'));
  const lines = lineReader(child);
  let info: { pdsUrl: string; appviewUrl: string };
  try {
    info = JSON.parse(await lines.next(90_000));
  } catch (err) {
    child.kill('SIGKILL');
    redis.kill('SIGTERM');
    throw err;
  }

  async function xrpc(nsid: string, json: unknown, auth?: string): Promise<any> {
    const res = await fetch(new URL(`/xrpc/${nsid}`, info.pdsUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
      body: JSON.stringify(json),
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`network PDS ${nsid} → ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  let counter = 0;
  return {
    pdsUrl: info.pdsUrl,
    appviewUrl: info.appviewUrl,
    async newAccount(prefix) {
      const handle = `${prefix.slice(0, 8)}${++counter}.test`;
      const password = `pw-${crypto.randomUUID()}`;
      const created = await xrpc('com.atproto.server.createAccount', { handle, email: `${handle}@example.com`, password });
      const app = await xrpc('com.atproto.server.createAppPassword', { name: 'postpilot' }, `Bearer ${created.accessJwt}`);
      return { did: created.did, handle, password, appPassword: app.password, accessJwt: created.accessJwt };
    },
    async createRecord(account, collection, record) {
      return xrpc('com.atproto.repo.createRecord', { repo: account.did, collection, record }, `Bearer ${account.accessJwt}`);
    },
    async sync() {
      child.stdin!.write('sync\n');
      const line = await lines.next(60_000);
      if (line !== 'synced') throw new Error(`the network answered ${line}`);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.stdin?.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(killer);
      }
      redis.kill('SIGTERM');
    },
  };
}

/** The child's stdout line by line; fails with its stderr's end when it exits or is slow. */
function lineReader(child: ChildProcess) {
  let out = '';
  let err = '';
  const waiting: { resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-10_000);
  });
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0 && waiting.length; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiting.shift()!.resolve(line);
    }
  });
  child.once('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the Bluesky network exited (${code}): ${err.slice(-2000)}`));
  });
  return {
    next(timeoutMs: number): Promise<string> {
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        return Promise.resolve(line);
      }
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the Bluesky network did not answer within ${timeoutMs} ms: ${err.slice(-2000)}`)),
          timeoutMs,
        );
        waiting.push({
          resolve: (l) => {
            clearTimeout(timer);
            resolveLine(l);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
      });
    },
  };
}
