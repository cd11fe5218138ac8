// POST /v1/posts/{id}/approve and /reject answer with the post as decideApproval read it after the
// decision: one read of the post after the workflow's Update, with the storage, so its media URLs
// are signed as GET /v1/posts/{id} signs them.
import { describe, expect, test } from 'bun:test';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, makeOrg, readyMedia, approvalSetUp } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { countQueries } from './harness/query-count.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({ storage: 'disk' }, (s, f) => {
  stack = s;
  fake = f;
});

/** The statements that read the post for a key (getPostForKey's findOne; the worker's activities read it by id alone). */
const postReads = (queries: string[], id: string) =>
  queries.filter((q) => q.includes(`from "posts" as "p0" where "p0"."id" = '${id}' and "p0"."organization_id"`));

describe('approve and reject: the answer', () => {
  test('is the post as decided, read once after the decision, its media URLs signed', async () => {
    const org = await makeOrg('ENTERPRISE');
    const { channel, author, approver } = await approvalSetUp(org.id, fake.url);
    const mediaId = await readyMedia(stack.storage!, org.id);
    const at = await stack.syncClock();
    const created = await call(stack.app, 'POST', '/v1/posts', {
      key: author.key,
      body: {
        content: `with media ${crypto.randomUUID()}`,
        channelIds: [channel.id],
        mediaIds: [mediaId],
        publishAt: new Date(at.getTime() + 2 * 86_400_000).toISOString(),
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    for (const verb of ['approve', 'reject'] as const) {
      const { result: r, queries } = await countQueries(() => call(stack.app, 'POST', `/v1/posts/${id}/${verb}`, { key: approver }));
      expect(r.status).toBe(200);
      expect(r.body.approval.status).toBe(verb === 'approve' ? 'approved' : 'rejected');
      // The check before the Update, and the answer after it: no third read.
      expect(postReads(queries, id)).toHaveLength(2);
      const media = r.body.media as { id: string; url: string }[];
      expect(media.map((m) => m.id)).toEqual([mediaId]);
      expect(media[0]!.url).toStartWith('http://localhost/storage/object/'); // signed (unsigned: empty)
      // As GET shows it (the same signed URL: the storage's clock is the test's).
      const got = await call(stack.app, 'GET', `/v1/posts/${id}`, { key: approver });
      expect(r.body).toEqual(got.body);
    }
  });
});
