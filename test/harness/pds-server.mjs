// A real Bluesky PDS (@atproto/pds) with an in-memory PLC directory, for test/bluesky.test.ts.
// Runs under Node 22 (started by test/harness/pds.ts): the PDS needs Node >= 22 and its
// better-sqlite3 does not load in Bun. Its packages live in PDS_MODULES (.tools/pds, installed by
// scripts/setup-pds.sh). Prints one JSON line {url, plcUrl, adminPassword, rateLimitBypassKey}
// on stdout once both listen, and exits when stdin closes (the test process ended).
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const modules = process.env.PDS_MODULES;
if (!modules) throw new Error('PDS_MODULES must point at the folder holding the PDS node_modules');
const require = createRequire(join(modules, 'package.json'));
const load = (name) => import(require.resolve(name));

const [{ PDS }, plc, { Secp256k1Keypair }] = await Promise.all([load('@atproto/pds'), load('@did-plc/server'), load('@atproto/crypto')]);

const adminPassword = 'admin-pass';
const rateLimitBypassKey = 'test-bypass';

const plcServer = plc.PlcServer.create({ db: plc.Database.mock(), port: 0 });
await plcServer.start();
const plcUrl = `http://localhost:${plcServer.server.address().port}`;

// The PDS's public URL carries its port, so the port is chosen before it starts.
const port = Number(process.env.PDS_PORT) || (await freePort());
const dataDir = await mkdtemp(join(tmpdir(), 'postpilot-pds-'));
const rotationKey = await Secp256k1Keypair.create({ exportable: true });

const pds = await PDS.fromEnv({
  devMode: true,
  port,
  hostname: 'localhost',
  dataDirectory: dataDir,
  blobstoreDiskLocation: join(dataDir, 'blobs'),
  blobUploadLimit: Number(process.env.PDS_BLOB_UPLOAD_LIMIT) || 5 * 1024 * 1024,
  didPlcUrl: plcUrl,
  recoveryDidKey: (await Secp256k1Keypair.create()).did(),
  plcRotationKeyK256PrivateKeyHex: Buffer.from(await rotationKey.export()).toString('hex'),
  adminPassword,
  jwtSecret: 'jwt-secret',
  serviceHandleDomains: ['.test'],
  inviteRequired: false,
  disableSsrfProtection: true,
  // No AppView or moderation service here: app.bsky.* reads are not proxied anywhere real.
  bskyAppViewUrl: 'https://appview.invalid',
  bskyAppViewDid: 'did:example:invalid',
  modServiceUrl: 'https://moderator.invalid',
  modServiceDid: 'did:example:invalid',
  // Real limits (createSession 30 per 5 min per account, …) so a 429 can be produced on demand;
  // the harness's own setup calls carry the bypass key.
  rateLimitsEnabled: true,
  rateLimitBypassKey,
});
await pds.start();

process.stdout.write(`${JSON.stringify({ url: `http://localhost:${port}`, plcUrl, adminPassword, rateLimitBypassKey })}\n`);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await pds.destroy().catch(() => {});
  await plcServer.destroy().catch(() => {});
  await rm(dataDir, { recursive: true, force: true }).catch(() => {});
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address();
      srv.close(() => resolve(p));
    });
  });
}
