// One workflow per upload: wait (durably) for completion within the 15-minute window; on
// completion verify and process the bytes; with no completion in time, fail the item and
// delete whatever was uploaded. Then, for a ready item, the optional vision pass. Last, once the
// upload URL has expired, delete whatever a late PUT left under the upload key.
import { ApplicationFailure, condition, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { completeUploadUpdate, UPLOAD_FAILURE, uploadStateQuery, type UploadState, type UploadWorkflowInput } from './media-types.ts';

type Activities = ReturnType<typeof createActivities>;

const quick = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Safe to retry: reads, and writes that are idempotent (status transitions, deletes).
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

const processing = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  // Safe to retry: processUpload returns the stored outcome once the item is ready or failed,
  // and re-running it before that only rewrites the same thumbnail key.
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 5 },
});

const vision = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Safe to retry: it only writes `description`. Best effort: a failing endpoint leaves it null.
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', maximumAttempts: 3 },
});

/** Past the URL's expiry: S3 rounds presigned lifetimes up, and the API's clock may run behind. */
const RELEASE_GRACE_MS = 60_000;

export async function mediaUploadWorkflow(input: UploadWorkflowInput): Promise<UploadState> {
  const deadline = Date.parse(input.expiresAt);
  let state: UploadState = { phase: 'waiting' };
  let inFlight = 0;

  setHandler(uploadStateQuery, () => state);
  setHandler(
    completeUploadUpdate,
    async () => {
      inFlight++;
      try {
        if (state.phase === 'waiting') {
          const { present } = await quick.checkUploadedObject(input.mediaId);
          // Re-check: the window may have closed while we looked.
          if (state.phase !== 'waiting') return state;
          if (!present) throw ApplicationFailure.nonRetryable('the file has not been uploaded yet', UPLOAD_FAILURE.notReceived);
          state = { phase: 'processing' };
          const outcome = await processing.processUpload(input.mediaId);
          state = outcome.status === 'ready' ? { phase: 'ready' } : { phase: 'failed', reason: outcome.reason };
        }
        // A second complete while the first is processing waits for the same outcome.
        await condition(() => state.phase !== 'processing');
        return state;
      } finally {
        inFlight--;
      }
    },
    {
      validator: () => {
        if (state.phase === 'expired' || (state.phase === 'waiting' && Date.now() >= deadline)) {
          throw ApplicationFailure.nonRetryable('the 15-minute upload window has closed', UPLOAD_FAILURE.windowClosed);
        }
      },
    },
  );

  const remaining = deadline - Date.now();
  const completed = remaining > 0 && (await condition(() => state.phase !== 'waiting', remaining));
  // A complete accepted just before the deadline decides the outcome, not the timer.
  await condition(() => inFlight === 0);
  if (!completed && state.phase === 'waiting') {
    state = { phase: 'expired' };
    await quick.expireUpload(input.mediaId);
  } else {
    await condition(() => state.phase === 'ready' || state.phase === 'failed');
    if (state.phase === 'ready') await vision.describeMedia(input.mediaId).catch(() => undefined);
    // Let a late duplicate complete finish before the workflow ends.
    await condition(() => inFlight === 0);
  }
  // An S3 presigned PUT cannot be revoked: it may write the upload key until it expires.
  const wait = deadline + RELEASE_GRACE_MS - Date.now();
  if (wait > 0) await sleep(wait);
  await quick.releaseUpload(input.mediaId);
  return state;
}
