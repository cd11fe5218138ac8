// The start reconciler's activity (workflows/post-reconciler.ts, run by a Temporal Schedule):
// starts the workflow of every post, series, upload and reply committed but still marked workflow_pending some
// seconds later (a process died between its commit and its start), by the protocol of
// domain/workflow-starts.ts.
import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.ts';
import { UPLOAD_STARTS } from '../domain/media.ts';
import { POST_STARTS } from '../domain/posts/workflow-start.ts';
import { SERIES_STARTS } from '../domain/series/series.ts';
import { REPLY_STARTS } from '../domain/inbox/replies.ts';
import { reconcilePendingStarts } from '../domain/workflow-starts.ts';
import type { PostReconcilerInput, PostReconcilerResult } from '../workflows/post-reconciler-types.ts';

export function createReconcileActivities(deps: { orm: Orm }) {
  return {
    /** Posts (a create, a retry), series, uploads and replies; the reconciler's workflow type keeps its durable name. */
    async startPendingPosts(input: PostReconcilerInput): Promise<PostReconcilerResult> {
      const ctx = Context.current();
      const temporal = { client: ctx.client, taskQueue: ctx.info.taskQueue };
      const opts = { ...input, now: new Date(), beat: () => ctx.heartbeat() };
      const posts = await reconcilePendingStarts(deps.orm.em, temporal, POST_STARTS, opts);
      const series = await reconcilePendingStarts(deps.orm.em, temporal, SERIES_STARTS, opts);
      const uploads = await reconcilePendingStarts(deps.orm.em, temporal, UPLOAD_STARTS, opts);
      const replies = await reconcilePendingStarts(deps.orm.em, temporal, REPLY_STARTS, opts);
      const all = [posts, series, uploads, replies];
      const sum = (k: 'started' | 'alreadyStarted' | 'cleared') => all.reduce((n, r) => n + r[k], 0);
      return { started: sum('started'), alreadyStarted: sum('alreadyStarted'), cleared: sum('cleared') };
    },
  };
}
