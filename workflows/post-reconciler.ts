// The create reconciler (workflows/post-reconciler-types.ts): one activity, run by a Temporal
// Schedule every few seconds; overlap SKIP, so two runs never work at once.
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import type { PostReconcilerInput, PostReconcilerResult } from './post-reconciler-types.ts';

const { startPendingPosts } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  // Safe to retry: each post is started under its row lock with its workflow id as the key, and a
  // post already handled is no longer pending. The next scheduled run retries anyway.
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export async function postStartReconcilerWorkflow(input: PostReconcilerInput): Promise<PostReconcilerResult> {
  return startPendingPosts(input);
}
