// Every committed history in test/fixtures/histories/ must replay against today's workflow code:
// a post can sleep for months, so a change that makes an older execution non-deterministic
// fails here, not in production. Recording and the policy: docs/changing-workflows.md.
import { beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import * as registeredWorkflows from '../workflows/index.ts';
import { harness } from './harness/index.ts';

const DIR = join(import.meta.dir, 'fixtures/histories');
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const load = (file: string) => historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
const workflowType = (file: string) => load(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name;

let workflowBundle: { code: string };
beforeAll(async () => {
  workflowBundle = await (await harness()).workflowBundle();
});

describe('recorded workflow histories', () => {
  test('cover every workflow type the worker registers', () => {
    // The worker registers each export of workflows/index.ts under its export name, which is the
    // workflow type its executions record: a type with no history here is one whose change no
    // replay would catch.
    const registered = Object.entries(registeredWorkflows)
      .filter(([, v]) => typeof v === 'function')
      .map(([name]) => name)
      .sort();
    expect(registered.length).toBeGreaterThan(0);
    const recorded = new Set(files.map(workflowType));
    expect(registered.filter((type) => !recorded.has(type))).toEqual([]);
  });

  test('hold each scenario, run to its end: post scheduled → edited → published, partial and reauth failures, cancel, delete and retry, a thread resumed at its failed reply; approval rejected, edited and approved, and never given; upload expired and ready; series edited and deleted; webhook delivery retried then failed, fan-out, outbox sweep; metrics sweep; feed poll; start reconciler; ping', () => {
    for (const name of [
      'post-scheduled-edited-published',
      // Before the await-retry patch: a failed post's workflow ended at once.
      'post-partial-failure',
      'post-reauth-failure',
      // With it: the failed post waits for a retry, which comes (Update, Signal, a new run) or not.
      'post-partial-failure-await-retry',
      'post-reauth-failure-retried',
      'post-failure-signal-retried',
      'post-failure-deleted',
      'post-retry-new-run',
      'post-scheduled-cancelled',
      // A thread: its items one by one, a reply refused, the retry resuming at it.
      'post-thread-reply-failed-retried',
      // Approval: rejected, edited, approved after its time; and never approved (not_approved).
      'post-approval-rejected-edited-approved',
      'post-approval-not-approved',
      'media-upload-expired',
      'media-upload-ready',
      // From the row-check-at-publish patch on (no activity before the sleep; no other patch marker):
      // published after an edit, approval both ways, cancelled, failed and retried, a thread, a new run.
      'post-scheduled-edited-published-row-at-publish',
      'post-approval-rejected-edited-approved-row-at-publish',
      'post-approval-not-approved-row-at-publish',
      'post-scheduled-cancelled-row-at-publish',
      'post-reauth-failure-retried-row-at-publish',
      'post-thread-reply-failed-retried-row-at-publish',
      'post-retry-new-run-row-at-publish',
      // The same, as postWorkflowV2 executions (no patch marker).
      'post-scheduled-edited-published-v2',
      'post-approval-rejected-edited-approved-v2',
      'post-approval-not-approved-v2',
      'post-scheduled-cancelled-v2',
      'post-reauth-failure-retried-v2',
      'post-thread-reply-failed-retried-v2',
      'post-retry-new-run-v2',
      // The other workflow types, each along its longest path.
      'series-edited-deleted',
      'webhook-deliveries-delivered-and-failed',
      'webhook-redelivery',
      // The single-delivery and fan-out workflows of the executions started before the deliveries workflow.
      'webhook-delivery-retried-failed',
      'webhook-fanout',
      'webhook-outbox-sweep',
      'metrics-sweep',
      'comments-sweep',
      'feed-poll',
      'post-start-reconciler',
      'ping',
    ]) {
      expect(files).toContain(`${name}.json`);
    }
    const types = files.map(workflowType);
    expect(types).toContain('postWorkflow');
    expect(types).toContain('postWorkflowV2');
    expect(types).toContain('mediaUploadWorkflow');
    // Each ran to its end: a replay covers every command the code issued.
    for (const f of files)
      expect(load(f).events?.at(-1)?.eventType).toBe(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  });

  test('every one replays against the current workflow code without nondeterminism', async () => {
    const histories: HistoryAndWorkflowId[] = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: load(f) }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}.json: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  });

  test('a history the code no longer matches is caught (the check is live)', async () => {
    // Rename the first activity the recorded post execution scheduled: the code schedules
    // confirmPost there, so replay must stop with a determinism violation.
    const history = load('post-scheduled-edited-published.json');
    const scheduled = history.events!.find((e) => e.activityTaskScheduledEventAttributes)!.activityTaskScheduledEventAttributes!;
    expect(scheduled.activityType!.name).toBe('confirmPost');
    scheduled.activityType!.name = 'confirmPostV0';
    const err = await Worker.runReplayHistory({ workflowBundle }, history, 'tampered').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DeterminismViolationError);
  });
});
