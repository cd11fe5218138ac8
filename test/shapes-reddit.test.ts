// Reddit's published contract (the API reference's /api/submit and /api/comment, and the gallery
// submit and media lease as PRAW sends them, held as TypeBox schemas in
// platforms/contracts/reddit.ts): the type-level checks below fail `tsc` when the types the
// connector builds its forms and bodies with stop refusing what Reddit does not take; the runtime
// tests show the fake refusing a request that breaks them as Reddit does with api_type=json (200,
// the error in json.errors; 403 for a comment on no thing; 400 for a lease of a type Reddit does
// not take), a field the documentation does not list refused with 400, and what the connector
// sends passing.
import { describe, expect, test } from 'bun:test';
import type { AssetLeaseForm, CommentForm, GalleryBody, SubmitForm } from '../platforms/contracts/reddit.ts';
import { createRedditConnector } from '../platforms/reddit.ts';
import type { MediaRef, PublishRequest } from '../platforms/types.ts';
import { type FakeReddit, startFakeReddit } from './fakes/reddit.ts';
import { perTest } from './harness/per-test.ts';

const item = { media_id: 'abc123', caption: '', outbound_url: '' };

// The types the connector builds its requests with refuse what Reddit does not take.
export const typeChecks: { submit: SubmitForm[]; comment: CommentForm[]; gallery: GalleryBody[]; lease: AssetLeaseForm[] } = {
  submit: [
    {
      api_type: 'json',
      sr: 'test',
      kind: 'self',
      title: 'A title',
      // @ts-expect-error the subreddit is `sr`; /api/submit has no `subreddit` field
      subreddit: 'test',
    },
    {
      api_type: 'json',
      // @ts-expect-error "poll" is no kind of /api/submit (link, self, image, video, videogif)
      kind: 'poll',
    },
    {
      api_type: 'json',
      kind: 'self',
      // @ts-expect-error a form's flag is the text "true" or "false", not a boolean
      nsfw: true,
    },
  ],
  comment: [
    {
      api_type: 'json',
      text: 'Nice',
      // @ts-expect-error what a comment answers is `thing_id`; the reference has no `parent`
      parent: 't3_abc',
    },
    {
      // @ts-expect-error api_type is "json" (the only value the reference lists)
      api_type: 'xml',
      thing_id: 't3_abc',
    },
    {
      api_type: 'json',
      thing_id: 't3_abc',
      // @ts-expect-error return_rtjson is a form flag, "true" or "false"
      return_rtjson: 'yes',
    },
  ],
  gallery: [
    {
      api_type: 'json',
      items: [item, item],
      // @ts-expect-error a gallery has no `kind`: the endpoint makes gallery posts only
      kind: 'self',
    },
    {
      api_type: 'json',
      // @ts-expect-error an item's alt text is its `caption`; items have no `alt_text`
      items: [{ ...item, alt_text: 'A kite' }, item],
    },
    {
      api_type: 'json',
      items: [item, item],
      // @ts-expect-error discussion_type is CHAT or absent
      discussion_type: 'LIVE',
    },
    {
      api_type: 'json',
      items: [item, item],
      // @ts-expect-error the JSON body's flags are booleans, not a form's "true"
      nsfw: 'true',
    },
  ],
  lease: [
    {
      filepath: 'a.png',
      mimetype: 'image/png',
      // @ts-expect-error the lease takes the file's name and type only; the bytes go to the bucket
      size: 1024,
    },
    {
      filepath: 'a.webp',
      // @ts-expect-error Reddit leases no WebP upload (PNG, JPEG, GIF, MP4, QuickTime)
      mimetype: 'image/webp',
    },
  ],
};

const fake = perTest(startFakeReddit);

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

