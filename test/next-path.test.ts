// A `next` path with characters a Location header cannot carry as they are (outside ASCII, some
// outside Latin-1): the redirect after the action carries it percent-encoded as UTF-8, so sign-in
// answers 303 with its session cookie and an approve answers 303, never a 500 after the action
// took effect (web/http.ts safeNextPath).
import { describe, expect, test } from 'bun:test';
import { Post } from '../db/entities/index.ts';
import type { FakeMastodon } from './fakes/mastodon.ts';
import { call, approvalSetUp } from './harness/fixtures.ts';
import { type PostStack, useMastodonStack } from './harness/mastodon-stack.ts';
import { Browser, signedInUser } from './harness/web-browser.ts';

let stack: PostStack;
let fake: FakeMastodon;

useMastodonStack({ publicBaseUrl: 'http://localhost' }, (s, f) => {
  stack = s;
  fake = f;
});

/** `next` as given, and the Location it gives. */
const NEXTS: [string, string][] = [
  ['/calendar?x=a→b', '/calendar?x=a%E2%86%92b'],
  ['/🙂 day', '/%F0%9F%99%82%20day'],
  ['/calendar?x=ü', '/calendar?x=%C3%BC'],
  ['/ünïcode', '/%C3%BCn%C3%AFcode'],
];
const HEADER_SAFE = /^[\x21-\x7e]+$/;

describe('next outside ASCII', () => {
  test('POST /sign-in: 303 with the session cookie and the path percent-encoded', async () => {
    const { email, password } = await signedInUser(stack.app);
    for (const [next, location] of NEXTS) {
      const b = new Browser(stack.app);
      const res = await b.signIn(email, password, next);
      expect({ next, status: res.status, location: res.location }).toEqual({ next, status: 303, location });
      expect(res.location).toMatch(HEADER_SAFE);
      expect(res.setCookies.some((c) => c.startsWith('pp_session='))).toBe(true);
    }
  });

  test('POST /posts/:id/approve: 303 to the percent-encoded path, the decision applied', async () => {
    const { browser: owner, org } = await signedInUser(stack.app, { plan: 'ENTERPRISE' });
    const { channel, author } = await approvalSetUp(org.id, fake.url);
    for (const [next, location] of NEXTS) {
      const publishAt = new Date((await stack.syncClock()).getTime() + 48 * 3_600_000).toISOString();
      const created = await call(stack.app, 'POST', '/v1/posts', {
        key: author.key,
        body: { content: `needs approval ${crypto.randomUUID()}`, channelIds: [channel.id], publishAt },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const res = await owner.post(`/posts/${id}/approve`, { next });
      expect({ next, status: res.status, location: res.location }).toEqual({
        next,
        status: 303,
        location: `${location}${location.includes('?') ? '&' : '?'}notice=approved`,
      });
      expect(res.location).toMatch(HEADER_SAFE);
      expect((await stack.h.orm.em.fork().findOneOrFail(Post, { id })).approval?.status).toBe('approved');
    }
  });
});
