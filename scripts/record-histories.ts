// Records the event histories that test/replay.test.ts replays: real post and upload workflows,
// run by the real worker (Mastodon connector → the local fake, disk storage) on a time-skipping
// Temporal test server, driven through the API as a client would. See docs/changing-workflows.md.
//
//   .tools/bin/bun scripts/record-histories.ts                    # every scenario
//   .tools/bin/bun scripts/record-histories.ts post-partial-failure
//   .tools/bin/bun scripts/record-histories.ts --suffix after-my-patch   # post-…-after-my-patch.json
//
// A committed history is never overwritten: it stands for executions that older code started.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import sharp from 'sharp';
import { Channel } from '../db/entities/index.ts';
import { encryptJson } from '../lib/crypto.ts';
import { addChannel } from '../domain/channels.ts';
import { startFakeMastodon, type FakeMastodon } from '../test/fakes/mastodon.ts';
import { call, makeKey, makeOrg } from '../test/harness/fixtures.ts';
import { stopHarness } from '../test/harness/index.ts';
import { startPostStack } from '../test/harness/post-stack.ts';
import { uploadWorkflowId } from '../workflows/media-types.ts';
import { postWorkflowId, retrySignal } from '../workflows/post-types.ts';

export const HISTORIES_DIR = join(import.meta.dir, '../test/fixtures/histories');

type Stack = Awaited<ReturnType<typeof startPostStack>>;
interface Ctx {
  stack: Stack;
  fake: FakeMastodon;
}
/** Runs one execution to its end and returns its workflow id. */
type Scenario = (ctx: Ctx) => Promise<string>;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`recording went wrong: ${what}`);
}

async function account(ctx: Ctx, tokens: string[]) {
  const org = await makeOrg();
  const { key } = await makeKey(org.id);
  const channels = [];
  for (const [i, token] of tokens.entries()) {
    channels.push(
      await addChannel(ctx.stack.h.orm.em.fork(), ctx.stack.h.credentialsKey, {
        organizationId: org.id,
        platform: 'MASTODON',
        name: `mastodon ${i}`,
        credentials: { instanceUrl: ctx.fake.url, accessToken: token },
      }),
    );
  }
  return { key, channelIds: channels.map((c) => c.id) };
}

/** Publishes now to channels with these tokens; returns once the post has failed (its workflow waits for a retry). */
async function failNow(ctx: Ctx, tokens: string[], expected: string) {
  const { key, channelIds } = await account(ctx, tokens);
  await ctx.stack.syncClock();
  const r = await call(ctx.stack.app, 'POST', '/v1/posts', { key, body: { content: `recorded ${crypto.randomUUID()}`, channelIds } });
  check(r.status === 201, `create answered ${r.status}`);
  const id = r.body.id as string;
  await ctx.stack.settle(id);
  const got = (await call(ctx.stack.app, 'GET', `/v1/posts/${id}`, { key })).body;
  const outcomes = got.channels
    .map((c: { status: string }) => c.status)
    .sort()
    .join(',');
  check(got.status === 'failed' && outcomes === expected, `post ended ${got.status} (${outcomes})`);
  return { key, channelIds, id };
}

/** A failed post whose retry window closes unused: the workflow ends. */
async function publishNow(ctx: Ctx, tokens: string[], expected: string): Promise<string> {
  const { id } = await failNow(ctx, tokens, expected);
  await waitOutRetryWindow(ctx.stack, id);
  return postWorkflowId(id);
}

async function waitOutRetryWindow(stack: Stack, postId: string) {
  await stack.env.sleep('31 days');
  await untilClosed(stack, postWorkflowId(postId));
}

async function untilClosed(stack: Stack, workflowId: string) {
  const handle = stack.env.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 500; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    await Bun.sleep(20);
  }
  throw new Error(`${workflowId} did not finish`);
}

async function expectPost(ctx: Ctx, key: string, id: string, status: string) {
  const got = await call(ctx.stack.app, 'GET', `/v1/posts/${id}`, { key });
  check(got.body?.status === status, `post is ${got.body?.status ?? got.status}, expected ${status}`);
}