/** A raw POST of a form to `path`, as a client other than the connector would send it. */
async function postForm(f: FakeReddit, path: string, form: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}${path}`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': 'test' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: await res.json() };
}

const submit = (f: FakeReddit, form: Record<string, string>) => postForm(f, '/api/submit', form);

/** A raw POST /api/submit_gallery_post.json. */
async function postGallery(f: FakeReddit, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${f.url}/api/submit_gallery_post.json`, {
    method: 'POST',
    headers: { Authorization: 'Bearer good-token', 'Content-Type': 'application/json', 'User-Agent': 'test' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const refused = (code: string, message: string, field: string) => ({ status: 200, body: { json: { errors: [[code, message, field]] } } });
const badRequest = { status: 400, body: { message: 'Bad Request', error: 400 } };

function png(id: string, altText: string): MediaRef {
  const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return { id, type: 'image', mimeType: 'image/png', fileName: `${id}.png`, altText, read: async () => bytes };
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

  test('what the connector sends passes the fake’s schemas (a text post marked NSFW and spoiler, a gallery, a comment)', async () => {
    const f = await fake();
    const c = connector(f);
    const post = await c.publish(request({ options: { nsfw: true, spoiler: true } }));
    await c.publish(request({ idempotencyKey: 'post-2:channel-1', media: [png('a', 'First'), png('b', 'Second')] }));
    await c.publish(request({ text: 'A first comment', idempotencyKey: 'post-1:channel-1:1', replyTo: { root: post, parent: post } }));
    expect(f.posts.map((p) => [p.kind, p.subreddit, p.title, p.nsfw, p.spoiler])).toEqual([
      ['self', 'test', 'A title for r/test', true, true],
      ['gallery', 'test', 'A title for r/test', false, false],
    ]);
    expect(f.uploads.map((u) => u.mimeType)).toEqual(['image/png', 'image/png']);
    expect(f.comments.map((x) => [x.parentId, x.body])).toEqual([[post.platformPostId, 'A first comment']]);
  });
});

describe('Reddit published shapes: the gallery submit, the comment, the media lease', () => {
  const gallery = { api_type: 'json', sr: 'test', title: 'A gallery', items: [item, { ...item, media_id: 'def456' }] };

  test('a gallery body that breaks the schema is reported in json.errors; an unlisted field gets 400', async () => {
    const f = await fake();
    const cases: [unknown, ReturnType<typeof refused>][] = [
      [{ ...gallery, nsfw: 'true' }, refused('INVALID_OPTION', 'that option is not valid', 'nsfw')],
      [{ ...gallery, discussion_type: 'LIVE' }, refused('INVALID_OPTION', 'that option is not valid', 'discussion_type')],
      [{ ...gallery, items: [{ ...item, caption: 'x'.repeat(181) }, item] }, refused('TOO_LONG', 'this is too long (max: 180)', 'caption')],
      [{ ...gallery, title: 'x'.repeat(301) }, refused('TOO_LONG', 'this is too long (max: 300)', 'title')],
      [
        { ...gallery, sr: 'no such name!' },
        refused('BAD_SR_NAME', "This community name isn't recognizable. Check the spelling and try again.", 'sr'),
      ],
      [{ api_type: 'json', sr: 'test', title: 'A gallery' }, refused('NO_TEXT', 'we need something here', 'items')],
    ];
    for (const [body, answer] of cases) expect(await postGallery(f, body)).toEqual(answer);
    expect(await postGallery(f, { ...gallery, kind: 'self' })).toEqual(badRequest);
    expect(await postGallery(f, { ...gallery, items: [{ ...item, url: 'https://example.com' }, item] })).toEqual(badRequest);
    expect(await postGallery(f, [gallery])).toEqual(badRequest);
    expect(f.posts).toHaveLength(0);
  });

  test('a comment on something that is no fullname gets 403, as one on a thing Reddit does not have; a bad flag json.errors; an unlisted field 400', async () => {
    const f = await fake();
    const forbidden = { status: 403, body: { message: 'Forbidden', error: 403 } };
    expect(await postForm(f, '/api/comment', { api_type: 'json', thing_id: 'abc123', text: 'Hi' })).toEqual(forbidden);
    expect(await postForm(f, '/api/comment', { api_type: 'json', parent: 't3_abc123', text: 'Hi' })).toEqual(forbidden);
    expect(await postForm(f, '/api/comment', { api_type: 'json', thing_id: 't3_abc123', text: 'Hi', return_rtjson: 'yes' })).toEqual(
      refused('INVALID_OPTION', 'that option is not valid', 'return_rtjson'),
    );
    expect(await postForm(f, '/api/comment', { api_type: 'json', thing_id: 't3_abc123', text: 'Hi', sr: 'test' })).toEqual(badRequest);
    expect(f.comments).toHaveLength(0);
  });

  test('a media lease for a type Reddit does not take gets 400 saying so; a missing or unlisted field 400', async () => {
    const f = await fake();
    expect(await postForm(f, '/api/media/asset.json', { filepath: 'a.webp', mimetype: 'image/webp' })).toEqual({
      status: 400,
      body: { message: 'Bad Request', error: 400, reason: 'unsupported mimetype' },
    });
    expect(await postForm(f, '/api/media/asset.json', { mimetype: 'image/png' })).toEqual(badRequest);
    expect(await postForm(f, '/api/media/asset.json', { filepath: 'a.png', mimetype: 'image/png', size: '8' })).toEqual(badRequest);
    const ok = await postForm(f, '/api/media/asset.json', { filepath: 'a.png', mimetype: 'image/png' });
    expect([ok.status, typeof (ok.body as { asset?: { asset_id?: unknown } }).asset?.asset_id]).toEqual([200, 'string']);
  });
});
