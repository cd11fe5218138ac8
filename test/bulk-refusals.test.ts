// POST /v1/posts/bulk in mode all_or_nothing: a batch refused names every refused row in
// details.rows — an invalid row does not hide a later row's duplicate_post — and creates nothing.
import { expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call } from './harness/fixtures.ts';
import { mastodonAccount, type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({}, (s, f) => {
  stack = s;
  fake = f;
});

const DAY = 86_400_000;

test('all_or_nothing: an invalid row and a duplicate_post row are both listed in details.rows, each with its error; nothing is created', async () => {
  const { orgId, key, channelId } = await mastodonAccount(stack, fake);
  const at = await stack.syncClock();
  const publishAt = new Date(at.getTime() + DAY).toISOString();
  const existing = { content: `already there ${crypto.randomUUID()}`, channelIds: [channelId], publishAt };
  const first = await call(stack.app, 'POST', '/v1/posts', { key, body: existing });
  expect(first.status).toBe(201);

  const tooLong = { content: 'x'.repeat(501), channelIds: [channelId], publishAt };
  const good = { content: `good ${crypto.randomUUID()}`, channelIds: [channelId], publishAt };
  const r = await call(stack.app, 'POST', '/v1/posts/bulk', { key, body: { mode: 'all_or_nothing', posts: [tooLong, existing, good] } });
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('validation_failed');
  expect(r.body.error.details.fields).toEqual([expect.objectContaining({ path: 'posts.0.content' })]);
  const rows = r.body.error.details.rows as { index: number; status: number; error: { code: string; details?: Record<string, unknown> } }[];
  expect(rows.map((x) => [x.index, x.status, x.error.code])).toEqual([
    [0, 422, 'validation_failed'],
    [1, 409, 'duplicate_post'],
  ]);
  expect(rows[1]!.error.details).toMatchObject({ postId: first.body.id, channelId: channelId });
  expect(r.body.error.message).toContain('and 1 more row');
  // Only the post made before the batch: the good row was not created either.
  const posts = await stack.h.orm.em.fork().find(Post, { organization: orgId });
  expect(posts.map((p) => p.id)).toEqual([first.body.id]);
});
