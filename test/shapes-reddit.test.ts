// Reddit's published contract (the API reference's /api/submit and /api/comment, and the gallery
// submit and media lease as PRAW sends them, held as TypeBox schemas in
// platforms/contracts/reddit.ts): the type-level checks below fail `tsc` when the types the
// connector builds its forms and bodies with stop refusing what Reddit does not take; the runtime
// tests show the fake refusing a request that breaks them as Reddit does with api_type=json (200,
// the error in json.errors; 403 for a comment on no thing; 400 for a lease of a type Reddit does
// not take), a field the documentation does not list refused with 400, and what the connector
// sends passing. The answer checks fail `tsc` when the answer types the connector reads and the
// fake writes stop refusing a field or a value Reddit's answers do not have (the api_type=json
// answers, the lease, the Listings, a comment tree, the identity, a subreddit's about page, link
// flairs and post requirements, the token); the last tests show the fake's answers to the
// connector's flows (publishing, finding, capabilities, comments, metrics, deleting) passing the
// answer schemas.
import { describe, expect, test } from 'bun:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type ApiErrorEntry,
  type AssetLeaseForm,
  type CommentForm,
  CommentAnswer,
  CommentListing,
  type CommentThing,
  CommentTree,
  type GalleryBody,
  GalleryAnswer,
  HttpErrorAnswer,
  IdentityAnswer,
  InfoListing,
  LeaseAnswer,
  type LinkFlair,
  LinkFlairList,
  LinkListing,
  MoreChildrenAnswer,
  PostRequirements,
  RefusalAnswer,
  type Subreddit,
  type SubmitData,
  type SubmitForm,
  SubmitAnswer,
  SubredditThing,
  TokenAnswer,
  TokenRefusal,
} from '../platforms/contracts/reddit.ts';
import type { Answer } from '../platforms/json.ts';
import { createRedditConnector } from '../platforms/reddit.ts';
import type { MediaRef } from '../platforms/types.ts';
import { type FakeReddit, startFakeReddit, redditRequest } from './fakes/reddit.ts';
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

const lease: LeaseAnswer = {
  args: { action: '//reddit-uploaded-media.s3-accelerate.amazonaws.com', fields: [{ name: 'key', value: 'rte_images/a1' }] },
  asset: { asset_id: 'a1', websocket_url: 'wss://ws.example/rte_images/a1' },
};
const comment: CommentThing['data'] = {
  id: 'c1',
  name: 't1_c1',
  link_id: 't3_p1',
  parent_id: 't3_p1',
  body: 'Nice',
  author: 'poster',
  subreddit: 'test',
  permalink: '/r/test/comments/p1/a_title/c1/',
  created_utc: 1762776000,
  score: 1,
  replies: '',
};

const about: Subreddit = {
  id: 'test',
  name: 't5_test',
  display_name: 'test',
  url: '/r/test/',
  subreddit_type: 'public',
  submission_type: 'any',
  over18: false,
};
const flair: LinkFlair = {
  id: '7c9c0e8a-0000-4000-8000-000000000001',
  text: 'Kites',
  type: 'text',
  text_editable: false,
  mod_only: false,
  richtext: [],
  text_color: 'dark',
  background_color: '',
};
const requirements: PostRequirements = {
  body_blacklisted_strings: [],
  body_restriction_policy: 'none',
  domain_blacklist: [],
  domain_whitelist: [],
  is_flair_required: false,
  title_blacklisted_strings: [],
  title_required_strings: [],
  title_text_max_length: null,
  title_text_min_length: 10,
};
const postListing: LinkListing = { kind: 'Listing', data: { after: null, before: null, children: [] } };

