// The production topology on one machine, without Docker (docs/operations.md "The production
// topology on one machine"): Postgres, the real Temporal server (frontend, history, matching and
// worker services; persistence and visibility on that Postgres, `postgres12` plugin) built by
// scripts/build-temporal.sh, the Temporal UI, SeaweedFS as the S3 store, and the production entry
// points — `bun api/main.ts` and `bun worker/main.ts` — as separate processes, any number of
// each. Used by `npm run cluster` (scripts/cluster.ts) and the chaos test (test/cluster/chaos.ts),
// which kills its parts.
//
// It runs what docker-compose.yml runs, with the same settings: Temporal reads the environment
// variables of the compose file through the server's own built-in config template, its schema is
// set up by deploy/temporal/setup-schema.sh and its namespace by deploy/temporal/setup-namespace.sh
// (the scripts the compose one-shot jobs run), the dynamic config is deploy/temporal/dynamicconfig.yaml,
// the roles and databases are those of deploy/postgres/init-databases.sh, and the bucket is made by
// deploy/create-bucket.ts.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { startPgServer, type PgServer } from '../../lib/pg-server.ts';
import { portIsFree } from '../embedded/ports.ts';
import { Child } from './process.ts';

export const ROOT = resolve(import.meta.dir, '../..');
export const TEMPORAL_HOME = join(ROOT, '.tools/temporal-server');
const TEMPORAL_CLI_BIN = join(ROOT, '.tools/temporal/bin');
const WEED = join(ROOT, '.tools/seaweedfs/bin/weed');
const BUN = process.execPath;

export interface ClusterPorts {
  /** One per API process. */
  apis: number[];
  postgres: number;
  /** Temporal frontend gRPC (what the API and the workers dial), its HTTP API, and the other services. */
  temporal: number;
  temporalHttp: number;
  history: number;
  matching: number;
  temporalWorker: number;
  /** Membership (ringpop) ports of frontend, history, matching, worker. */
  membership: [number, number, number, number];
  ui: number;
  /** The S3 API (clients PUT presigned uploads here), and SeaweedFS's internal ports. */
  s3: number;
  weed: { master: number; volume: number; filer: number; s3Grpc: number; admin: number; adminGrpc: number };
}

/** `npm run cluster`'s ports: beside the embedded default's (3000, 5432, 7233, 8233), never on them. */
export const DEFAULT_PORTS: ClusterPorts = {
  apis: [3101, 3102],
  postgres: 5532,
  temporal: 7333,
  temporalHttp: 7343,
  history: 7334,
  matching: 7335,
  temporalWorker: 7339,
  membership: [6833, 6834, 6835, 6839],
  ui: 8433,
  s3: 8533,
  // weed also listens on each of master/volume/filer + 10000 (gRPC).
  weed: { master: 9533, volume: 8580, filer: 8988, s3Grpc: 18533, admin: 23746, adminGrpc: 33746 },
};

/**
 * Where the Temporal UI listens unless told otherwise: this machine only. It answers without
 * signing in and shows every organization's workflows (docs/operations.md "The Temporal UI").
 */
export const DEFAULT_UI_HOST = '127.0.0.1';

export interface ClusterOptions {
  /** State (Postgres data, SeaweedFS data, secrets, logs) lives here across starts. */
  dir: string;
  ports: ClusterPorts;
  workers: number;
  /** Extra environment for the API and worker processes (the chaos test points the platforms at fakes). */
  appEnv?: Record<string, string>;
  ui?: boolean;
  /**
   * The address the Temporal UI listens on; default DEFAULT_UI_HOST (loopback). Another one only
   * with the UI server's own sign-in in front (docs/operations.md "The Temporal UI").
   */
  uiHost?: string;
  say?: (msg: string) => void;
  /**
   * Temporal's history shards (NUM_HISTORY_SHARDS of the server's config template; default 4).
   * Fixed when the cluster's Temporal database is created: it takes effect on a new directory only.
   */
  historyShards?: number;
}

