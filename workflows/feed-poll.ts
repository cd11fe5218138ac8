// The feed poll (workflows/feed-poll-types.ts): rounds of due feeds, each read by its own activity,
// FEEDS_AT_ONCE at a time; overlap SKIP on the schedule, so two sweeps never claim at once.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities/index.ts';
import { FEEDS_AT_ONCE, type FeedPollInput, type FeedPollSummary } from './feed-poll-types.ts';

/** A read asked for claims its feed as the sweep does (domain/feeds/poll.ts claimFeeds). */
export const READ_NOW_CLAIMS_PATCH = 'feed-read-now-claims';

const { claimDueFeeds } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

const { pollFeed } = proxyActivities<ReturnType<typeof createActivities>>({
  // A read has FEED_TIMEOUT_MS (20 s), then at most MAX_POSTS_PER_POLL creates.
  startToCloseTimeout: '3 minutes',
  // Safe to retry: each item's post has a fixed id and each item is recorded once
  // (domain/feeds/poll.ts). The next sweep reads the feed again anyway.
  retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
});

export async function feedPollWorkflow(input: FeedPollInput): Promise<FeedPollSummary> {
  const total: FeedPollSummary = { polled: 0, posted: 0, failed: 0 };
  const poll = async (feedId: string) => {
    const r = await pollFeed({ feedId });
    total.polled++;
    if (r.outcome === 'read') total.posted += r.posted;
    if (r.outcome === 'failed') total.failed++;
  };
  if (input.feedId !== undefined) {
    // Not claimed: another read holds the feed now, and this one does not read it twice.
    if (patched(READ_NOW_CLAIMS_PATCH) && !(await claimDueFeeds({ limit: 1, feedId: input.feedId })).length) return total;
    await poll(input.feedId);
    return total;
  }
  for (let round = 0; round < input.rounds; round++) {
    const ids = await claimDueFeeds({ limit: input.limit });
    for (let i = 0; i < ids.length; i += FEEDS_AT_ONCE) await Promise.all(ids.slice(i, i + FEEDS_AT_ONCE).map(poll));
    if (ids.length < input.limit) break;
  }
  return total;
}