// The answer types the connector reads and the fake writes hold only what Reddit's answers have.
export const answerChecks: {
  submit: SubmitData[];
  errors: ApiErrorEntry[];
  lease: LeaseAnswer[];
  comment: CommentThing[];
  token: TokenAnswer[];
  tree: CommentTree[];
  info: InfoListing[];
  me: IdentityAnswer[];
  about: SubredditThing[];
  flairs: LinkFlairList[];
  requirements: PostRequirements[];
  httpError: HttpErrorAnswer[];
} = {
  submit: [
    {
      id: 'p1',
      name: 't3_p1',
      // @ts-expect-error submit answers the post's `url`; it has no `permalink`
      permalink: '/r/test/comments/p1/a_title/',
    },
    // @ts-expect-error drafts_count is a number
    { url: 'https://www.reddit.com/r/test/comments/p1/a_title/', drafts_count: '0' },
  ],
  errors: [
    // @ts-expect-error an error is [code, message, field] (the field null where none is at fault)
    ['RATELIMIT', 'you are doing that too much. try again in 9 minutes.'],
  ],
  lease: [
    {
      // @ts-expect-error args.fields is a list of {name, value} pairs, in the order the bucket takes them
      args: { action: lease.args.action, fields: { key: 'rte_images/a1' } },
      asset: lease.asset,
    },
    // @ts-expect-error asset_id is a string (a gallery item's media_id)
    { ...lease, asset: { ...lease.asset, asset_id: 1 } },
  ],
  comment: [
    // @ts-expect-error a comment is a t1 thing (t3 is a submission)
    { kind: 't3', data: comment },
    // @ts-expect-error created_utc is Unix seconds, a number
    { kind: 't1', data: { ...comment, created_utc: '2026-11-10T12:00:00Z' } },
  ],
  token: [
    // @ts-expect-error expires_in is a number of seconds
    { access_token: 'a', token_type: 'bearer', expires_in: '3600', scope: 'submit' },
  ],
  tree: [
    // @ts-expect-error a comment tree is two Listings, the post's and its comments'; not one
    [{ kind: 'Listing', data: { after: null, before: null, children: [{ kind: 't1', data: comment }] } }],
    [
      postListing,
      // @ts-expect-error a `more` stub's children are the ids left out, a list
      { kind: 'Listing', data: { after: null, before: null, children: [{ kind: 'more', data: { children: 'c2,c3' } }] } },
    ],
  ],
  info: [
    {
      kind: 'Listing',
      // @ts-expect-error /api/info lists things by fullname; the connector names no account (t2)
      data: { after: null, before: null, children: [{ kind: 't2', data: comment }] },
    },
  ],
  me: [
    // @ts-expect-error the identity is the account's fields, unwrapped: no kind/data
    { kind: 't2', data: { name: 'poster', id: 'u1' } },
    // @ts-expect-error is_suspended is a boolean
    { name: 'poster', id: 'u1', is_suspended: 'no' },
  ],
  about: [
    // @ts-expect-error a subreddit is a t5 thing (t2 is an account)
    { kind: 't2', data: about },
    // @ts-expect-error submission_type is any, link or self
    { kind: 't5', data: { ...about, submission_type: 'image' } },
    // @ts-expect-error over18 is a boolean
    { kind: 't5', data: { ...about, over18: 'false' } },
  ],
  flairs: [
    // @ts-expect-error link_flair_v2 answers a list of templates, not an object of them
    { choices: [flair] },
    // @ts-expect-error a template's id is `id` (the flair_id /api/submit takes); flair_template_id is flairselector's
    [{ ...flair, flair_template_id: flair.id }],
  ],
  requirements: [
    // @ts-expect-error body_restriction_policy is required, notAllowed or none
    { ...requirements, body_restriction_policy: 'optional' },
    // @ts-expect-error a title bound is a number, or null where the subreddit sets none
    { ...requirements, title_text_max_length: '300' },
  ],
  httpError: [
    // @ts-expect-error `error` is the HTTP status, a number
    { error: 'Forbidden', message: 'Forbidden', reason: 'private' },
  ],
};

/** Reading an answer as the connector does: a field Reddit does not send does not compile. */
export function answerReads(
  submit: Answer<SubmitAnswer>,
  gallery: Answer<GalleryAnswer>,
  leased: Answer<LeaseAnswer>,
  subreddit: Answer<SubredditThing>,
  rules: Answer<PostRequirements>,
  me: Answer<IdentityAnswer>,
  info: Answer<InfoListing>,
) {
  return [
    subreddit.data?.over18,
    // @ts-expect-error a subreddit's NSFW mark is `over18` (a post's is over_18)
    subreddit.data?.nsfw,
    // @ts-expect-error the flair rule is is_flair_required
    rules.flair_required,
    me.name,
    // @ts-expect-error the identity is unwrapped: the name is at the top
    me.data?.name,
    info.data?.children?.[0]?.data?.name,
    // @ts-expect-error a Listing's things are data.children, inside `data`
    info.children,
    submit.json?.data?.name,
    // @ts-expect-error the errors are json.errors, inside `json`
    submit.errors,
    // @ts-expect-error the gallery submit answers only its url
    gallery.json?.data?.name,
    // @ts-expect-error the lease's upload URL is args.action (the file's is action/key); there is no args.url
    leased.args?.url,
  ];
}

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

const request = redditRequest;

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

/** The answer schema of each path the connector reads (`{article}` standing for a post's id). */
const ANSWERS: Record<string, TSchema> = {
  '/api/submit': SubmitAnswer,
  '/api/submit_gallery_post.json': GalleryAnswer,
  '/api/comment': CommentAnswer,
  '/api/media/asset.json': LeaseAnswer,
  '/user/poster/submitted': LinkListing,
  '/user/poster/comments': CommentListing,
  '/api/v1/access_token': TokenAnswer,
  '/api/v1/me': IdentityAnswer,
  '/r/test/about': SubredditThing,
  '/r/test/api/link_flair_v2': LinkFlairList,
  '/api/v1/test/post_requirements': PostRequirements,
  '/comments/{article}': CommentTree,
  '/api/info': InfoListing,
};

/** A request's path as ANSWERS names it. */
const answerPath = (path: string) => path.replace(/^\/comments\/[^/]+$/, '/comments/{article}');

