// The feed poll's contract (domain/feeds/poll.ts): a Temporal Schedule (worker/schedules.ts) runs
// this workflow every minute; it claims the feeds that are due and reads each (activities/feeds.ts).
// The state is in Postgres (feeds.next_poll_at, feed_items), not in a workflow per feed. Plain
// data only; the names are durable (the schedule and recorded histories carry them) — never rename.

/** The workflow type (workflows/feed-poll.ts, registered by its export in workflows/index.ts). */
export const FEED_POLL_WORKFLOW_TYPE = 'feedPollWorkflow';
/** The Temporal Schedule that runs it (worker/schedules.ts). */
export const FEED_POLL_SCHEDULE_ID = 'postpilot-feed-poll';

export interface FeedPollInput {
  /** Feeds claimed per round at most. */
  limit: number;
  /** Rounds per run at most; a run that claimed a full batch takes the next. */
  rounds: number;
  /** Only this feed, now: a read asked for (POST /v1/feeds/{id}/poll). */
  feedId?: string;
}

/** The workflow id of an asked-for read: one at a time per feed. */
export const feedPollNowWorkflowId = (feedId: string) => `feed-poll-${feedId}`;

export interface FeedPollSummary {
  polled: number;
  posted: number;
  failed: number;
}

export type FeedPollWorkflow = (input: FeedPollInput) => Promise<FeedPollSummary>;

export const FEED_POLL_EVERY = '1 minute';
export const FEED_POLL_INPUT: FeedPollInput = { limit: 50, rounds: 10 };
/** Feeds read at once in a round. */
export const FEEDS_AT_ONCE = 4;
