// A whole Bluesky network (@atproto/dev-env TestNetwork: PLC, PDS, AppView and its helpers), for
// test/bluesky-metrics.test.ts: the AppView counts likes, reposts and replies as Bluesky's does.
// Runs under Node 22 (started by test/harness/bsky-network.ts) from PDS_MODULES (.tools/pds,
// scripts/setup-pds.sh), with DB_POSTGRES_URL and REDIS_HOST in its environment. Prints one JSON
// line {pdsUrl, appviewUrl, plcUrl}; then each line `sync` on stdin waits until the AppView has
// indexed everything written so far and answers `synced`. Exits when stdin closes.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const modules = process.env.PDS_MODULES;
if (!modules) throw new Error('PDS_MODULES must point at the folder holding the network node_modules');
const require = createRequire(join(modules, 'package.json'));
const { TestNetwork } = await import(require.resolve('@atproto/dev-env'));

// A database of its own (test/harness/bsky-network.ts): one fixed schema name (letters only, as bsync requires).
const network = await TestNetwork.create({ dbPostgresSchema: 'network' });
process.stdout.write(`${JSON.stringify({ pdsUrl: network.pds.url, appviewUrl: network.bsky.url, plcUrl: network.plc.url })}\n`);

let buffered = '';
let queue = Promise.resolve();
process.stdin.on('data', (chunk) => {
  buffered += chunk.toString();
  for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
    const line = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (line === 'sync') {
      queue = queue.then(async () => {
        await network.processAll();
        process.stdout.write('synced\n');
      });
    }
  }
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await network.close().catch(() => {});
  process.exit(0);
}
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
