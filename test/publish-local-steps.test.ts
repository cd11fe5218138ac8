// Publishing now without a Temporal round trip per step: the post workflow runs its
// short Postgres steps (confirmPost, startPublishing, finishPost…) as local activities, in the workflow task itself
// (workflows/post.ts, LOCAL_STEPS_PATCH), and checks its row only when the post is due
// (ROW_AT_PUBLISH_PATCH; postWorkflowV2 takes every patch without a marker). The guarantee stays: a workflow started before its post row is
// committed (as an API of older code does, starting inside its transaction) publishes nothing
// until the commit — its startPublishing finds no row, its local confirmPost keeps retrying — and
// then publishes once.
// Real worker, real Postgres, the fake Mastodon, on the time-skipping server.
import { describe, expect, test } from 'bun:test';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Post, PostChannel } from '../db/entities/index.ts';
import { newId } from '../lib/ids.ts';
import { addChannel } from '../domain/channels.ts';
import { ROW_AT_PUBLISH_PATCH } from '../workflows/post.ts';
import { PATCHED_POST_WORKFLOW_TYPE, POST_WORKFLOW_TYPE, postWorkflowId, type PostWorkflow } from '../workflows/post-types.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { makeOrg } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { patchId } from './harness/history-events.ts';
import { quiet } from './harness/quiet.ts';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

/**
 * A local activity's marker data (Core's `core_local_activity` marker): its name and the attempt
 * that completed, or with `backoff` the attempt that failed and handed its retries to a workflow
 * timer (a backoff past localRetryThreshold).
 */
type LocalActivityMarker = { activity_type: string; attempt: number; backoff?: unknown };
function localActivity(e: HistoryEvent): LocalActivityMarker | undefined {
  const m = e.markerRecordedEventAttributes;
  const data = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0] : undefined;
  return data ? defaultPayloadConverter.fromPayload(data) : undefined;
}
/** The local activities that completed (not those that went on to retry through a timer). */
const completedLocally = (evs: HistoryEvent[]) =>
  evs.map(localActivity).filter((m): m is LocalActivityMarker => m !== undefined && !m.backoff);
const patchMarker = (e: HistoryEvent) => patchId(e) === ROW_AT_PUBLISH_PATCH;
/** A patch's marker or its TemporalChangeVersion upsert: the two events postWorkflowV2 does without. */
const patchEvents = (evs: HistoryEvent[]) =>
  evs.filter((e) => patchId(e) !== undefined || e.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES);
const scheduledNames = (evs: HistoryEvent[]) =>
  evs.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n);

/** An organization with a Mastodon channel on the fake. */
async function mastodonChannel() {
  const org = await makeOrg();
  const channel = await addChannel(stack.h.orm.em.fork(), stack.h.credentialsKey, {
    organizationId: org.id,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl: fake.url, accessToken: 'good-token' },
  });
  return { org, channel };
}

/** A post due now and its channel row, as the API writes them, in `tx` (flushed, not committed). */
async function writePostRows(tx: EntityManager, postId: string, organizationId: string, channelId: string, text: string) {
  tx.create(Post, {
    id: postId,
    organization: organizationId,
    status: 'scheduled',
    content: text,
    contentByPlatform: {},
    mediaIds: [],
    source: 'api',
    scheduledAt: new Date(await stack.env.currentTimeMs()),
    workflowId: postWorkflowId(postId),
  });
  tx.create(PostChannel, { id: newId('pc'), post: postId, channel: channelId, platform: 'MASTODON', status: 'draft', content: text });
  await tx.flush();
}