/** The upload workflow ends once the upload URL has expired (it then releases the upload key). */
async function waitOutUpload(stack: Stack, mediaId: string) {
  await stack.env.sleep('17 minutes');
  const handle = stack.env.client.workflow.getHandle(uploadWorkflowId(mediaId));
  for (let i = 0; i < 500; i++) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    await Bun.sleep(20);
  }
  throw new Error('upload workflow did not finish');
}

export const SCENARIOS: Record<string, Scenario> = {
  /** Scheduled a day ahead; edited twice (text, then time: two editPost Updates); published. */
  'post-scheduled-edited-published': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    const t0 = await ctx.stack.syncClock();
    const publishAt = new Date(t0.getTime() + 86_400_000).toISOString();
    const r = await call(ctx.stack.app, 'POST', '/v1/posts', { key, body: { content: 'first draft', channelIds, publishAt } });
    check(r.status === 201, `create answered ${r.status}`);
    await ctx.stack.env.sleep('1 hour');
    const text = await call(ctx.stack.app, 'PATCH', `/v1/posts/${r.body.id}`, { key, body: { content: 'second draft' } });
    check(text.status === 200, `edit (text) answered ${text.status}`);
    const t1 = await ctx.stack.syncClock();
    const moved = new Date(t1.getTime() + 2 * 3_600_000).toISOString();
    const time = await call(ctx.stack.app, 'PATCH', `/v1/posts/${r.body.id}`, { key, body: { publishAt: moved } });
    check(time.status === 200, `edit (time) answered ${time.status}`);
    await ctx.stack.env.sleep('3 hours');
    await ctx.stack.settle(r.body.id);
    const got = (await call(ctx.stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
    check(got.status === 'published' && got.channels[0].content === 'second draft', `post ended ${got.status}`);
    return postWorkflowId(r.body.id);
  },
  /** Two channels: Mastodon refuses one status for good (422), the other is published. */
  'post-partial-failure': async (ctx) => {
    ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused by this instance' } });
    return publishNow(ctx, ['good-token', 'good-token'], 'failed,published');
  },
  /** Two channels: one token is revoked (401 → reauth required, not retried), the other publishes. */
  'post-reauth-failure': (ctx) => publishNow(ctx, ['good-token', 'revoked-token'], 'failed,published'),
  /** Scheduled a day ahead, cancelled an hour later (the cancelPost Update): the workflow ends at once. */
  'post-scheduled-cancelled': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    const t0 = await ctx.stack.syncClock();
    const publishAt = new Date(t0.getTime() + 86_400_000).toISOString();
    const r = await call(ctx.stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `recorded ${crypto.randomUUID()}`, channelIds, publishAt },
    });
    check(r.status === 201, `create answered ${r.status}`);
    await ctx.stack.env.sleep('1 hour');
    const del = await call(ctx.stack.app, 'DELETE', `/v1/posts/${r.body.id}`, { key });
    check(del.status === 204, `delete answered ${del.status}`);
    await untilClosed(ctx.stack, postWorkflowId(r.body.id));
    return postWorkflowId(r.body.id);
  },
  /** Reauth failure on one of two channels; the channel is reconnected; retried (the retryPost Update); published. */
  'post-reauth-failure-retried': async (ctx) => {
    const { key, channelIds, id } = await failNow(ctx, ['good-token', 'revoked-token'], 'failed,published');
    await ctx.stack.h.orm.em.fork().nativeUpdate(
      Channel,
      { id: channelIds[1]! },
      {
        credentialsEncrypted: encryptJson(ctx.stack.h.credentialsKey, { instanceUrl: ctx.fake.url, accessToken: 'good-token' }),
        status: 'active',
      },
    );
    const retried = await call(ctx.stack.app, 'POST', `/v1/posts/${id}/retry`, { key });
    check(retried.status === 202, `retry answered ${retried.status}`);
    await ctx.stack.settle(id);
    await expectPost(ctx, key, id, 'published');
    return postWorkflowId(id);
  },
  /** Refused once (422); retried from the Temporal UI (the `retry` Signal); published. */
  'post-failure-signal-retried': async (ctx) => {
    ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused by this instance' } });
    const { key, id } = await failNow(ctx, ['good-token'], 'failed');
    await ctx.stack.env.client.workflow.getHandle(postWorkflowId(id)).signal(retrySignal);
    await ctx.stack.settle(id);
    await expectPost(ctx, key, id, 'published');
    return postWorkflowId(id);
  },
  /** Refused once (422); deleted while waiting for a retry (the cancelPost Update): the workflow ends. */
  'post-failure-deleted': async (ctx) => {
    ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused by this instance' } });
    const { key, id } = await failNow(ctx, ['good-token'], 'failed');
    const del = await call(ctx.stack.app, 'DELETE', `/v1/posts/${id}`, { key });
    check(del.status === 204, `delete answered ${del.status}`);
    await untilClosed(ctx.stack, postWorkflowId(id));
    return postWorkflowId(id);
  },
  /** A retry after the failed run's window closed: the new run (input retry: true) publishes. */
  'post-retry-new-run': async (ctx) => {
    ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused by this instance' } });
    const { key, id } = await failNow(ctx, ['good-token'], 'failed');
    await waitOutRetryWindow(ctx.stack, id);
    await ctx.stack.syncClock();
    const retried = await call(ctx.stack.app, 'POST', `/v1/posts/${id}/retry`, { key });
    check(retried.status === 202, `retry answered ${retried.status}`);
    await ctx.stack.settle(id);
    await expectPost(ctx, key, id, 'published');
    return postWorkflowId(id);
  },
  /** Created, never uploaded nor completed: the window closes, the item expires, the key is released. */
  'media-upload-expired': async (ctx) => {
    const { key } = await account(ctx, []);
    await ctx.stack.syncClock();
    const r = await call(ctx.stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'late.png', mimeType: 'image/png', fileSize: 100 },
    });
    check(r.status === 201, `create upload answered ${r.status}`);
    await waitOutUpload(ctx.stack, r.body.media.id);
    const got = (await call(ctx.stack.app, 'GET', `/v1/media/${r.body.media.id}`, { key })).body;
    check(got.status === 'failed', `upload ended ${got.status}`);
    return uploadWorkflowId(r.body.media.id);
  },
  /** Uploaded and completed: processed to ready, then the upload key is released after expiry. */
  'media-upload-ready': async (ctx) => {
    const { key } = await account(ctx, []);
    await ctx.stack.syncClock();
    const png = new Uint8Array(
      await sharp({ create: { width: 32, height: 24, channels: 3, background: '#3a7' } })
        .png()
        .toBuffer(),
    );
    const r = await call(ctx.stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'photo.png', mimeType: 'image/png', fileSize: png.length },
    });
    check(r.status === 201, `create upload answered ${r.status}`);
    const put = await ctx.stack.app.handle(new Request(r.body.upload.url, { method: 'PUT', headers: r.body.upload.headers, body: png }));
    check(put.status === 200, `PUT answered ${put.status}`);
    const done = await call(ctx.stack.app, 'POST', `/v1/media/${r.body.media.id}/complete`, { key });
    check(done.status === 200 && done.body.status === 'ready', `complete answered ${done.status} ${done.body.status}`);
    await waitOutUpload(ctx.stack, r.body.media.id);
    return uploadWorkflowId(r.body.media.id);
  },
};

async function main(argv: string[]) {
  let suffix = '';
  const names: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--suffix') suffix = `-${argv[++i] ?? ''}`;
    else names.push(argv[i]!);
  }
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const chosen = names.length ? names : Object.keys(SCENARIOS);
  const targets = chosen.map((name) => ({ name, file: join(HISTORIES_DIR, `${name}${suffix}.json`) }));
  const taken = targets.filter((t) => existsSync(t.file));
  if (taken.length) {
    throw new Error(
      `already recorded (committed histories are kept, never overwritten): ${taken.map((t) => t.file).join(', ')}; record under a new name with --suffix <what-changed>`,
    );
  }
  mkdirSync(HISTORIES_DIR, { recursive: true });
  const stack = await startPostStack({ storage: 'disk' });
  const fake = await startFakeMastodon();
  try {
    for (const { name, file } of targets) {
      const workflowId = await SCENARIOS[name]!({ stack, fake });
      const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
      writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
      console.log(`recorded ${name}: ${history.events?.length ?? 0} events → ${file}`);
    }
  } finally {
    await fake.stop();
    await stack.stop();
    await stopHarness();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
