// Activities of the feed poll (workflows/feed-poll.ts): claim the feeds that are due, read one
// and post its new items (domain/feeds/poll.ts). A worker shutting down cancels a read under way
// (its fetch is aborted), so the retry on another worker starts at once.
import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { claimDueFeeds, pollFeed, type PollOutcome } from '../domain/feeds/poll.ts';
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
    async claimDueFeeds(input: { limit: number }): Promise<string[]> {
      return claimDueFeeds(deps.orm.em.fork(), input.limit, now());
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
