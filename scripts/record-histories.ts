// Records the event histories that test/replay.test.ts replays: real executions of every workflow
// type the worker registers (workflows/index.ts), run by the real worker (Mastodon connector → the local fake, disk storage) on a time-skipping
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
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Channel, Post, WebhookDelivery } from '../db/entities/index.ts';
import { encryptJson } from '../lib/crypto.ts';
import { newId } from '../lib/ids.ts';
import { addChannel } from '../domain/channels.ts';
import { setApprovalSettings } from '../domain/organizations.ts';
import { writeWebhookEvent } from '../domain/webhooks/outbox.ts';
import { dispatchWebhookDeliveries } from '../domain/workflow-starts.ts';
import { startFakeMastodon, type FakeMastodon } from '../test/fakes/mastodon.ts';
import { call, makeKey, makeOrg } from '../test/harness/fixtures.ts';
import { stopHarness } from '../test/harness/index.ts';
import { startPostStack } from '../test/harness/post-stack.ts';
import { uploadWorkflowId } from '../workflows/media-types.ts';
import { postWorkflowId, retrySignal } from '../workflows/post-types.ts';
import { commentModerationWorkflowId, commentReplyWorkflowId } from '../workflows/comment-actions-types.ts';
import { COMMENTS_SWEEP_WORKFLOW_TYPE, type CommentsSweepInput, type CommentsSweepResult } from '../workflows/comments-sweep-types.ts';
import { METRICS_SWEEP_WORKFLOW_TYPE, type MetricsSweepInput, type MetricsSweepSummary } from '../workflows/metrics-sweep-types.ts';
import { PING_WORKFLOW_TYPE, type PingInput } from '../workflows/ping-types.ts';
import { FEED_POLL_WORKFLOW_TYPE, type FeedPollInput, type FeedPollSummary } from '../workflows/feed-poll-types.ts';
import { startFeedServer } from '../test/fakes/feed-server.ts';
import { POST_RECONCILER_WORKFLOW_TYPE, type PostReconcilerResult } from '../workflows/post-reconciler-types.ts';
import { seriesWorkflowId } from '../workflows/series-types.ts';
import { webhookDeliveryWorkflowId, webhookEventWorkflowId } from '../workflows/webhook-delivery-types.ts';
import {
  WEBHOOK_OUTBOX_SWEEP_INPUT,
  WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
  type WebhookOutboxSweepResult,
} from '../workflows/webhook-outbox-sweep-types.ts';

export const HISTORIES_DIR = join(import.meta.dir, '../test/fixtures/histories');

type Stack = Awaited<ReturnType<typeof startPostStack>>;

/** Runs in the worker before a follow-up item's publish (a fault placed between two items). */
let beforeFollowUp: ((item: { postId: string; position: number }) => void) | null = null;
const betweenItems: ActivityInterceptorsFactory = (actx) => ({
  inbound: {
    async execute(input, next) {
      if (beforeFollowUp && actx.info.activityType === 'publishFollowUp')
        beforeFollowUp(input.args[0] as { postId: string; position: number });
      return next(input);
    },
  },
});
interface Ctx {
  stack: Stack;
  fake: FakeMastodon;
  /** A webhook receiver: 200 on any path, except /failing (always 500). */
  receiver: { url: string; received: string[] };
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
  return { key, organizationId: org.id, channelIds: channels.map((c) => c.id) };
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

/** Polls in real time: activities run in real time once a timer has fired. */
async function until(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await Bun.sleep(20);
  }
  throw new Error(`recording went wrong: never ${what}`);
}

const occurrenceCount = (stack: Stack, seriesId: string) => stack.h.orm.em.fork().count(Post, { seriesId });

