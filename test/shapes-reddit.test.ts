// The Reddit fake held to the API reference's POST /api/submit form fields: a form with a value
// the reference does not allow is reported as Reddit reports it with api_type=json (200, the
// error in json.errors), a field it does not list is refused with 400; what the connector sends
// passes.
import { afterEach, describe, expect, test } from 'bun:test';
import { createRedditConnector } from '../platforms/reddit.ts';
import type { PublishRequest } from '../platforms/types.ts';
import { type FakeReddit, startFakeReddit } from './fakes/reddit.ts';

const fakes: FakeReddit[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function fake(): Promise<FakeReddit> {
  const f = await startFakeReddit();
  fakes.push(f);
  return f;
}

const connector = (f: FakeReddit) =>
  createRedditConnector({
    baseUrl: f.url,
    authBaseUrl: f.url,
    userAgent: 'server:postpilot-test:v1 (by /u/poster)',
    oauth: { clientId: 'client-id', clientSecret: 'client-secret' },
    timeoutMs: 2_000,
    pollIntervalMs: 5,
    pollTimeoutMs: 2_000,
  });

function request(over: Partial<PublishRequest> = {}): PublishRequest {
  return {
    text: 'Body of the post, in **markdown**.',
    media: [],
    idempotencyKey: 'post-1:channel-1',
    credentials: { accessToken: 'good-token' },
    reddit: { subreddit: 'test', title: 'A title for r/test' },
    ...over,
  };
}

/** A raw POST /api/submit, as a client other than the connector would send it. */
async function submit(f: FakeReddit, form: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/api/submit`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'test' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: await res.json() };
}

const good = { api_type: 'json', sr: 'test', kind: 'self', title: 'A title', text: 'Body' };

describe('Reddit published shapes', () => {
  test('the fake reports a form that breaks the reference in json.errors, as Reddit does with api_type=json', async () => {
    const f = await fake();
    const cases: [Record<string, string>, [string, string, string]][] = [
      [{ ...good, kind: 'poll' }, ['INVALID_OPTION', 'that option is not valid', 'kind']],
      [{ ...good, title: 'x'.repeat(301) }, ['TOO_LONG', 'this is too long (max: 300)', 'title']],
      [
        { ...good, sr: 'no such name!' },
        ['BAD_SR_NAME', "This community name isn't recognizable. Check the spelling and try again.", 'sr'],
      ],
      [{ ...good, nsfw: 'yes' }, ['INVALID_OPTION', 'that option is not valid', 'nsfw']],
      [{ ...good, flair_text: 'x'.repeat(65) }, ['TOO_LONG', 'this is too long (max: 64)', 'flair_text']],
    ];
    for (const [form, error] of cases) expect(await submit(f, form)).toEqual({ status: 200, body: { json: { errors: [error] } } });
    expect(await submit(f, { ...good, subreddit: 'test' })).toEqual({ status: 400, body: { message: 'Bad Request', error: 400 } });
    expect(f.posts).toHaveLength(0);
  });

  test('what the connector sends passes the fake’s schema (a text post marked NSFW and spoiler)', async () => {
    const f = await fake();
    await connector(f).publish(request({ options: { nsfw: true, spoiler: true } }));
    expect(f.posts.map((p) => [p.kind, p.subreddit, p.title, p.nsfw, p.spoiler])).toEqual([
      ['self', 'test', 'A title for r/test', true, true],
    ]);
  });
});
