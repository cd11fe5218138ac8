// The workflow contracts (workflows/*-types.ts): the names sleeping executions carry, the worker
// registering each workflow under its contract's name, and the refusals the API maps by their
// typed errors — an Update's ApplicationFailure.type, WorkflowNotFoundError — never by message.
import { FEED_POLL_WORKFLOW_TYPE, type FeedPollWorkflow } from '../workflows/feed-poll-types.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { MediaItem } from '../db/entities/index.ts';
import { ApiError } from '../lib/errors.ts';
import { addChannel } from '../domain/channels.ts';
import { completeUpload } from '../domain/media.ts';
import { editPost } from '../domain/posts/edit.ts';
import { updateFailureType } from '../domain/temporal-calls.ts';
import * as workflows from '../workflows/index.ts';
import {
  completeUploadUpdate,
  MEDIA_UPLOAD_WORKFLOW_TYPE,
  UPLOAD_FAILURE,
  uploadStateQuery,
  uploadWorkflowId,
  type MediaUploadWorkflow,
} from '../workflows/media-types.ts';
import { PING_WORKFLOW_TYPE, type PingWorkflow } from '../workflows/ping-types.ts';
import {
  WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  type WebhookDeliveriesWorkflow,
  type WebhookDeliveryWorkflow,
} from '../workflows/webhook-delivery-types.ts';
import { POST_RECONCILER_WORKFLOW_TYPE, type PostReconcilerWorkflow } from '../workflows/post-reconciler-types.ts';
import { SERIES_WORKFLOW_TYPE, type SeriesWorkflow } from '../workflows/series-types.ts';
import { WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE, type WebhookOutboxSweepWorkflow } from '../workflows/webhook-outbox-sweep-types.ts';
import { WEBHOOK_FANOUT_WORKFLOW_TYPE, type WebhookFanoutWorkflow } from '../workflows/webhook-fanout-types.ts';
import { METRICS_SWEEP_WORKFLOW_TYPE, type MetricsSweepWorkflow } from '../workflows/metrics-sweep-types.ts';
import { COMMENTS_SWEEP_WORKFLOW_TYPE, type CommentsSweepWorkflow } from '../workflows/comments-sweep-types.ts';
import {
  COMMENT_MODERATION_WORKFLOW_TYPE,
  COMMENT_REPLY_WORKFLOW_TYPE,
  type CommentModerationWorkflow,
  type CommentReplyWorkflow,
  decideReplyUpdate,
} from '../workflows/comment-actions-types.ts';
import {
  cancelPostUpdate,
  editPostUpdate,
  FAILURE,
  PATCHED_POST_WORKFLOW_TYPE,
  POST_WORKFLOW_TYPE,
  postStateQuery,
  retryPostUpdate,
  retrySignal,
  postWorkflowId,
  type PostEdit,
  type PostWorkflow,
} from '../workflows/post-types.ts';
import { startFakeMastodon, type FakeMastodon } from './fakes/mastodon.ts';
import { call, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';

describe('workflow contracts', () => {
  test('the names are the durable ones, and the worker registers each workflow under its contract name and signature', () => {
    // Renaming any of these strands every execution started before the rename (and the recorded histories).
    expect([POST_WORKFLOW_TYPE, editPostUpdate.name, postStateQuery.name]).toEqual(['postWorkflowV2', 'editPost', 'state']);
    // The type of executions started before postWorkflowV2, still registered for them.
    expect(PATCHED_POST_WORKFLOW_TYPE).toBe('postWorkflow');
    // The retry Signal's name is also what operators type in the Temporal UI (docs/operations.md "Runbook").
    expect([cancelPostUpdate.name, retryPostUpdate.name, retrySignal.name]).toEqual(['cancelPost', 'retryPost', 'retry']);
    expect([MEDIA_UPLOAD_WORKFLOW_TYPE, completeUploadUpdate.name, uploadStateQuery.name]).toEqual([
      'mediaUploadWorkflow',
      'completeUpload',
      'state',
    ]);
    expect(PING_WORKFLOW_TYPE).toBe('pingWorkflow');
    expect(WEBHOOK_DELIVERIES_WORKFLOW_TYPE).toBe('webhookDeliveriesWorkflow');
    // The types of executions started before webhookDeliveriesWorkflow, still registered for them.
    expect(WEBHOOK_DELIVERY_WORKFLOW_TYPE).toBe('webhookDeliveryWorkflow');
    // Also the name the create reconciler's Temporal Schedule starts (worker/schedules.ts).
    expect(POST_RECONCILER_WORKFLOW_TYPE).toBe('postStartReconcilerWorkflow');
    // A series' workflow sleeps between occurrences for weeks; the outbox sweep is a Schedule's action.
    expect(SERIES_WORKFLOW_TYPE).toBe('seriesWorkflow');
    expect(WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE).toBe('webhookOutboxSweepWorkflow');
    expect(WEBHOOK_FANOUT_WORKFLOW_TYPE).toBe('webhookFanoutWorkflow');
    // The metrics sweep is a Schedule's action, and the workflow a post's refresh starts.
    expect(METRICS_SWEEP_WORKFLOW_TYPE).toBe('metricsSweepWorkflow');
    // The comments sweep is a Schedule's action.
    expect(COMMENTS_SWEEP_WORKFLOW_TYPE).toBe('commentsSweepWorkflow');
    // The feed poll is a Schedule's action, and the workflow a feed's poll-now starts.
    expect(FEED_POLL_WORKFLOW_TYPE).toBe('feedPollWorkflow');
    // A reply waits up to a day for its decision; its Update's name is what the API sends.
    expect([COMMENT_REPLY_WORKFLOW_TYPE, decideReplyUpdate.name, COMMENT_MODERATION_WORKFLOW_TYPE]).toEqual([
      'commentReplyWorkflow',
      'decideReply',
      'commentModerationWorkflow',
    ]);
    // The worker registers workflows by their export names in workflows/index.ts.
    const registered: { [name: string]: unknown } = workflows;
    expect(Object.keys(registered).sort()).toEqual(
      [
        MEDIA_UPLOAD_WORKFLOW_TYPE,
        PING_WORKFLOW_TYPE,
        POST_WORKFLOW_TYPE,
        PATCHED_POST_WORKFLOW_TYPE,
        WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
        WEBHOOK_DELIVERY_WORKFLOW_TYPE,
        POST_RECONCILER_WORKFLOW_TYPE,
        SERIES_WORKFLOW_TYPE,
        WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
        WEBHOOK_FANOUT_WORKFLOW_TYPE,
        METRICS_SWEEP_WORKFLOW_TYPE,
        COMMENTS_SWEEP_WORKFLOW_TYPE,
        FEED_POLL_WORKFLOW_TYPE,
        COMMENT_REPLY_WORKFLOW_TYPE,
        COMMENT_MODERATION_WORKFLOW_TYPE,
      ].sort(),
    );
    // Compile-time: each implementation has its contract's signature (typecheck fails otherwise).
    const signatures: [
      PostWorkflow,
      PostWorkflow,
      MediaUploadWorkflow,
      PingWorkflow,
      WebhookDeliveriesWorkflow,
      WebhookDeliveryWorkflow,
      PostReconcilerWorkflow,
      SeriesWorkflow,
      WebhookOutboxSweepWorkflow,
      WebhookFanoutWorkflow,
      MetricsSweepWorkflow,
      CommentsSweepWorkflow,
      FeedPollWorkflow,
      CommentReplyWorkflow,
      CommentModerationWorkflow,
    ] = [
      workflows.postWorkflowV2,
      workflows.postWorkflow,
      workflows.mediaUploadWorkflow,
      workflows.pingWorkflow,
      workflows.webhookDeliveriesWorkflow,
      workflows.webhookDeliveryWorkflow,
      workflows.postStartReconcilerWorkflow,
      workflows.seriesWorkflow,
      workflows.webhookOutboxSweepWorkflow,
      workflows.webhookFanoutWorkflow,
      workflows.metricsSweepWorkflow,
      workflows.commentsSweepWorkflow,
      workflows.feedPollWorkflow,
      workflows.commentReplyWorkflow,
      workflows.commentModerationWorkflow,
    ];
    expect(signatures.map((f) => f.name)).toEqual([
      POST_WORKFLOW_TYPE,
      PATCHED_POST_WORKFLOW_TYPE,
      MEDIA_UPLOAD_WORKFLOW_TYPE,
      PING_WORKFLOW_TYPE,
      WEBHOOK_DELIVERIES_WORKFLOW_TYPE,
      WEBHOOK_DELIVERY_WORKFLOW_TYPE,
      POST_RECONCILER_WORKFLOW_TYPE,
      SERIES_WORKFLOW_TYPE,
      WEBHOOK_OUTBOX_SWEEP_WORKFLOW_TYPE,
      WEBHOOK_FANOUT_WORKFLOW_TYPE,
      METRICS_SWEEP_WORKFLOW_TYPE,
      COMMENTS_SWEEP_WORKFLOW_TYPE,
      FEED_POLL_WORKFLOW_TYPE,
      COMMENT_REPLY_WORKFLOW_TYPE,
      COMMENT_MODERATION_WORKFLOW_TYPE,
    ]);
  });
});

/** Set by a test: publish attempts wait here (the workflow stays in its publishing phase). */
let gate: { entered: () => void; release: Promise<void> } | null = null;
const holdingPublishes: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      if (gate && ctx.info.activityType === 'publishToChannel') {
        gate.entered();
        await gate.release;
      }
      return next(input);
    },
  },
});