describe('post workflow: confirm and start publishing as local activities', () => {
  test('started before its row is committed, it publishes nothing until the commit (its local confirmPost retries), then publishes once', async () => {
    const { org, channel } = await mastodonChannel();
    const postId = newId('post');
    const text = `uncommitted ${randomUUID()}`;
    const sent = () => fake.statuses.filter((s) => s.text === text);
    let handle!: WorkflowHandle<PostWorkflow>;

    await stack.h.orm.em.fork().transactional(async (tx) => {
      await writePostRows(tx, postId, org.id, channel.id, text);
      // Started inside the transaction, before the commit; publish now.
      handle = await stack.client.workflow.start<PostWorkflow>(POST_WORKFLOW_TYPE, {
        taskQueue: stack.taskQueue,
        workflowId: postWorkflowId(postId),
        args: [{ postId, organizationId: org.id, publishAt: null }],
      });
      // Its local startPublishing finds no row; its local confirmPost then retries in the worker
      // for a second, then through a workflow timer: the workflow task completes and the
      // workflow waits on that timer with nothing in flight, having gone no further.
      expect(await quiet(stack.client, handle.workflowId)).toBe('waiting');
      expect(sent()).toHaveLength(0);
      const evs = (await handle.fetchHistory()).events ?? [];
      expect(scheduledNames(evs)).not.toContain('publishToChannel');
      expect(completedLocally(evs).map((m) => m.activity_type)).toEqual(['startPublishing']);
      expect(evs.map(localActivity).filter(Boolean)).toEqual([
        expect.objectContaining({ activity_type: 'startPublishing' }),
        expect.objectContaining({ activity_type: 'confirmPost', backoff: expect.anything() }),
      ]);
    });

    // Committed: the post is published, once.
    expect(await stack.settle(postId)).toEqual({ phase: 'done', publishAt: null });
    expect(sent()).toHaveLength(1);
    expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id: postId })).status).toBe('published');

    // Every patch's path without a marker: the steps run locally (no round trip each), the
    // confirm only after more than one attempt (it waited for the commit), then the publish.
    const evs = (await handle.fetchHistory()).events ?? [];
    expect(patchEvents(evs)).toEqual([]);
    const local = completedLocally(evs);
    expect(local.map((m) => m.activity_type)).toEqual(['startPublishing', 'confirmPost', 'startPublishing', 'finishPost']);
    expect(local[1]!.attempt).toBeGreaterThan(1);
    expect(scheduledNames(evs)).toEqual(['publishToChannel']);
  });

  for (const [type, first] of [
    [POST_WORKFLOW_TYPE, ['startPublishing', 'publishToChannel']],
    // Started by an API of older code during a deploy: the same path behind the patch's marker.
    [PATCHED_POST_WORKFLOW_TYPE, ['patch', 'startPublishing', 'publishToChannel']],
  ] as const)
    test(`${type}: a post due now whose row is committed: start publishing and the publish activity in one workflow task, no row check before`, async () => {
      const { org, channel } = await mastodonChannel();
      const postId = newId('post');
      const text = `committed ${randomUUID()}`;
      await stack.h.orm.em.fork().transactional((tx) => writePostRows(tx, postId, org.id, channel.id, text));
      const handle = await stack.client.workflow.start<PostWorkflow>(type, {
        taskQueue: stack.taskQueue,
        workflowId: postWorkflowId(postId),
        args: [{ postId, organizationId: org.id, publishAt: null }],
      });
      expect(await stack.settle(postId)).toEqual({ phase: 'done', publishAt: null });
      expect(fake.statuses.filter((s) => s.text === text)).toHaveLength(1);
      const evs = (await handle.fetchHistory()).events ?? [];
      // The first workflow task's commands: (the patch marker,) startPublishing's local-activity marker, the publish.
      const firstDone = evs.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      const next = evs.slice(firstDone + 1);
      const commands = next.slice(0, next.findIndex((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) + 1);
      expect(
        commands
          .filter((e) => e.eventType !== EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) // the patch's TemporalChangeVersion
          .map((e) =>
            patchMarker(e) ? 'patch' : (localActivity(e)?.activity_type ?? e.activityTaskScheduledEventAttributes?.activityType?.name),
          ),
      ).toEqual([...first]);
      // The patched type records its marker and upsert once; postWorkflowV2 neither.
      expect(patchEvents(evs)).toHaveLength(type === POST_WORKFLOW_TYPE ? 0 : 2);
      expect(evs.map(localActivity).some((m) => m?.activity_type === 'confirmPost')).toBe(false);
    });
});
