// The public API (SPEC.md) under /v1: its routes and the OpenAPI document built from them.
// server/app.ts mounts it beside the web app, with the hooks both share.
import { router } from '../http/router.ts';
import type { AppDeps } from '../http/deps.ts';
import { openApiRoutes } from './openapi/index.ts';
import type { RouteInfo } from './openapi/document.ts';
import { channelRoutes } from './routes/channels.ts';
import { meRoutes } from './routes/me.ts';
import { postRoutes } from './routes/posts.ts';
import { mediaRoutes } from './routes/media.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { queueRoutes } from './routes/queues.ts';
import { seriesRoutes } from './routes/series.ts';
import { tagRoutes } from './routes/tags.ts';
import { feedRoutes } from './routes/feeds.ts';
import { commentRoutes } from './routes/comments.ts';
import { draftRoutes } from './routes/drafts.ts';
import { generateRoutes } from './routes/generate.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { auditRoutes } from './routes/audit.ts';
import { auditHook } from './audit.ts';

/** `routes`: the finished app's route table, read at request time (the document describes it). */
export function v1Api(deps: AppDeps, routes: () => readonly RouteInfo[]) {
  return router().group('/v1', (v1) =>
    v1
      // Every successful change through /v1 goes to the audit log (api/audit.ts).
      .onAfterHandle(auditHook(deps, routes) as (ctx: unknown) => Promise<void>)
      .use(meRoutes(deps))
      .use(channelRoutes(deps))
      .use(postRoutes(deps))
      .use(mediaRoutes(deps))
      .use(webhookRoutes(deps))
      .use(queueRoutes(deps))
      .use(seriesRoutes(deps))
      .use(tagRoutes(deps))
      .use(feedRoutes(deps))
      .use(commentRoutes(deps))
      .use(draftRoutes(deps))
      .use(generateRoutes(deps))
      .use(analyticsRoutes(deps))
      .use(auditRoutes(deps))
      .use(openApiRoutes(routes)),
  );
}
