// The comments sweep (workflows/comments-sweep-types.ts): batches of due reads, one activity each,
// until a batch is not full or the rounds are spent; overlap SKIP, so two runs never work at once.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { CommentsSweepInput, CommentsSweepResult } from './comments-sweep-types.ts';

const { collectDueComments } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  // Safe to retry: a comment is stored once per (channel, platform comment id), and a read is
  // recorded as soon as it is made. The next scheduled run retries anyway.
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

export async function commentsSweepWorkflow(input: CommentsSweepInput): Promise<CommentsSweepResult> {
  const total: CommentsSweepResult = { read: 0, failed: 0, stopped: 0, stored: 0 };
  for (let round = 0; round < input.rounds; round++) {
    const r = await collectDueComments(input.postId === undefined ? { limit: input.limit } : { limit: input.limit, postId: input.postId });
    total.read += r.read;
    total.failed += r.failed;
    total.stopped += r.stopped;
    total.stored += r.stored;
    if (input.postId !== undefined || r.read + r.failed + r.stopped < input.limit) break;
  }
  return total;
}
