// GET /v1/posts sends the same number of statements to Postgres whatever the
// page holds (no query per post, per channel or per media item), and its page shows each post
// exactly as GET /v1/posts/{id} does.
import { describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDiskStorage } from '../storage/disk.ts';
import { harness } from './harness/index.ts';
import { countQueries } from './harness/query-count.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

describe('GET /v1/posts: queries per page', () => {
  test('a page of 1 and a page of 20 (3 channels and 2 media items each) take the same statements; each post as GET /v1/posts/{id} shows it', async () => {
    const h = await harness();
    const org = await makeOrg('ENTERPRISE');
    const channels = [await makeChannel(org.id, 'MASTODON'), await makeChannel(org.id, 'BLUESKY'), await makeChannel(org.id, 'DISCORD')];
    const { key } = await makeKey(org.id);
    const conn = h.orm.em.fork().getConnection();
    const tag = crypto.randomUUID().slice(0, 8);
    await conn.execute(
      `insert into media_items (id, organization_id, type, status, file_name, mime_type, size_bytes, storage_key, upload_key,
         upload_expires_at, created_at, updated_at)
       select 'med_q' || g || '_' || ?, ?, 'image', 'ready', 'a.png', 'image/png', 10, 'media/q' || g || '_' || ?, 'uploads/q' || g || '_' || ?,
         now(), now(), now() from generate_series(1, 40) g`,
      [tag, org.id, tag, tag],
    );
    // 25 posts, each with two media items of its own, one of them listed twice, and one unknown id.
    await conn.execute(
      `insert into posts (id, organization_id, status, content, content_by_platform, media_ids, source, scheduled_at, published_at,
         reddit, created_at, updated_at)
       select 'post_q' || g || '_' || ?, ?, case when g % 2 = 0 then 'published' else 'scheduled' end, 'text ' || g, '{}',
         jsonb_build_array('med_q' || (2 * g - 1) % 40 + 1 || '_' || ?, 'med_q' || (2 * g) % 40 + 1 || '_' || ?, 'med_nope',
           'med_q' || (2 * g - 1) % 40 + 1 || '_' || ?),
         'api', now() + g * interval '1 hour', case when g % 2 = 0 then now() end,
         case when g % 5 = 0 then '{"subreddit":"test","title":"T"}'::jsonb end, now(), now()
       from generate_series(1, 25) g`,
      [tag, org.id, tag, tag, tag],
    );
    await conn.execute(
      `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, error,
         error_code, retryable, created_at, updated_at)
       select 'pc_q' || g || '_' || c.n || '_' || ?, 'post_q' || g || '_' || ?, c.id, c.platform,
         case when c.n = 3 then 'failed' when g % 2 = 0 then 'published' else 'draft' end, 'text ' || g,
         case when g % 2 = 0 and c.n < 3 then 'remote-' || g end, case when g % 2 = 0 and c.n < 3 then 'https://example.com/' || g end,
         case when g % 2 = 0 and c.n < 3 then now() end, case when c.n = 3 then 'it broke' end,
         case when c.n = 3 and g % 3 = 0 then 'rate_limited' end, null, now(), now()
       from generate_series(1, 25) g,
         (values (1, ?, 'MASTODON'), (2, ?, 'BLUESKY'), (3, ?, 'DISCORD')) as c(n, id, platform)`,
      [tag, tag, channels[0]!.id, channels[1]!.id, channels[2]!.id],
    );
    const root = mkdtempSync(join(tmpdir(), 'postpilot-list-queries-'));
    try {
      const storage = createDiskStorage({
        root,
        publicBaseUrl: 'http://127.0.0.1',
        signingKey: Buffer.alloc(32, 7),
        now: () => new Date('2026-11-24T10:00:00Z'),
      });
      // Pages read from Postgres every time (the page cache's kept pages: test/post-page-cache.test.ts).
      const app = await testApp({ storage, postPages: undefined });
      const list = (limit: number) => countQueries(() => call(app, 'GET', `/v1/posts?limit=${limit}`, { key }));
      await list(1); // the first request of the process prepares what it prepares
      const one = await list(1);
      const twenty = await list(20);
      expect(one.result.status).toBe(200);
      expect(twenty.result.status).toBe(200);
      expect(one.result.body.data).toHaveLength(1);
      expect(twenty.result.body.data).toHaveLength(20);
      expect(twenty.result.body.data.every((p: any) => p.channels.length === 3 && p.media.length === 3)).toBe(true);
      expect(twenty.queries.length).toBe(one.queries.length);
      // The key's admission and the page: two statements.
      expect(twenty.queries.length).toBeLessThanOrEqual(2);

      // The same posts as the single-post view shows them (loaded the other way, entity by entity).
      const pages = [...twenty.result.body.data];
      const rest = await call(app, 'GET', `/v1/posts?limit=20&cursor=${twenty.result.body.nextCursor}`, { key });
      pages.push(...rest.body.data);
      expect(pages).toHaveLength(25);
      for (const post of pages) expect(post).toEqual((await call(app, 'GET', `/v1/posts/${post.id}`, { key })).body);
      const failed = pages.flatMap((p: any) => p.channels).filter((c: any) => c.status === 'failed');
      expect(new Set(failed.map((c: any) => c.errorCode))).toEqual(new Set(['rate_limited', 'unknown']));
      expect(pages.some((p: any) => p.reddit?.subreddit === 'test')).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