async function conflictOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).code;
}

describe('refusals by typed errors', () => {
  let stack: Awaited<ReturnType<typeof startPostStack>>;
  let fake: FakeMastodon;
  beforeAll(async () => {
    fake = await startFakeMastodon();
    stack = await startPostStack({ storage: 'disk', publishInterceptors: [holdingPublishes] });
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.stop();
  });
  const temporal = () => ({ client: stack.env.client, taskQueue: stack.taskQueue });

  test('an edit the workflow refuses → 409: while publishing (validator, PostNotScheduled) and once it has ended (WorkflowNotFoundError)', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
      organizationId: org.id,
      platform: 'MASTODON',
      name: 'mastodon',
      credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
    });
    await stack.syncClock();
    let entered!: () => void;
    const inPublish = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    gate = { entered, release: new Promise<void>((resolve) => (release = resolve)) };
    try {
      const r = await call(stack.app, 'POST', '/v1/posts', {
        key,
        body: { content: `contract ${crypto.randomUUID()}`, channelIds: [channel.id] },
      });
      expect(r.status).toBe(201);
      const postId = r.body.id as string;
      const handle = stack.env.client.workflow.getHandle(postWorkflowId(postId));
      const edit: PostEdit = { content: 'too late', channelContent: { [channel.id]: 'too late' } };

      await inPublish;
      expect((await handle.query(postStateQuery)).phase).toBe('publishing');
      const refused = await handle.executeUpdate(editPostUpdate, { args: [edit] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(updateFailureType(refused)).toBe(FAILURE.notScheduled);
      expect(await conflictOf(editPost(temporal(), postId, edit))).toBe('conflict');

      release();
      gate = null;
      await stack.settle(postId);
      const ended = await handle.executeUpdate(editPostUpdate, { args: [edit] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(ended).toBeInstanceOf(WorkflowNotFoundError);
      expect(await conflictOf(editPost(temporal(), postId, edit))).toBe('conflict');
    } finally {
      release();
      gate = null;
    }
  });

  test('completing an upload whose window the workflow has closed → 409: validator (UploadWindowClosed), and once it has ended (WorkflowNotFoundError)', async () => {
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    await stack.syncClock();
    const created = await call(stack.app, 'POST', '/v1/media/uploads', {
      key,
      body: { fileName: 'a.jpg', mimeType: 'image/jpeg', fileSize: 100 },
    });
    expect(created.status).toBe(201);
    const mediaId = created.body.media.id as string;
    const handle = stack.env.client.workflow.getHandle(uploadWorkflowId(mediaId));
    const em = () => stack.h.orm.em.fork();
    // Past the window, before the workflow releases the upload key (a minute later): it refuses completes.
    await stack.env.sleep('920 seconds');
    for (let i = 0; i < 200 && (await handle.query(uploadStateQuery)).phase !== 'expired'; i++) await Bun.sleep(20);
    for (let i = 0; i < 200 && (await em().findOneOrFail(MediaItem, { id: mediaId })).status !== 'failed'; i++) await Bun.sleep(20);
    const refused = await handle.executeUpdate(completeUploadUpdate).then(
      () => null,
      (e: unknown) => e,
    );
    expect(updateFailureType(refused)).toBe(UPLOAD_FAILURE.windowClosed);
    // A complete that read the row just before the expiry was written reaches the workflow.
    const stale = async () => {
      await em().nativeUpdate(MediaItem, { id: mediaId }, { status: 'pending', failureReason: null });
      return conflictOf(completeUpload(em(), temporal(), org.id, mediaId));
    };
    expect(await stale()).toBe('conflict');

    await stack.env.sleep('2 minutes');
    for (let i = 0; i < 200 && (await handle.describe()).status.name === 'RUNNING'; i++) await Bun.sleep(20);
    const ended = await handle.executeUpdate(completeUploadUpdate).then(
      () => null,
      (e: unknown) => e,
    );
    expect(ended).toBeInstanceOf(WorkflowNotFoundError);
    expect(await stale()).toBe('conflict');
  });
});