/** Generated once per cluster directory, kept in <dir>/secrets.json (mode 0600). */
interface Secrets {
  credentialsKey: string;
  postpilotDbPassword: string;
  temporalDbPassword: string;
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
}

export interface Cluster {
  ports: ClusterPorts;
  dir: string;
  logs: string;
  /** The environment of the API and worker processes (DATABASE_URL, CREDENTIALS_KEY, TEMPORAL_ADDRESS, S3_*…). */
  appEnv: Record<string, string>;
  postgres: { url: (db?: string) => string; restart: () => Promise<void>; pid: () => number };
  temporal: Child;
  ui?: Child;
  seaweed: Child;
  apis: Child[];
  workers: Child[];
  /** Stops everything: APIs, workers (they drain), UI, Temporal, SeaweedFS, Postgres. */
  stop: () => Promise<void>;
  /** SIGKILLs every process at once, Postgres last with a fast shutdown (an interrupted test run). */
  kill: () => Promise<void>;
}

function secrets(dir: string): Secrets {
  const file = join(dir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  const s: Secrets = {
    credentialsKey: randomBytes(32).toString('hex'),
    postpilotDbPassword: randomBytes(12).toString('hex'),
    temporalDbPassword: randomBytes(12).toString('hex'),
    s3AccessKeyId: `pp${randomBytes(8).toString('hex')}`,
    s3SecretAccessKey: randomBytes(24).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(s, null, 2), { mode: 0o600 });
  chmodSync(file, 0o600);
  return s;
}

/** Runs a one-shot script to the end, its output appended to the log; throws with its tail on failure. */
async function oneShot(name: string, argv: string[], env: Record<string, string | undefined>, logFile: string): Promise<void> {
  const { openSync, closeSync } = await import('node:fs');
  const out = openSync(logFile, 'a');
  const proc = Bun.spawn(argv, { cwd: ROOT, env: env as Record<string, string>, stdin: 'ignore', stdout: out, stderr: out });
  closeSync(out);
  const code = await proc.exited;
  if (code !== 0)
    throw new Error(`${name} failed (exit ${code}); see ${logFile}:\n${readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n')}`);
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.ok;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const say = opts.say ?? (() => {});
  const dir = resolve(opts.dir);
  const logs = join(dir, 'logs');
  mkdirSync(logs, { recursive: true });
  for (const bin of ['temporal-server', 'temporal-sql-tool']) {
    if (!existsSync(join(TEMPORAL_HOME, 'bin', bin)))
      throw new Error(`${bin} is missing: run sh scripts/setup.sh --cluster (builds it into .tools/temporal-server)`);
  }
  if (!existsSync(WEED)) throw new Error('SeaweedFS is missing: run sh scripts/setup.sh --cluster');
  const s = secrets(dir);
  const p = opts.ports;
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((e) => say(`stop: ${(e as Error).message}`));
  };

  try {
    // --- Postgres: the roles and databases of deploy/postgres/init-databases.sh --------------------
    say(`Postgres on 127.0.0.1:${p.postgres}`);
    let server: PgServer;
    const startPg = () =>
      startPgServer({
        dataDir: join(dir, 'pg'),
        port: p.postgres,
        user: 'postgres',
        password: 'postgres',
        logFile: join(logs, 'postgres.log'),
        ownProcessGroup: true,
      });
    server = await startPg();
    stops.push(() => server.stop());
    const admin = new pg.Client({ connectionString: server.url() });
    await admin.connect();
    try {
      const has = async (sql: string, v: string) => (await admin.query(sql, [v])).rowCount! > 0;
      if (!(await has('select 1 from pg_roles where rolname = $1', 'postpilot'))) {
        await admin.query(`create role postpilot login password '${s.postpilotDbPassword}'`);
      }
      if (!(await has('select 1 from pg_database where datname = $1', 'postpilot')))
        await admin.query('create database postpilot owner postpilot');
      if (!(await has('select 1 from pg_roles where rolname = $1', 'temporal'))) {
        await admin.query(`create role temporal login createdb password '${s.temporalDbPassword}'`);
      }
    } finally {
      await admin.end();
    }
    const postgres = {
      url: (db = 'postpilot') => `postgres://postpilot:${s.postpilotDbPassword}@127.0.0.1:${p.postgres}/${db}`,
      pid: () => server.pid,
      /** A fast shutdown (SIGINT) and a start on the same data and port. */
      restart: async () => {
        await server.stop();
        server = await startPg();
      },
    };

    // --- Temporal: schema (deploy/temporal/setup-schema.sh), server, namespace --------------------
    const temporalDbEnv = {
      DB: 'postgres12',
      DB_PORT: String(p.postgres),
      POSTGRES_SEEDS: '127.0.0.1',
      POSTGRES_USER: 'temporal',
      POSTGRES_PWD: s.temporalDbPassword,
      SQL_PASSWORD: s.temporalDbPassword,
    };
    const toolPath = `${join(TEMPORAL_HOME, 'bin')}:${TEMPORAL_CLI_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    say('Temporal schema (deploy/temporal/setup-schema.sh)');
    await oneShot(
      'temporal-schema',
      ['/bin/sh', join(ROOT, 'deploy/temporal/setup-schema.sh')],
      { ...process.env, ...temporalDbEnv, PATH: toolPath, TEMPORAL_SCHEMA_DIR: join(TEMPORAL_HOME, 'schema/postgresql/v12') },
      join(logs, 'temporal-schema.log'),
    );
    const temporalAddress = `127.0.0.1:${p.temporal}`;
    const temporal = new Child({
      name: 'temporal-server',
      argv: [join(TEMPORAL_HOME, 'bin/temporal-server'), 'start'],
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...temporalDbEnv,
        BIND_ON_IP: '127.0.0.1',
        DYNAMIC_CONFIG_FILE_PATH: join(ROOT, 'deploy/temporal/dynamicconfig.yaml'),
        LOG_LEVEL: 'warn',
        ...(opts.historyShards ? { NUM_HISTORY_SHARDS: String(opts.historyShards) } : {}),
        FRONTEND_GRPC_PORT: String(p.temporal),
        FRONTEND_HTTP_PORT: String(p.temporalHttp),
        HISTORY_GRPC_PORT: String(p.history),
        MATCHING_GRPC_PORT: String(p.matching),
        WORKER_GRPC_PORT: String(p.temporalWorker),
        FRONTEND_MEMBERSHIP_PORT: String(p.membership[0]),
        HISTORY_MEMBERSHIP_PORT: String(p.membership[1]),
        MATCHING_MEMBERSHIP_PORT: String(p.membership[2]),
        WORKER_MEMBERSHIP_PORT: String(p.membership[3]),
      },
      logFile: join(logs, 'temporal.log'),
      stopGraceMs: 20_000,
      ready: async () => {
        const conn = await Connection.connect({ address: temporalAddress, connectTimeout: 1000 });
        try {
          await conn.workflowService.getSystemInfo({});
          return true;
        } finally {
          await conn.close();
        }
      },
    });
    say(`Temporal server ${temporalAddress} (frontend, history, matching, worker)`);
    await temporal.start(180_000);
    stops.push(() => temporal.stop());
    say('Temporal namespace and search attributes (deploy/temporal/setup-namespace.sh)');
    await oneShot(
      'temporal-namespace',
      ['/bin/sh', join(ROOT, 'deploy/temporal/setup-namespace.sh')],
      { ...process.env, PATH: toolPath, TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: 'default', TEMPORAL_RETENTION: '720h' },
      join(logs, 'temporal-namespace.log'),
    );

    // --- Temporal UI ------------------------------------------------------------------------------
    let ui: Child | undefined;
    const uiBin = join(TEMPORAL_HOME, 'bin/temporal-ui-server');
    if (opts.ui !== false && existsSync(uiBin)) {
      const template = readFileSync(join(TEMPORAL_HOME, 'ui/config/docker.yaml'), 'utf8');
      ui = uiChild({ bin: uiBin, root: join(dir, 'temporal-ui'), template, logs, temporalAddress, port: p.ui, host: opts.uiHost });
      say(`Temporal UI ${uiUrl(p.ui, opts.uiHost)}`);
      await ui.start();
      stops.push(() => ui!.stop());
    }

    // --- SeaweedFS (S3) ---------------------------------------------------------------------------
    const seaweed = seaweedChild(dir, logs, p, s);
    say(`SeaweedFS S3 http://127.0.0.1:${p.s3}`);
    await seaweed.start();
    stops.push(() => seaweed.kill()); // its graceful stop takes 5–15 s and saves nothing we need

    const appEnv: Record<string, string> = {
      DATABASE_URL: postgres.url(),
      DATABASE_POOL_MAX: '10',
      CREDENTIALS_KEY: s.credentialsKey,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'postpilot',
      PUBLIC_BASE_URL: `http://localhost:${p.apis[0]}`,
      LOG_LEVEL: 'info',
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: `http://127.0.0.1:${p.s3}`,
      S3_REGION: 'us-east-1',
      S3_BUCKET: 'postpilot-media',
      S3_ACCESS_KEY_ID: s.s3AccessKeyId,
      S3_SECRET_ACCESS_KEY: s.s3SecretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
      // Every part of this cluster is on this machine (lib/outbound.ts).
      OUTBOUND_ALLOW_PRIVATE: 'true',
      DATA_DIR: join(dir, 'app'),
      ...opts.appEnv,
    };
    const childEnv = { ...process.env, ...appEnv };
    await oneShot('create-bucket', [BUN, 'deploy/create-bucket.ts'], childEnv, join(logs, 'create-bucket.log'));

    // --- the service: API processes, then workers (the first API applies the migrations) --------
    const apis = p.apis.map(
      (port, i) =>
        new Child({
          name: `api-${i + 1}`,
          argv: [BUN, 'api/main.ts'],
          cwd: ROOT,
          env: { ...childEnv, HOST: '127.0.0.1', PORT: String(port) },
          logFile: join(logs, `api-${i + 1}.log`),
          ready: () => httpOk(`http://127.0.0.1:${port}/health`),
        }),
    );
    for (const [i, api] of apis.entries()) {
      say(`API ${i + 1} http://localhost:${p.apis[i]}/v1`);
      await api.start();
      stops.push(() => api.stop());
    }
    const workers = Array.from(
      { length: opts.workers },
      (_, i) =>
        new Child({
          name: `worker-${i + 1}`,
          argv: [BUN, 'worker/main.ts'],
          cwd: ROOT,
          env: childEnv,
          logFile: join(logs, `worker-${i + 1}.log`),
          // The worker's own shutdown grace (worker/run.ts) plus a margin.
          stopGraceMs: 90_000,
          ready: async (log) => /"msg":"polling"/.test(log()),
        }),
    );
    say(`${workers.length} workers`);
    await Promise.all(workers.map((w) => w.start()));
    for (const w of workers) stops.push(() => w.stop());

    const kill = async () => {
      await Promise.all([...apis, ...workers, temporal, seaweed, ...(ui ? [ui] : [])].map((c) => c.kill()));
      await server.stop();
    };
    return { ports: p, dir, logs, appEnv, postgres, temporal, ui, seaweed, apis, workers, stop: stopAll, kill };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** `host` as it stands before `:port` (the UI server joins them so): an IPv6 address in brackets. */
const hostPart = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** How this machine reaches a UI listening on `host` (on every address: through loopback). */
export function uiUrl(port: number, host = DEFAULT_UI_HOST): string {
  const h = hostPart(host);
  return `http://${h === '' || h === '0.0.0.0' || h === '[::]' ? '127.0.0.1' : h}:${port}`;
}

/** The UI server's sign-in settings (TEMPORAL_AUTH_ENABLED, TEMPORAL_AUTH_PROVIDER_URL, …) in `env`. */
export function uiAuthEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('TEMPORAL_AUTH_') && e[1] !== undefined),
  );
}

