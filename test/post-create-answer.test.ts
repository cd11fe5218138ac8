// The 201 of POST /v1/posts is the post as its create wrote it: no statement reads the new rows
// back after the commit, and the body is what GET /v1/posts/{id} shows (channels, media, reddit).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { call, makeChannel, makeKey, makeOrg } from './harness/fixtures.ts';
import { startPostStack } from './harness/post-stack.ts';
import { countQueries } from './harness/query-count.ts';

let stack: Awaited<ReturnType<typeof startPostStack>>;
beforeAll(async () => {
  stack = await startPostStack({ storage: 'disk' });
});
afterAll(async () => {
  await stack?.stop();
});

test('the create answers from the rows it wrote: nothing read back after the commit; the same body as GET /v1/posts/{id}', async () => {
  const org = await makeOrg('ENTERPRISE');
  const { key } = await makeKey(org.id);
  const mastodon = await makeChannel(org.id, 'MASTODON');
  const reddit = await makeChannel(org.id, 'REDDIT');
  const tag = crypto.randomUUID().slice(0, 8);
  const mediaId = `med_answer_${tag}`;
  await stack.h.orm.em
    .fork()
    .getConnection()
    .execute(
      `insert into media_items (id, organization_id, type, status, file_name, mime_type, size_bytes, storage_key, upload_key,
         upload_expires_at, width, height, created_at, updated_at)
       values (?, ?, 'image', 'ready', 'a.png', 'image/png', 10, ?, ?, now(), 10, 10, now(), now())`,
      [mediaId, org.id, `media/${tag}.png`, `uploads/${tag}.png`],
    );
  await stack.syncClock();
  const publishAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
  const { result: created, queries } = await countQueries(() =>
    call(stack.app, 'POST', '/v1/posts', {
      key,
      body: {
        content: `answer ${tag}`,
        contentByPlatform: { MASTODON: `answer on mastodon ${tag}` },
        channelIds: [mastodon.id, reddit.id],
        mediaIds: [mediaId],
        reddit: { subreddit: 'test', title: 'A title' },
        publishAt,
      },
    }),
  );
  expect(created.status).toBe(201);
  const afterCommit = queries.slice(queries.lastIndexOf('commit') + 1);
  // Only the start's bookkeeping (workflow_pending cleared) and the Idempotency-Key: no read of the rows.
  expect(afterCommit.filter((q) => /^select/i.test(q.trim()))).toEqual([]);
  const shown = await call(stack.app, 'GET', `/v1/posts/${created.body.id}`, { key });
  expect(shown.status).toBe(200);
  expect(created.body).toEqual(shown.body);
  expect(created.body).toMatchObject({
    status: 'scheduled',
    scheduledAt: publishAt,
    media: [{ id: mediaId, type: 'image', url: expect.stringContaining('http') }],
    reddit: { subreddit: 'test', title: 'A title' },
    channels: expect.arrayContaining([
      expect.objectContaining({ channelId: mastodon.id, content: `answer on mastodon ${tag}`, status: 'draft' }),
      expect.objectContaining({ channelId: reddit.id, content: `answer ${tag}`, status: 'draft' }),
    ]),
  });
});
