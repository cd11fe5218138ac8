// Activities of the feed poll (workflows/feed-poll.ts): claim the feeds that are due (or the one
// asked for), read one and post its new items (domain/feeds/poll.ts). A worker shutting down cancels a read under way
// (its fetch is aborted), so the retry on another worker starts at once.
import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { claimFeeds, pollFeed, type PollOutcome } from '../domain/feeds/poll.ts';
import type { WebhookEmitter } from './webhook-events.ts';

export function createFeedActivities(deps: {
  orm: Orm;
  outbound: OutboundPolicy;
  webhooks: WebhookEmitter;
  /** The worker's main task queue, where the posts' workflows run; the activity's own when unset. */
  taskQueue?: string;
  now?: () => Date;
  /** The transport under the guard (tests). */
  transport?: typeof fetch;
}) {
  const now = () => deps.now?.() ?? new Date();
  return {
    /** The feeds due now (the sweep), or the one feed of a read asked for (`feedId`): domain/feeds/poll.ts claimFeeds. */
    async claimDueFeeds(input: { limit: number; feedId?: string }): Promise<string[]> {
      return claimFeeds(deps.orm.em.fork(), { limit: input.limit, now: now(), feedId: input.feedId });
    },
    async pollFeed(input: { feedId: string }): Promise<PollOutcome> {
      const ctx = Context.current();
      return pollFeed(
        deps.orm.em.fork(),
        {
          temporal: { client: ctx.client, taskQueue: deps.taskQueue ?? ctx.info.taskQueue },
          outbound: deps.outbound,
          events: deps.webhooks,
          transport: deps.transport,
          signal: ctx.cancellationSignal,
        },
        input.feedId,
        now(),
      );
    },
  };
}