/**
 * The Temporal UI server, its config in `root/config`: the UI's docker image config template
 * (copied by scripts/build-temporal.sh), read from the same TEMPORAL_* variables docker-compose.yml
 * gives the temporal-ui service, as `base.yaml`; `cluster.yaml` over it sets the address to listen
 * on. The template names none, and the server's own default is every interface. The launcher's
 * TEMPORAL_AUTH_* settings (the UI server's OIDC sign-in) pass through.
 */
export function uiChild(opts: {
  bin: string;
  root: string;
  template: string;
  logs: string;
  temporalAddress: string;
  port: number;
  host?: string;
}): Child {
  const host = opts.host ?? DEFAULT_UI_HOST;
  const config = join(opts.root, 'config');
  mkdirSync(config, { recursive: true });
  writeFileSync(join(config, 'base.yaml'), opts.template);
  writeFileSync(join(config, 'cluster.yaml'), `host: ${JSON.stringify(hostPart(host))}\n`);
  return new Child({
    name: 'temporal-ui',
    argv: [opts.bin, '--root', opts.root, '--env', 'cluster', 'start'],
    cwd: opts.root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: opts.temporalAddress,
      TEMPORAL_DEFAULT_NAMESPACE: 'default',
      TEMPORAL_UI_PORT: String(opts.port),
      ...uiAuthEnv(process.env),
    },
    logFile: join(opts.logs, 'temporal-ui.log'),
    ready: () => httpOk(`${uiUrl(opts.port, host)}/healthz`),
  });
}

