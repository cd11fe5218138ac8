// The API process's caches, built the same way by the server (server/run.ts) and by the tests:
// one change feed (db/change-feed.ts) on the database, the admission cache in the rate limiter
// (services/admission-cache.ts) and GET /v1/posts's pages (domain/posts/page-cache.ts), each
// on when asked for.
import type { Pool } from 'pg';
import { createChangeFeed } from '../db/change-feed.ts';
import { createPostPageCache, type PostPageCache } from '../domain/posts/page-cache.ts';
import { createRateLimiter, type RateLimiter } from '../services/rate-limit.ts';

export interface ProcessCaches {
  rateLimiter: RateLimiter;
  postPages?: PostPageCache;
  /** Settles once each cache's first attempt to listen has ended. */
  ready: Promise<void>;
  /** Writes the admission counts not written yet and closes the feed; the pool stays the caller's. */
  close(): Promise<void>;
}

export function createProcessCaches(o: {
  connectionString: string;
  /** The rate limiter's pool (createRateLimiterPool). */
  pool: Pool;
  admission: boolean;
  pages: boolean;
  onError?: (message: string, err: unknown) => void;
  /** The change feed's session name (db/change-feed.ts). */
  applicationName?: string;
}): ProcessCaches {
  const onError = o.onError ?? (() => {});
  const feed =
    o.admission || o.pages
      ? createChangeFeed({
          connectionString: o.connectionString,
          onError,
          ...(o.applicationName ? { applicationName: o.applicationName } : {}),
        })
      : undefined;
  const rateLimiter = createRateLimiter(o.pool, o.admission && feed ? { cache: { feed, onError } } : {});
  const postPages = o.pages && feed ? createPostPageCache(feed) : undefined;
  return {
    rateLimiter,
    ...(postPages ? { postPages } : {}),
    ready: Promise.all([rateLimiter.cache?.ready, postPages?.ready]).then(() => {}),
    async close() {
      await rateLimiter.close();
      postPages?.close();
      await feed?.close();
    },
  };
}