/** A webhook endpoint of the organization, at this path of the receiver. */
async function webhook(ctx: Ctx, key: string, path: string): Promise<string> {
  const r = await call(ctx.stack.app, 'POST', '/v1/webhooks', { key, body: { url: `${ctx.receiver.url}${path}`, events: 'all' } });
  check(r.status === 201, `webhook create answered ${r.status}`);
  return r.body.endpoint.id as string;
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

/** An organization whose every post waits for approval, a key that approves, and a post due in an hour. */
async function awaitingApproval(ctx: Ctx) {
  const { key, organizationId, channelIds } = await account(ctx, ['good-token']);
  await setApprovalSettings(ctx.stack.h.orm.em.fork(), organizationId, { approval: 'everyone' });
  const approver = (await makeKey(organizationId, { scopes: ['read', 'approve'] })).key;
  const t0 = await ctx.stack.syncClock();
  const publishAt = new Date(t0.getTime() + 3_600_000).toISOString();
  const r = await call(ctx.stack.app, 'POST', '/v1/posts', {
    key,
    body: { content: `recorded ${crypto.randomUUID()}`, channelIds, publishAt },
  });
  check(r.status === 201 && r.body.approval?.status === 'pending', `create answered ${r.status} ${r.body.approval?.status}`);
  return { key, approver, id: r.body.id as string };
}

/** A post published now with someone's comment under it, collected by a run of the comments sweep; the comment's id; `publisher`: a key that may decide. */
async function collectedComment(ctx: Ctx, approval: 'everyone' | null = null) {
  const { key, organizationId, channelIds } = await account(ctx, ['good-token']);
  const publisher = approval ? (await makeKey(organizationId, { scopes: ['read', 'publish', 'approve'] })).key : key;
  await ctx.stack.syncClock();
  const r = await call(ctx.stack.app, 'POST', '/v1/posts', { key, body: { content: `recorded ${crypto.randomUUID()}`, channelIds } });
  check(r.status === 201, `create answered ${r.status}`);
  await ctx.stack.settle(r.body.id);
  // From now on everyone's replies wait for a decision.
  if (approval) await setApprovalSettings(ctx.stack.h.orm.em.fork(), organizationId, { approval });
  const post = (await call(ctx.stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
  const someone = {
    id: '77',
    username: 'someone',
    acct: 'someone@else.example',
    display_name: '',
    avatar: '',
    url: 'https://else.example/@someone',
  };
  ctx.fake.reply(post.channels[0].platformPostId, someone, 'a question');
  await ctx.stack.client.workflow.execute(COMMENTS_SWEEP_WORKFLOW_TYPE, {
    taskQueue: ctx.stack.taskQueue,
    workflowId: `comments-sweep-${crypto.randomUUID()}`,
    args: [{ limit: 100, rounds: 1 } satisfies CommentsSweepInput],
  });
  const inbox = await call(ctx.stack.app, 'GET', `/v1/inbox?postId=${r.body.id}`, { key });
  check(inbox.body.data.length === 1, `inbox holds ${inbox.body.data.length}`);
  return { key, publisher, commentId: inbox.body.data[0].id as string };
}

/** Answers the comment; returns the reply once its workflow has ended. */
async function replied(ctx: Ctx, key: string, commentId: string, then?: (replyId: string) => Promise<void>) {
  const r = await call(ctx.stack.app, 'POST', `/v1/comments/${commentId}/reply`, {
    key,
    body: { content: `recorded ${crypto.randomUUID()}` },
  });
  check(r.status === 202, `reply answered ${r.status}`);
  await then?.(r.body.id);
  await ctx.stack.client.workflow.getHandle(commentReplyWorkflowId(r.body.id)).result();
  return (await call(ctx.stack.app, 'GET', `/v1/replies/${r.body.id}`, { key })).body;
}

export const SCENARIOS: Record<string, Scenario> = {
  /** A reply waiting for approval (the organization's `everyone`), approved (the decideReply Update), then published. */
  'comment-reply-approved': async (ctx) => {
    const { key, publisher, commentId } = await collectedComment(ctx, 'everyone');
    const reply = await replied(ctx, key, commentId, async (id) => {
      const decided = await call(ctx.stack.app, 'POST', `/v1/replies/${id}/approve`, { key: publisher });
      check(decided.status === 200, `approve answered ${decided.status}`);
    });
    check(reply.status === 'published', `reply ${reply.status}`);
    return commentReplyWorkflowId(reply.id);
  },
  /** A reply Mastodon refuses: failed. */
  'comment-reply-failed': async (ctx) => {
    const { key, commentId } = await collectedComment(ctx);
    ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused' } });
    const reply = await replied(ctx, key, commentId);
    check(reply.status === 'failed', `reply ${reply.status}`);
    return commentReplyWorkflowId(reply.id);
  },
  /** A published reply deleted: the moderation workflow asks Mastodon, then records it. */
  'comment-reply-deleted': async (ctx) => {
    const { key, commentId } = await collectedComment(ctx);
    const reply = await replied(ctx, key, commentId);
    check(reply.status === 'published', `reply ${reply.status}`);
    const gone = await call(ctx.stack.app, 'DELETE', `/v1/replies/${reply.id}`, { key });
    check(gone.status === 200 && gone.body.status === 'deleted', `delete answered ${gone.status} ${gone.body.status}`);
    return commentModerationWorkflowId({ action: 'delete', id: reply.id });
  },
  /**
   * Waits for approval: rejected (the decideApproval Update), edited (pending again), its time
   * passes, approved within the grace period (decideApproval), published.
   */
  'post-approval-rejected-edited-approved': async (ctx) => {
    const { key, approver, id } = await awaitingApproval(ctx);
    const no = await call(ctx.stack.app, 'POST', `/v1/posts/${id}/reject`, { key: approver, body: { comment: 'not yet' } });
    check(no.status === 200, `reject answered ${no.status}`);
    const edited = await call(ctx.stack.app, 'PATCH', `/v1/posts/${id}`, { key, body: { content: `edited ${crypto.randomUUID()}` } });
    check(edited.status === 200 && edited.body.approval.status === 'pending', `edit answered ${edited.status}`);
    await ctx.stack.env.sleep('2 hours');
    const yes = await call(ctx.stack.app, 'POST', `/v1/posts/${id}/approve`, { key: approver });
    check(yes.status === 200, `approve answered ${yes.status}`);
    await ctx.stack.settle(id);
    await expectPost(ctx, key, id, 'published');
    return postWorkflowId(id);
  },
  /** Waits for approval that never comes: past its time and the grace period, its channel fails with not_approved. */
  'post-approval-not-approved': async (ctx) => {
    const { key, id } = await awaitingApproval(ctx);
    await ctx.stack.env.sleep('26 hours');
    await ctx.stack.settle(id);
    await expectPost(ctx, key, id, 'failed');
    return postWorkflowId(id);
  },
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
  /**
   * A thread of three: the post and reply 1 published, reply 2 refused (422), the channel failed
   * at it; retried (the retryPost Update): reply 2 published, the post and reply 1 not sent again.
   */
  'post-thread-reply-failed-retried': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    beforeFollowUp = ({ position }) => {
      if (position !== 2) return;
      beforeFollowUp = null;
      ctx.fake.failNext(1, { status: 422, body: { error: 'Validation failed: Text is refused by this instance' } });
    };
    await ctx.stack.syncClock();
    const r = await call(ctx.stack.app, 'POST', '/v1/posts', {
      key,
      body: { content: `recorded ${crypto.randomUUID()}`, channelIds, thread: [{ content: 'reply one' }, { content: 'reply two' }] },
    });
    check(r.status === 201, `create answered ${r.status}`);
    const id = r.body.id as string;
    await ctx.stack.settle(id);
    const failed = (await call(ctx.stack.app, 'GET', `/v1/posts/${id}`, { key })).body;
    const statuses = failed.channels[0].items.map((i: { status: string }) => i.status).join(',');
    check(failed.status === 'failed' && statuses === 'published,published,failed', `thread ended ${failed.status} (${statuses})`);
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
  /**
   * A daily series: two occurrences created, the series edited (the seriesChanged Signal: the
   * workflow plans again), a third created with the new text, then deleted (the Signal again):
   * the workflow finds nothing to plan and ends.
   */
  'series-edited-deleted': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    const t0 = await ctx.stack.syncClock();
    const start = new Date(Math.ceil((t0.getTime() + 3_600_000) / 60_000) * 60_000);
    const r = await call(ctx.stack.app, 'POST', '/v1/series', {
      key,
      body: { content: 'version one', channelIds, publishAt: start.toISOString(), repeat: { every: 'day' } },
    });
    check(r.status === 201, `series create answered ${r.status}`);
    const id = r.body.id as string;
    await ctx.stack.env.sleep(start.getTime() - t0.getTime());
    await until('the first occurrence', async () => (await occurrenceCount(ctx.stack, id)) === 1);
    await ctx.stack.env.sleep('1 day');
    await until('the second occurrence', async () => (await occurrenceCount(ctx.stack, id)) === 2);
    await ctx.stack.syncClock();
    const edited = await call(ctx.stack.app, 'PATCH', `/v1/series/${id}`, { key, body: { content: 'version two' } });
    check(edited.status === 200, `series edit answered ${edited.status}`);
    await ctx.stack.env.sleep('1 day');
    await until('the third occurrence', async () => (await occurrenceCount(ctx.stack, id)) === 3);
    const third = (await ctx.stack.h.orm.em.fork().find(Post, { seriesId: id }, { orderBy: { scheduledAt: 'asc' } }))[2]!;
    check(third.content === 'version two', `third occurrence says ${third.content}`);
    await ctx.stack.syncClock();
    const del = await call(ctx.stack.app, 'DELETE', `/v1/series/${id}`, { key });
    check(del.status === 204, `series delete answered ${del.status}`);
    await untilClosed(ctx.stack, seriesWorkflowId(id));
    return seriesWorkflowId(id);
  },
  /** An event for two endpoints: one delivered at once, the other (always 500) attempted on the whole schedule, then failed. */
  'webhook-deliveries-delivered-and-failed': async (ctx) => {
    const { key, organizationId } = await account(ctx, []);
    await webhook(ctx, key, '/ok');
    await webhook(ctx, key, '/failing');
    const em = ctx.stack.h.orm.em.fork();
    const { eventId, deliveryIds } = await em.transactional(async (tx) => {
      const written = await writeWebhookEvent(tx, {
        organizationId,
        type: 'webhook.test',
        now: new Date(),
        data: { message: 'recorded deliveries' },
      });
      await tx.flush();
      return written;
    });
    check(deliveryIds.length === 2, `event has ${deliveryIds.length} deliveries`);
    // What the API does after committing an event.
    await dispatchWebhookDeliveries(em, { client: ctx.stack.client, taskQueue: ctx.stack.taskQueue }, deliveryIds);
    const workflowId = webhookEventWorkflowId(eventId);
    // The test environment's client lets the server skip the retry waits while it waits for the result.
    const outcomes = await ctx.stack.env.client.workflow.getHandle(workflowId).result();
    const rows = await ctx.stack.h.orm.em.fork().find(WebhookDelivery, { id: { $in: deliveryIds } });
    check(
      Object.values(outcomes).sort().join() === 'delivered,failed' && rows.some((r) => r.attempts > 1),
      `deliveries ended ${JSON.stringify(outcomes)}`,
    );
    return workflowId;
  },
  /** A finished delivery sent again: the deliveries workflow for it alone. */
  'webhook-redelivery': async (ctx) => {
    const { key } = await account(ctx, []);
    const endpointId = await webhook(ctx, key, '/again');
    await ctx.stack.syncClock();
    const sent = await call(ctx.stack.app, 'POST', `/v1/webhooks/${endpointId}/test`, { key });
    check(sent.status === 202, `test event answered ${sent.status}`);
    await ctx.stack.env.client.workflow.getHandle(webhookEventWorkflowId(sent.body.eventId)).result();
    const again = await call(ctx.stack.app, 'POST', `/v1/webhooks/${endpointId}/deliveries/${sent.body.deliveryId}/redeliver`, { key });
    check(again.status === 202, `redeliver answered ${again.status}`);
    const workflowId = webhookDeliveryWorkflowId(sent.body.deliveryId);
    const outcomes = await ctx.stack.env.client.workflow.getHandle(workflowId).result();
    check(outcomes[sent.body.deliveryId] === 'delivered', `redelivery ended ${JSON.stringify(outcomes)}`);
    return workflowId;
  },
  /** A delivery committed a minute ago and never started (its process died): the sweep starts it; it is delivered. */
  'webhook-outbox-sweep': async (ctx) => {
    const { key, organizationId } = await account(ctx, []);
    const endpointId = await webhook(ctx, key, '/swept');
    const em = ctx.stack.h.orm.em.fork();
    const { eventId, deliveryIds } = await em.transactional(async (tx) => {
      const written = await writeWebhookEvent(tx, {
        organizationId,
        type: 'webhook.test',
        endpointId,
        now: new Date(Date.now() - 60_000),
        data: { endpointId, message: 'committed, never dispatched' },
      });
      await tx.flush();
      return written;
    });
    const workflowId = `sweep-${crypto.randomUUID()}`;
    const result: WebhookOutboxSweepResult = await ctx.stack.client.workflow.execute(WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [WEBHOOK_OUTBOX_SWEEP_INPUT],
    });
    check(result.started >= 1, `sweep started ${result.started}`);
    const outcomes = await ctx.stack.env.client.workflow.getHandle(webhookEventWorkflowId(eventId)).result();
    check(outcomes[deliveryIds[0]!] === 'delivered', `swept delivery ended ${JSON.stringify(outcomes)}`);
    return workflowId;
  },
  /** Two published posts whose first readings fell due: the metrics sweep reads them a batch of one at a time. */
  'metrics-sweep': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      await ctx.stack.syncClock();
      const r = await call(ctx.stack.app, 'POST', '/v1/posts', { key, body: { content: `recorded ${crypto.randomUUID()}`, channelIds } });
      check(r.status === 201, `create answered ${r.status}`);
      await ctx.stack.settle(r.body.id);
      ids.push(r.body.id);
    }
    const due = new Date((await ctx.stack.syncClock()).getTime() - 1000);
    await ctx.stack.h.pool.query('update post_channels set metrics_next_at = $1 where post_id = any($2)', [due, ids]);
    const workflowId = `metrics-sweep-${crypto.randomUUID()}`;
    const input: MetricsSweepInput = { limit: 1, rounds: 3 };
    const result: MetricsSweepSummary = await ctx.stack.client.workflow.execute(METRICS_SWEEP_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [input],
    });
    check(result.read >= 2, `sweep read ${result.read}`);
    return workflowId;
  },
  /** Two published posts with a comment each: the comments sweep follows and reads them a batch of one at a time. */
  'comments-sweep': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    for (let i = 0; i < 2; i++) {
      await ctx.stack.syncClock();
      const r = await call(ctx.stack.app, 'POST', '/v1/posts', { key, body: { content: `recorded ${crypto.randomUUID()}`, channelIds } });
      check(r.status === 201, `create answered ${r.status}`);
      await ctx.stack.settle(r.body.id);
      const post = (await call(ctx.stack.app, 'GET', `/v1/posts/${r.body.id}`, { key })).body;
      const someone = {
        id: `9${i}`,
        username: `someone${i}`,
        acct: `someone${i}@else.example`,
        display_name: '',
        avatar: '',
        url: `https://else.example/@someone${i}`,
      };
      ctx.fake.reply(post.channels[0].platformPostId, someone, `comment ${i}`);
    }
    const workflowId = `comments-sweep-${crypto.randomUUID()}`;
    const input: CommentsSweepInput = { limit: 1, rounds: 3 };
    const result: CommentsSweepResult = await ctx.stack.client.workflow.execute(COMMENTS_SWEEP_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [input],
    });
    check(result.read >= 2 && result.stored >= 2, `sweep read ${result.read}, stored ${result.stored}`);
    return workflowId;
  },
  /** Two feeds with a new item each, due: the feed poll claims one a round and posts each item. */
  'feed-poll': async (ctx) => {
    const { key, channelIds } = await account(ctx, ['good-token']);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const feed = startFeedServer([{ guid: `urn:old:${i}`, title: `old ${i}`, link: `https://blog.example/old/${i}` }]);
      const r = await call(ctx.stack.app, 'POST', '/v1/feeds', { key, body: { url: feed.url, channelIds, template: '{title} {link}' } });
      check(r.status === 201, `feed create answered ${r.status}`);
      feed.items = [
        { guid: `urn:new:${i}`, title: `recorded ${crypto.randomUUID()}`, link: `https://blog.example/new/${i}` },
        ...feed.items,
      ];
      ids.push(r.body.id);
    }
    await ctx.stack.h.pool.query(`update feeds set next_poll_at = now() - interval '1 second' where id = any($1)`, [ids]);
    const workflowId = `feed-poll-${crypto.randomUUID()}`;
    const input: FeedPollInput = { limit: 1, rounds: 3 };
    const result: FeedPollSummary = await ctx.stack.client.workflow.execute(FEED_POLL_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [input],
    });
    check(result.polled === 2 && result.posted === 2, `feed poll: ${JSON.stringify(result)}`);
    return workflowId;
  },
  /** A post committed and deleted while its workflow start was lost: the reconciler only clears its mark. */
  'post-start-reconciler': async (ctx) => {
    const { organizationId, channelIds } = await account(ctx, ['good-token']);
    const id = newId('post');
    const conn = ctx.stack.h.orm.em.fork().getConnection();
    const at = new Date((await ctx.stack.syncClock()).getTime() + 86_400_000);
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, workflow_id,
         workflow_pending, deleted_at, created_at, updated_at)
       values (?, ?, 'scheduled', ?, '{}', '[]', 'api', ?, ?, true, now(), now() - interval '1 minute', now())`,
      [id, organizationId, `pending ${id}`, at, postWorkflowId(id)],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, created_at, updated_at)
       values (?, ?, ?, 'MASTODON', 'draft', ?, now(), now())`,
      [newId('pc'), id, channelIds[0]!, `pending ${id}`],
    );
    const workflowId = `reconcile-${crypto.randomUUID()}`;
    const result: PostReconcilerResult = await ctx.stack.client.workflow.execute(POST_RECONCILER_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [{ olderThanMs: 0, limit: 1000 }],
    });
    const row = await ctx.stack.h.orm.em.fork().findOneOrFail(Post, { id });
    check(result.cleared >= 1 && !row.workflowPending, `reconciler answered ${JSON.stringify(result)}`);
    return workflowId;
  },
  /** The wiring check: a durable timer, then the activity that reads Postgres. */
  ping: async (ctx) => {
    const workflowId = `ping-${crypto.randomUUID()}`;
    const result: { echo: string } = await ctx.stack.env.client.workflow.execute(PING_WORKFLOW_TYPE, {
      taskQueue: ctx.stack.taskQueue,
      workflowId,
      args: [{ message: 'recorded', delay: '1 minute' } satisfies PingInput],
    });
    check(result.echo === 'recorded', `ping answered ${JSON.stringify(result)}`);
    return workflowId;
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
  const stack = await startPostStack({
    storage: 'disk',
    publishInterceptors: [betweenItems],
    appDeps: { outbound: { allowPrivate: true } },
  });
  const fake = await startFakeMastodon();
  const received: string[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      received.push(path);
      await req.text();
      return new Response(path === '/failing' ? 'down' : 'ok', { status: path === '/failing' ? 500 : 200 });
    },
  });
  const receiver = { url: `http://127.0.0.1:${server.port}`, received };
  try {
    for (const { name, file } of targets) {
      const workflowId = await SCENARIOS[name]!({ stack, fake, receiver });
      const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
      writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
      console.log(`recorded ${name}: ${history.events?.length ?? 0} events → ${file}`);
    }
  } finally {
    server.stop(true);
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