function seaweedChild(dir: string, logs: string, p: ClusterPorts, s: Secrets): Child {
  const data = join(dir, 'seaweedfs');
  mkdirSync(data, { recursive: true });
  // One identity; anonymous requests are refused (docker-compose.yml does the same with its keys).
  const s3Config = join(dir, 'seaweedfs-s3.json');
  writeFileSync(
    s3Config,
    JSON.stringify({
      identities: [
        {
          name: 'postpilot',
          credentials: [{ accessKey: s.s3AccessKeyId, secretKey: s.s3SecretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
    { mode: 0o600 },
  );
  const w = p.weed;
  return new Child({
    name: 'seaweedfs',
    argv: [
      WEED,
      'mini',
      `-dir=${data}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-master.port=${w.master}`,
      '-master.telemetry=false',
      `-volume.port=${w.volume}`,
      `-filer.port=${w.filer}`,
      `-filer.localSocket=${join(dir, 'filer.sock')}`,
      `-s3.port=${p.s3}`,
      `-s3.port.grpc=${w.s3Grpc}`,
      `-s3.localSocket=${join(dir, 's3.sock')}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      `-s3.config=${s3Config}`,
      '-webdav=false',
      '-admin.ui=false',
      `-admin.port=${w.admin}`,
      `-admin.port.grpc=${w.adminGrpc}`,
    ],
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    logFile: join(logs, 'seaweedfs.log'),
    ready: () => httpOk(`http://127.0.0.1:${p.s3}/healthz`),
  });
}

/**
 * Free loopback ports for a whole cluster (a benchmark's or a test's, beside a running
 * `npm run cluster`), below 32768: Temporal keeps the membership ports in a smallint column.
 * weed also binds master/volume/filer + 10000 (gRPC), so that port is kept free too.
 */
export async function freeClusterPorts(apis = 2): Promise<ClusterPorts> {
  const used = new Set<number>();
  const next = async () => {
    for (;;) {
      const p = 20_000 + Math.floor(Math.random() * 12_000);
      if (!used.has(p) && !used.has(p + 10_000) && (await portIsFree(p)) && (await portIsFree(p + 10_000))) {
        used.add(p);
        used.add(p + 10_000);
        return p;
      }
    }
  };
  const apiPorts: number[] = [];
  for (let i = 0; i < apis; i++) apiPorts.push(await next());
  return {
    apis: apiPorts,
    postgres: await next(),
    temporal: await next(),
    temporalHttp: await next(),
    history: await next(),
    matching: await next(),
    temporalWorker: await next(),
    membership: [await next(), await next(), await next(), await next()],
    ui: await next(),
    s3: await next(),
    weed: {
      master: await next(),
      volume: await next(),
      filer: await next(),
      s3Grpc: await next(),
      admin: await next(),
      adminGrpc: await next(),
    },
  };
}