/** A fetch for the connector that keeps each of the fake's JSON answers on the paths of ANSWERS. */
function recording(): { fetch: typeof fetch; answers: { path: string; body: unknown }[] } {
  const answers: { path: string; body: unknown }[] = [];
  const record = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const path = answerPath(new URL(input instanceof Request ? input.url : String(input)).pathname);
    if (path in ANSWERS) answers.push({ path, body: await res.clone().json() });
    return res;
  };
  return { fetch: record as typeof fetch, answers };
}

/** The first way `body` breaks `schema`, or null. */
function breach(schema: TSchema, body: unknown): string | null {
  const e = Value.Errors(schema, body).First();
  return e ? `${e.path}: ${e.message}` : null;
}

describe('Reddit published shapes: answers', () => {
  test('the fake’s answers to the connector’s flows pass the answer schemas (submit, gallery, comment, lease, listings, token, identity, capabilities, comment tree, info)', async () => {
    const f = await fake();
    f.subreddits.test = { flairs: [{ id: 'flair-1', text: 'Kites' }], titleMin: 10 };
    f.tokens.set('edit-token', { user: 'poster', scopes: [...f.tokens.get('good-token')!.scopes, 'edit'] });
    const rec = recording();
    const c = createRedditConnector({
      baseUrl: f.url,
      authBaseUrl: f.url,
      userAgent: 'server:postpilot-test:v1 (by /u/poster)',
      oauth: { clientId: 'client-id', clientSecret: 'client-secret' },
      fetch: rec.fetch,
      timeoutMs: 2_000,
      pollIntervalMs: 5,
      pollTimeoutMs: 2_000,
    });
    const post = await c.publish(request());
    await c.publish(
      request({ idempotencyKey: 'post-2:channel-1', reddit: { subreddit: 'test', title: 'An image' }, media: [png('a', 'First')] }),
    );
    await c.publish(
      request({
        idempotencyKey: 'post-3:channel-1',
        reddit: { subreddit: 'test', title: 'A gallery' },
        media: [png('b', 'B'), png('c', 'C')],
      }),
    );
    const reply = { text: 'A first comment', idempotencyKey: 'post-1:channel-1:1', replyTo: { root: post, parent: post } };
    await c.publish(request(reply));
    expect(await c.findPublished!(request(reply))).not.toBeNull();
    expect(await c.findPublished!(request())).not.toBeNull();
    await c.refreshCredentials!({ accessToken: 'good-token', refreshToken: 'refresh-1' });
    const caps = await c.readCapabilities!({ accessToken: 'good-token' }, { subreddit: 'test' });
    expect(caps.platform === 'REDDIT' && caps.flairs).toEqual([{ id: 'flair-1', text: 'Kites' }]);
    const ours = f.comments.find((x) => x.author === 'poster')!;
    f.addComment(f.posts.find((p) => p.name === post.platformPostId)!, 'A reply to it', 'someone', ours);
    expect((await c.readComments!({ accessToken: 'good-token' }, post)).comments).toHaveLength(2);
    expect(await c.readMetrics!({ accessToken: 'good-token' }, [post.platformPostId])).toEqual({
      [post.platformPostId]: { likes: 1, replies: 2 },
    });
    await c.deletePublished!({ accessToken: 'edit-token' }, { platformCommentId: ours.name, url: null, post });
    expect(ours.deleted).toBe(true);

    expect([...new Set(rec.answers.map((a) => a.path))].sort()).toEqual(Object.keys(ANSWERS).sort());
    const broken = rec.answers.flatMap(({ path, body }) => {
      const e = breach(ANSWERS[path]!, body);
      return e ? [`${path} ${e}`] : [];
    });
    expect(broken).toEqual([]);
  });

  test('a refusal, a morechildren page, a refused grant and a private subreddit’s refused about page pass theirs', async () => {
    const f = await fake();
    expect(breach(RefusalAnswer, (await submit(f, { ...good, sr: 'pics' })).body)).toBeNull();
    const p = f.addPost({ subreddit: 'test', title: 'A thread' });
    const first = f.addComment(p, 'One');
    f.addComment(p, 'Two', 'someone', first);
    const res = await fetch(`${f.url}/api/morechildren?${new URLSearchParams({ api_type: 'json', link_id: p.name, children: first.id })}`, {
      headers: { Authorization: 'Bearer good-token', 'User-Agent': 'test' },
    });
    const more = (await res.json()) as MoreChildrenAnswer;
    expect([breach(MoreChildrenAnswer, more), more.json.data?.things.length]).toEqual([null, 2]);
    const refused = await fetch(`${f.url}/api/v1/access_token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${btoa('client-id:client-secret')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
        'User-Agent': 'test',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'no-such-token' }),
    });
    expect(breach(TokenRefusal, await refused.json())).toBeNull();
    f.subreddits.hidden = { private: true };
    const closed = await fetch(`${f.url}/r/hidden/about`, { headers: { Authorization: 'Bearer good-token', 'User-Agent': 'test' } });
    expect([closed.status, breach(HttpErrorAnswer, await closed.json())]).toEqual([403, null]);
  });
});
