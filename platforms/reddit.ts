// Reddit connector: the OAuth API at oauth.reddit.com (tokens from www.reddit.com), posting with
// POST /api/submit (self, image, video) and /api/submit_gallery_post.json (2–20 images).
//
// Media goes through Reddit's upload lease: POST /api/media/asset.json answers with a signed S3
// form (`args.action` without a scheme, `args.fields` in signature order); the file is POSTed there
// with the fields first and the file last, and the post is submitted with url = action/key (what
// PRAW does). A media submit answers without the post's id: Reddit creates the post once the media
// is processed and reports it over a websocket, which has been unreliable since 2023, so the post
// is looked up in the account's own submissions instead.
//
// A first comment is POST /api/comment on the submission's fullname, a reply to a comment the same
// on the comment's fullname; before a retry the account's own newest comments are read for one
// answering that thing with the same body. What people answered is read as the post's comment
// tree (GET /comments/{article}, its `more` stubs through /api/morechildren); a reply of ours is
// deleted with POST /api/del. Ids are fullnames throughout (t3_ the post, t1_ a comment), as
// publish returns them.
import {
  type ApiErrorEntry,
  type AssetLeaseForm,
  type Comment,
  type CommentData,
  type CommentForm,
  type CommentListing,
  type CommentThing,
  type CommentTree,
  type GalleryBody,
  type GalleryData,
  type HttpErrorAnswer,
  type IdentityAnswer,
  type InfoListing,
  LEASE_MIME_TYPES,
  type LeaseAnswer,
  type LeaseMimeType,
  type Link,
  type LinkFlairList,
  type LinkListing,
  type MoreChildrenData,
  type MoreThing,
  type PostRequirements,
  type RefusalAnswer,
  type SubmitData,
  type SubmitForm,
  type Subreddit,
  type SubredditThing,
  type TokenAnswer,
  type TokenRefusal,
} from './contracts/reddit.ts';
import { blobOf, bucketError, credential, createHttp, isOk, reasonOf, sleep, trimSlash, type Reply, type SendOptions } from './http.ts';
import {
  PlatformError,
  parseRetryAfter,
  type CommentsRead,
  type CommentTarget,
  type Connector,
  type MediaRef,
  type PlatformComment,
  type PlatformMetrics,
  type PostRef,
  type PublishRequest,
  type PublishResult,
} from './types.ts';
import { type Answer, counts, str } from './json.ts';
import type { RedditOptions } from './options.ts';

export interface RedditConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each API request. */
  timeoutMs?: number;
  /** Limit for each upload to Reddit's media bucket (videos can be large). */
  uploadTimeoutMs?: number;
  /** The OAuth API host (https://oauth.reddit.com). */
  baseUrl?: string;
  /** The token host (https://www.reddit.com). */
  authBaseUrl?: string;
  /** Where permalinks live (https://www.reddit.com). */
  webBaseUrl?: string;
  /** The Reddit app's client id and secret, needed to refresh access tokens. */
  oauth?: { clientId: string; clientSecret: string };
  /** Reddit throttles generic agents hard; its rules ask for `<platform>:<app id>:<version> (by /u/<name>)`. */
  userAgent?: string;
  /** How often, and how long, to look for a media post in the account's submissions after submitting it. */
  pollIntervalMs?: number;
  pollTimeoutMs?: number;
  /** How far back findPublished looks for a post an earlier attempt made (default 24 h). */
  lookbackMs?: number;
  /** A poster image for a video post (Reddit requires one). Default: the video's first frame via ffmpeg. */
  videoPoster?: (video: MediaRef, bytes: Uint8Array) => Promise<MediaBytes>;
}

export interface MediaBytes {
  bytes: Uint8Array;
  mimeType: string;
  fileName: string;
}

/**
 * One entry of GET /user/{name}/submitted (the fields the connector reads). Reddit lists each
 * submission with every one of them, so they are taken as given.
 */
type Submission = Pick<Link, 'id' | 'name' | 'title' | 'subreddit' | 'permalink' | 'created_utc' | 'is_self' | 'selftext'>;

/**
 * One comment, as /api/comment answers it, GET /user/{name}/comments lists it and a comment tree
 * holds it (its `replies` the Listing of its replies, or "" when it has none).
 */
type RedditComment = Answer<Comment>;

/** A thing of a comment tree: a comment (t1), or a stub (more) naming comments left out. */
type TreeThing = Answer<CommentThing> | Answer<MoreThing>;

interface Account {
  token: string;
}

/** One of `json.errors`: [code, message, field]. */
type RedditError = ApiErrorEntry;

const P = 'Reddit';
/** Comments GET /comments/{article} returns at most (Reddit's max_comments). */
const TREE_LIMIT = 500;
/** Comment ids asked of /api/morechildren at once, and calls made per read at most. */
const MORE_BATCH = 100;
const MORE_CALLS = 20;
/** What Reddit shows for the author of a deleted or removed comment. */
const DELETED = '[deleted]';
const DEFAULT_USER_AGENT = 'server:postpilot:v0.1.0 (social post scheduler)';
const MAX_GALLERY = 20;

export function createRedditConnector(opts: RedditConnectorOptions = {}): Connector {
  const api = createHttp(P, { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const bucket = createHttp(P, { fetch: opts.fetch, timeoutMs: opts.uploadTimeoutMs ?? 600_000 });
  const baseUrl = trimSlash(opts.baseUrl ?? 'https://oauth.reddit.com');
  const authBaseUrl = trimSlash(opts.authBaseUrl ?? 'https://www.reddit.com');
  const webBaseUrl = trimSlash(opts.webBaseUrl ?? 'https://www.reddit.com');
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const pollIntervalMs = opts.pollIntervalMs ?? 2_000;
  const pollTimeoutMs = opts.pollTimeoutMs ?? 300_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 3600_000;
  const videoPoster = opts.videoPoster ?? firstFrame;

  async function call(acct: Account, method: string, path: string, o: SendOptions = {}): Promise<Reply> {
    const r = await exchange(acct, method, path, o);
    if (!isOk(r)) throw httpError(r);
    return r;
  }

  /** One request as the account, whatever the answer (for callers that read a refusal themselves). */
  function exchange(acct: Account, method: string, path: string, o: SendOptions = {}): Promise<Reply> {
    const headers = { ...o.headers, Authorization: `Bearer ${acct.token}`, 'User-Agent': userAgent };
    return api.send(`${baseUrl}${path}`, { ...o, method, headers });
  }

  /**
   * GET /r/{sr}/about (read scope). Reddit sends a name it has no subreddit for on to a subreddit
   * search (302 to /subreddits/search.json), which fetch follows: a Listing instead of a t5 thing
   * means there is no such subreddit. A private, banned or quarantined one is refused with a
   * `reason`, kept in the message.
   */
  async function subredditAbout(acct: Account, sr: string, signal?: AbortSignal): Promise<Answer<Subreddit>> {
    const r = await exchange(acct, 'GET', `/r/${encodeURIComponent(sr)}/about?raw_json=1`, { signal });
    const b = r.body as (Answer<SubredditThing> & Answer<HttpErrorAnswer>) | null;
    if (!isOk(r)) {
      const err = httpError(r);
      if (err.kind !== 'permanent' || typeof b?.reason !== 'string') throw err;
      throw new PlatformError('permanent', `${err.message} (r/${sr} is ${b.reason})`, { status: r.status, platformCode: b.reason });
    }
    if (b?.kind !== 't5' || !b.data) throw new PlatformError('permanent', `Reddit has no subreddit r/${sr}`, { status: 404 });
    return b.data;
  }

  /**
   * GET /r/{sr}/api/link_flair_v2 (flair scope). Reddit answers 403 when the user may not pick
   * link flair there (flair is set by moderators only): there is nothing to choose, so no flairs.
   * A 403 for a scope the token lacks stays a reauth.
   */
  async function linkFlairs(acct: Account, sr: string, signal?: AbortSignal): Promise<{ id: string; text: string }[]> {
    const r = await exchange(acct, 'GET', `/r/${encodeURIComponent(sr)}/api/link_flair_v2?raw_json=1`, { signal });
    if (r.status === 403 && !/insufficient_scope/i.test(r.headers.get('www-authenticate') ?? '')) return [];
    if (!isOk(r)) throw httpError(r);
    const list = Array.isArray(r.body) ? (r.body as Answer<LinkFlairList>) : [];
    return list
      .filter((f) => typeof f.id === 'string' && f.id)
      .map((f) => ({ id: f.id as string, text: typeof f.text === 'string' ? f.text : '' }));
  }

  async function username(acct: Account, credentials: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    if (typeof credentials.username === 'string' && credentials.username) return credentials.username.replace(/^\/?u\//i, '');
    const me = await call(acct, 'GET', '/api/v1/me', { signal });
    const name = (me.body as Answer<IdentityAnswer> | null)?.name;
    if (typeof name !== 'string' || !name)
      throw new PlatformError('transient', `Reddit /api/v1/me returned no name: ${me.text.slice(0, 200)}`);
    return name;
  }

  /** The account's newest submissions (its own listing also shows posts a filter removed). */
  async function submissions(acct: Account, user: string, signal?: AbortSignal): Promise<Submission[]> {
    const r = await call(acct, 'GET', `/user/${encodeURIComponent(user)}/submitted?sort=new&limit=100&raw_json=1`, { signal });
    const children = (r.body as Answer<LinkListing> | null)?.data?.children;
    if (!Array.isArray(children)) throw new PlatformError('transient', `Reddit returned an unexpected listing: ${r.text.slice(0, 200)}`);
    return children.filter((c) => c.kind === 't3' && c.data).map((c) => c.data as Submission);
  }

  function toResult(s: Submission): PublishResult {
    return { platformPostId: s.name, url: `${webBaseUrl}${s.permalink}`, publishedAt: new Date(s.created_utc * 1000).toISOString() };
  }

  async function uploadAsset(acct: Account, file: MediaBytes, signal?: AbortSignal): Promise<{ url: string; assetId: string }> {
    const asked: AssetLeaseForm = { filepath: file.fileName, mimetype: leaseType(file) };
    const r = await call(acct, 'POST', '/api/media/asset.json', { form: encoded(asked), signal });
    const lease = r.body as Answer<LeaseAnswer> | null;
    const fields = lease?.args?.fields;
    const key = Array.isArray(fields) ? (fields as LeaseAnswer['args']['fields']).find((f) => f.name === 'key')?.value : undefined;
    if (typeof lease?.args?.action !== 'string' || !Array.isArray(fields) || !key || typeof lease.asset?.asset_id !== 'string') {
      throw new PlatformError('transient', `Reddit returned an unexpected upload lease: ${r.text.slice(0, 200)}`);
    }
    // `action` is scheme-relative ("//bucket.host"): it takes the API's scheme.
    const action = trimSlash(new URL(lease.args.action, baseUrl).href);
    const form = new FormData();
    for (const f of fields as LeaseAnswer['args']['fields']) form.append(f.name, f.value);
    form.append('file', blobOf(file.bytes, file.mimeType), file.fileName);
    const up = await bucket.send(action, { method: 'POST', multipart: form, headers: { 'User-Agent': userAgent }, signal });
    if (!isOk(up)) throw bucketError('Reddit media upload', up);
    return { url: `${action}/${key}`, assetId: lease.asset.asset_id };
  }

  /** POST /api/submit of `post` with the post's options (flair, NSFW, spoiler). */
  async function submit(acct: Account, req: PublishRequest, post: SubmitPost): Promise<Answer<SubmitData>> {
    const o = (req.options ?? {}) as RedditOptions;
    const form: SubmitForm = {
      api_type: 'json',
      resubmit: 'true',
      sendreplies: 'true',
      ...post,
      flair_id: o.flairId || undefined,
      nsfw: o.nsfw ? 'true' : undefined,
      spoiler: o.spoiler ? 'true' : undefined,
    };
    const r = await call(acct, 'POST', '/api/submit', { form: encoded(form), signal: req.signal });
    return submitData<SubmitData>(r);
  }

  /** Submits a media post and finds it in the account's submissions once Reddit has made it. */
  async function submitMedia(acct: Account, req: PublishRequest, send: () => Promise<unknown>): Promise<PublishResult> {
    const { subreddit, title } = target(req);
    const user = await username(acct, req.credentials, req.signal);
    const before = new Set((await submissions(acct, user, req.signal)).map((s) => s.name));
    await send();
    const deadline = Date.now() + pollTimeoutMs;
    for (;;) {
      const hit = (await submissions(acct, user, req.signal)).find((s) => !before.has(s.name) && isMediaMatch(s, subreddit, title));
      if (hit) return toResult(hit);
      if (Date.now() >= deadline) {
        throw new PlatformError(
          'transient',
          `Reddit accepted the post but it was not in u/${user}'s submissions after ${pollTimeoutMs} ms (media still processing?)`,
        );
      }
      await sleep(pollIntervalMs, req.signal);
    }
  }

  function commentResult(c: RedditComment | null | undefined): PublishResult | null {
    if (typeof c?.name !== 'string' || !c.name || typeof c.permalink !== 'string' || !c.permalink) return null;
    const url = `${webBaseUrl}${c.permalink}`;
    return typeof c.created_utc === 'number'
      ? { platformPostId: c.name, url, publishedAt: new Date(c.created_utc * 1000).toISOString() }
      : { platformPostId: c.name, url };
  }

  /**
   * POST /api/comment with thing_id = the fullname answered: the submission's for a first
   * comment, a comment's (t1_) for a reply to it. A thing Reddit does not have is refused with
   * HTTP 403; a locked or archived thread, or a deleted comment, with json.errors (THREAD_LOCKED,
   * TOO_OLD, DELETED_COMMENT). All are final. The new comment is json.data.things[0].data.
   */
  async function comment(acct: Account, req: PublishRequest, parent: PostRef): Promise<PublishResult> {
    if (req.media.length) throw new PlatformError('permanent', 'Reddit comments carry no attachments');
    const form: CommentForm = { api_type: 'json', thing_id: thingId(parent), text: req.text };
    const r = await call(acct, 'POST', '/api/comment', { form: encoded(form), signal: req.signal });
    const things = submitData<CommentData>(r).things;
    const first = Array.isArray(things) ? things[0] : undefined;
    const found = first?.kind === 't1' ? commentResult(first.data) : null;
    if (!found) throw new PlatformError('transient', `Reddit returned no comment: ${r.text.slice(0, 200)}`);
    return found;
  }

  /**
   * Comments have no idempotency key: the account's newest comments (GET /user/{name}/comments,
   * the history scope) are read for one whose parent is the thing answered (the submission, or
   * the comment replied to) and whose body is this text.
   */
  async function findComment(acct: Account, req: PublishRequest, parent: PostRef): Promise<PublishResult | null> {
    const user = await username(acct, req.credentials, req.signal);
    const r = await call(acct, 'GET', `/user/${encodeURIComponent(user)}/comments?sort=new&limit=100&raw_json=1`, { signal: req.signal });
    const children = (r.body as Answer<CommentListing> | null)?.data?.children;
    if (!Array.isArray(children)) throw new PlatformError('transient', `Reddit returned an unexpected listing: ${r.text.slice(0, 200)}`);
    const thing = thingId(parent);
    const hit = children.find(
      (c) => c.kind === 't1' && c.data?.parent_id === thing && typeof c.data.body === 'string' && sameText(c.data.body, req.text),
    );
    return hit ? commentResult(hit.data) : null;
  }

  /**
   * GET /comments/{article}?sort=old&limit=500 (read scope): the post and its comment tree, each
   * comment with its replies. The comments the tree leaves out are named by `more` stubs, read
   * with /api/morechildren (100 ids a call, at most MORE_CALLS calls a read, one at a time as
   * Reddit asks); a stub with no ids ("continue this thread") stands for replies below Reddit's
   * depth of 10, which are not read. A deleted or removed comment (author [deleted]) is left out;
   * its replies are kept. A post Reddit does not have answers 404: gone.
   */
  async function readComments(credentials: Record<string, unknown>, post: PostRef, signal?: AbortSignal): Promise<CommentsRead> {
    const acct = { token: credential(P, credentials, 'accessToken') };
    const link = thingId(post);
    const q = new URLSearchParams({ sort: 'old', limit: String(TREE_LIMIT), raw_json: '1' });
    const r = await exchange(acct, 'GET', `/comments/${encodeURIComponent(link.slice(3))}?${q}`, { signal });
    if (r.status === 404) return { comments: [], gone: true };
    if (!isOk(r)) throw httpError(r);
    const pair = Array.isArray(r.body) ? (r.body as Answer<CommentTree>) : [];
    if (pair[0]?.data?.children?.[0]?.kind !== 't3') {
      throw new PlatformError('transient', `Reddit returned an unexpected comment tree: ${r.text.slice(0, 200)}`);
    }
    const found: RedditComment[] = [];
    const seen = new Set<string>();
    const queue: string[] = [];
    const take = (things: unknown) => {
      for (const t of (Array.isArray(things) ? things : []) as TreeThing[]) {
        if (t.kind === 't1') {
          const d = t.data;
          if (!d || typeof d.name !== 'string' || seen.has(d.name)) continue;
          seen.add(d.name);
          found.push(d);
          take(typeof d.replies === 'object' ? d.replies?.data?.children : undefined);
        } else if (t.kind === 'more' && Array.isArray(t.data?.children)) {
          for (const id of t.data.children) if (typeof id === 'string' && !seen.has(`t1_${id}`) && !queue.includes(id)) queue.push(id);
        }
      }
    };
    take(pair[1]?.data?.children);
    for (let calls = 0; queue.length && calls < MORE_CALLS; calls++) {
      const children = queue.splice(0, MORE_BATCH);
      const more = new URLSearchParams({ api_type: 'json', link_id: link, children: children.join(','), sort: 'old', raw_json: '1' });
      const before = found.length;
      take(submitData<MoreChildrenData>(await call(acct, 'GET', `/api/morechildren?${more}`, { signal })).things);
      // Reddit answered none of what was asked: asking again would not change that.
      if (found.length === before) break;
    }
    const user = found.length ? (await username(acct, credentials, signal)).toLowerCase() : '';
    const comments: PlatformComment[] = [];
    for (const d of found) {
      const c = platformComment(d, post, link, user);
      if (c) comments.push(c);
    }
    return { comments };
  }

  function platformComment(d: RedditComment, post: PostRef, link: string, user: string): PlatformComment | null {
    const name = str(d.name);
    const parent = str(d.parent_id);
    const author = str(d.author);
    if (!name || !parent || !author || author === DELETED || typeof d.created_utc !== 'number') return null;
    const permalink = str(d.permalink);
    return {
      platformCommentId: name,
      // The post as recorded (a bare id is taken as a submission's, as publish takes it).
      parentPlatformId: parent === link ? post.platformPostId : parent,
      author: { name: null, handle: author, avatarUrl: null, profileUrl: `${webBaseUrl}/user/${encodeURIComponent(author)}/` },
      text: typeof d.body === 'string' ? d.body : '',
      createdAt: new Date(d.created_utc * 1000).toISOString(),
      url: permalink ? `${webBaseUrl}${permalink}` : null,
      ours: author.toLowerCase() === user,
    };
  }

  /**
   * POST /api/del (edit scope). Reddit answers {} whatever happened: it deletes only the
   * account's own things and says nothing about others. So the comment is read first
   * (GET /api/info): one Reddit no longer has, or shows as [deleted], is deleted already; one by
   * another account is refused here, as Reddit would silently refuse it.
   */
  async function deletePublished(credentials: Record<string, unknown>, target: CommentTarget, signal?: AbortSignal): Promise<void> {
    const acct = { token: credential(P, credentials, 'accessToken') };
    const id = /^t[1-6]_/.test(target.platformCommentId) ? target.platformCommentId : `t1_${target.platformCommentId}`;
    const r = await call(acct, 'GET', `/api/info?${new URLSearchParams({ id, raw_json: '1' })}`, { signal });
    const children = (r.body as Answer<InfoListing> | null)?.data?.children;
    const thing = (Array.isArray(children) ? children : []).find((c) => c.data?.name === id)?.data;
    const author = str(thing?.author);
    if (!author || author === DELETED) return;
    const user = await username(acct, credentials, signal);
    if (author.toLowerCase() !== user.toLowerCase()) {
      throw new PlatformError('permanent', `Reddit deletes only the account's own comments; ${id} is u/${author}'s`, {
        platformCode: 'NOT_AUTHOR',
      });
    }
    await call(acct, 'POST', '/api/del', { form: { id }, signal });
  }

  async function publishSelf(acct: Account, req: PublishRequest): Promise<PublishResult> {
    const { subreddit, title } = target(req);
    const data = await submit(acct, req, { sr: subreddit, kind: 'self', title, text: req.text });
    const url = typeof data.url === 'string' ? data.url : undefined;
    const name = fullname(data, url);
    if (!name || !url) throw new PlatformError('transient', `Reddit returned no post id: ${JSON.stringify(data).slice(0, 200)}`);
    return { platformPostId: name, url };
  }

  async function publishImage(acct: Account, req: PublishRequest, item: MediaRef): Promise<PublishResult> {
    const { subreddit, title } = target(req);
    const { url } = await uploadAsset(acct, await imageBytes(item), req.signal);
    return submitMedia(acct, req, () => submit(acct, req, { sr: subreddit, kind: 'image', title, url, text: bodyText(req.text) }));
  }

  async function publishVideo(acct: Account, req: PublishRequest, item: MediaRef): Promise<PublishResult> {
    const { subreddit, title } = target(req);
    const bytes = await item.read();
    const video = await uploadAsset(acct, { bytes, mimeType: item.mimeType, fileName: item.fileName }, req.signal);
    const poster = await uploadAsset(acct, await videoPoster(item, bytes), req.signal);
    const post: SubmitPost = {
      sr: subreddit,
      kind: 'video',
      title,
      url: video.url,
      video_poster_url: poster.url,
      text: bodyText(req.text),
    };
    return submitMedia(acct, req, () => submit(acct, req, post));
  }

  async function publishGallery(acct: Account, req: PublishRequest): Promise<PublishResult> {
    const { subreddit, title } = target(req);
    const o = (req.options ?? {}) as RedditOptions;
    const items: GalleryBody['items'] = [];
    for (const item of req.media) {
      const { assetId } = await uploadAsset(acct, await imageBytes(item), req.signal);
      // Reddit has no alt text; a gallery item's caption (≤ 180 characters) is the nearest thing.
      items.push({ media_id: assetId, caption: (item.altText ?? '').slice(0, 180), outbound_url: '' });
    }
    const json: GalleryBody = {
      api_type: 'json',
      sr: subreddit,
      title,
      items,
      sendreplies: true,
      nsfw: o.nsfw === true,
      spoiler: o.spoiler === true,
      show_error_list: true,
      // Absent fields undefined, which JSON leaves out.
      flair_id: o.flairId || undefined,
      text: bodyText(req.text),
    };
    const data = submitData<GalleryData>(await call(acct, 'POST', '/api/submit_gallery_post.json', { json, signal: req.signal }));
    const url = typeof data.url === 'string' ? data.url : undefined;
    const name = fullname(data, url);
    if (!name || !url) throw new PlatformError('transient', `Reddit returned no gallery id: ${JSON.stringify(data).slice(0, 200)}`);
    return { platformPostId: name, url };
  }

  return {
    platform: 'REDDIT',
    metricsBatch: 100,
    readComments,
    deletePublished,

    /**
     * GET /api/info?id=t3_…,… (up to 100 fullnames): `score` (upvotes minus downvotes, Reddit's
     * only public vote figure; below zero it is no count of likes: null) as likes and `num_comments` as replies. A removed post is still
     * listed; a deleted one is not.
     */
    async readMetrics(credentials, ids, signal) {
      const acct = { token: credential(P, credentials, 'accessToken') };
      const r = await call(acct, 'GET', `/api/info?${new URLSearchParams({ id: ids.join(','), raw_json: '1' })}`, { signal });
      const children = (r.body as Answer<InfoListing> | null)?.data?.children;
      const out: Record<string, PlatformMetrics> = {};
      for (const c of Array.isArray(children) ? children : []) {
        const name = c.data?.name;
        if (c.kind !== 't3' || typeof name !== 'string') continue;
        out[name] = counts(c.data!, { likes: 'score', replies: 'num_comments' });
      }
      return out;
    },

    async publish(req: PublishRequest): Promise<PublishResult> {
      const acct = { token: credential(P, req.credentials, 'accessToken') };
      if (req.replyTo) return comment(acct, req, req.replyTo.parent);
      target(req);
      const media = req.media;
      if (!media.length) return publishSelf(acct, req);
      const videos = media.filter((m) => m.type === 'video');
      if (videos.length && media.length > 1) throw new PlatformError('permanent', 'Reddit: a video must be the only attachment of a post');
      if (media.some((m) => m.type !== 'image' && m.type !== 'gif' && m.type !== 'video')) {
        throw new PlatformError('permanent', 'Reddit posts take images, GIFs or one video');
      }
      if (media.length > MAX_GALLERY) throw new PlatformError('permanent', `Reddit galleries take at most ${MAX_GALLERY} images`);
      if (videos.length) return publishVideo(acct, req, videos[0]!);
      if (media.length === 1) return publishImage(acct, req, media[0]!);
      return publishGallery(acct, req);
    },

    /**
     * Reddit has no idempotency key. The account's own submissions (newest first) are the record:
     * a post in the same subreddit with the same title within `lookbackMs` (and, for a text post,
     * the same body) is taken as the one an earlier attempt made. Titles are chosen per post, so a
     * false match needs the same title posted to the same subreddit twice within a day. A comment
     * is looked for among the account's comments (findComment).
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const acct = { token: credential(P, req.credentials, 'accessToken') };
      if (req.replyTo) return findComment(acct, req, req.replyTo.parent);
      const { subreddit, title } = target(req);
      const user = await username(acct, req.credentials, req.signal);
      const since = Date.now() / 1000 - lookbackMs / 1000;
      const hit = (await submissions(acct, user, req.signal)).find(
        (s) =>
          s.created_utc >= since &&
          (req.media.length
            ? isMediaMatch(s, subreddit, title)
            : s.is_self && sameSub(s, subreddit) && s.title === title && sameText(s.selftext, req.text)),
      );
      return hit ? toResult(hit) : null;
    },

    /**
     * What `query.subreddit` takes from this account: its about page (post kinds, NSFW), then its
     * link flairs and post requirements (submit scope; null where the subreddit sets no bound).
     */
    async readCapabilities(credentials, query, signal) {
      const sr = query.subreddit
        ?.trim()
        .replace(/^\/?r\//i, '')
        .replace(/\/+$/, '');
      if (!sr) throw new PlatformError('permanent', 'Reddit capabilities need a subreddit');
      const acct = { token: credential(P, credentials, 'accessToken') };
      const about = await subredditAbout(acct, sr, signal);
      const [flairs, req] = await Promise.all([
        linkFlairs(acct, sr, signal),
        call(acct, 'GET', `/api/v1/${encodeURIComponent(sr)}/post_requirements`, { signal }).then(
          (r) => (r.body ?? {}) as Answer<PostRequirements>,
        ),
      ]);
      const type = about.submission_type;
      const text = type !== 'link';
      const link = type !== 'self';
      const bound = (v: unknown) => (typeof v === 'number' && v > 0 ? v : null);
      return {
        platform: 'REDDIT' as const,
        subreddit: typeof about.display_name === 'string' && about.display_name ? about.display_name : sr,
        flairs,
        flairRequired: req.is_flair_required === true,
        // Image, video and gallery posts are link-kind submissions: a text-only subreddit takes none.
        allows: {
          text,
          link,
          image: link && about.allow_images === true,
          video: link && about.allow_videos === true,
          gallery: link && about.allow_galleries === true,
        },
        over18: about.over18 === true,
        titleMinChars: bound(req.title_text_min_length),
        titleMaxChars: bound(req.title_text_max_length),
      };
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      if (!opts.oauth) {
        throw new PlatformError(
          'permanent',
          'Reddit token refresh needs the app credentials (REDDIT_CLIENT_ID, REDDIT_CLIENT_SECRET) on the worker',
        );
      }
      const refreshToken = credential(P, credentials, 'refreshToken');
      const basic = btoa(`${opts.oauth.clientId}:${opts.oauth.clientSecret}`);
      const r = await api.send(`${authBaseUrl}/api/v1/access_token`, {
        method: 'POST',
        headers: { Authorization: `Basic ${basic}`, 'User-Agent': userAgent },
        form: { grant_type: 'refresh_token', refresh_token: refreshToken },
        signal,
      });
      return tokenResult(r);
    },
  };
}

/** The access token answer; Reddit reports a rejected grant as 200 with `{"error": "invalid_grant"}`. */
function tokenResult(r: Reply): Record<string, unknown> {
  const b = r.body as (Answer<TokenAnswer> & Answer<TokenRefusal>) | null;
  const status = r.status;
  // The token endpoint authenticates the app with Basic auth: a 401 is the app's credentials, not the user's grant.
  if (status === 401) {
    throw new PlatformError('permanent', 'Reddit 401: the app credentials (REDDIT_CLIENT_ID / REDDIT_CLIENT_SECRET) were rejected', {
      status,
    });
  }
  if (status === 408 || status === 429 || status >= 500) throw httpError(r);
  const error = typeof b?.error === 'string' ? b.error : isOk(r) ? undefined : reasonOf(r);
  if (error) {
    const kind = error === 'invalid_grant' ? 'reauth' : 'permanent';
    throw new PlatformError(kind, `Reddit token refresh failed: ${error}`, { status, platformCode: error });
  }
  if (typeof b?.access_token !== 'string' || typeof b.expires_in !== 'number') {
    throw new PlatformError('transient', `Reddit returned an unexpected token answer: ${r.text.slice(0, 200)}`);
  }
  const out: Record<string, unknown> = { accessToken: b.access_token, expiresAt: new Date(Date.now() + b.expires_in * 1000).toISOString() };
  if (typeof b.refresh_token === 'string' && b.refresh_token) out.refreshToken = b.refresh_token;
  return out;
}

/**
 * `json.data` of an api_type=json answer, read as the endpoint's documented `D` (any part of it
 * may be missing), or the first of `json.errors` as a PlatformError.
 */
function submitData<D extends object>(r: Reply): Answer<D> {
  const json = (r.body as (Answer<RefusalAnswer> & { json?: { data?: unknown } | null }) | null)?.json;
  if (!json)
    throw new PlatformError('transient', `Reddit returned an unexpected submit answer: ${r.text.slice(0, 200)}`, { status: r.status });
  const errors = Array.isArray(json.errors) ? (json.errors as RedditError[]) : [];
  if (errors.length) throw apiError(errors[0]!, json.ratelimit);
  return (json.data && typeof json.data === 'object' ? json.data : {}) as Answer<D>;
}

function apiError([code, message]: RedditError, ratelimit?: unknown): PlatformError {
  const text = `Reddit ${code}: ${message}`;
  if (code === 'RATELIMIT') {
    const seconds = typeof ratelimit === 'number' ? ratelimit : undefined;
    return new PlatformError('transient', text, {
      platformCode: code,
      retryAfterMs: seconds !== undefined ? Math.ceil(seconds * 1000) : waitIn(message),
    });
  }
  if (code === 'USER_REQUIRED') return new PlatformError('reauth', text, { platformCode: code });
  return new PlatformError('permanent', text, { platformCode: code });
}

/** "try again in 9 minutes." / "Take a break for 30 seconds before trying again." → ms. */
function waitIn(message: string): number | undefined {
  const m = /(\d+)\s*(millisecond|second|minute|hour)s?/i.exec(message);
  if (!m) return undefined;
  const unit = { millisecond: 1, second: 1000, minute: 60_000, hour: 3600_000 }[m[2]!.toLowerCase() as 'second'];
  return Number(m[1]) * unit;
}

function httpError(r: Reply): PlatformError {
  const message = `Reddit ${r.status}: ${reasonOf(r)}`;
  const status = r.status;
  if (status === 401) return new PlatformError('reauth', message, { status });
  // A token without the needed scope (submit, identity, history) can only be fixed by reconnecting.
  if (status === 403 && /insufficient_scope/i.test(r.headers.get('www-authenticate') ?? '')) {
    return new PlatformError('reauth', `${message} (the token lacks a required scope)`, { status, platformCode: 'insufficient_scope' });
  }
  if (status === 408 || status === 429 || status >= 500)
    return new PlatformError('transient', message, { status, retryAfterMs: retryAfter(r.headers) });
  return new PlatformError('permanent', message, { status });
}

/** Retry-After, else X-Ratelimit-Reset (seconds until Reddit's window resets). */
function retryAfter(headers: Headers): number | undefined {
  const ra = parseRetryAfter(headers.get('retry-after'));
  if (ra !== undefined) return ra;
  const reset = Number(headers.get('x-ratelimit-reset'));
  return headers.get('x-ratelimit-reset') && Number.isFinite(reset) ? Math.ceil(reset * 1000) : undefined;
}

function target(req: PublishRequest): { subreddit: string; title: string } {
  const subreddit = req.reddit?.subreddit
    ?.trim()
    .replace(/^\/?r\//i, '')
    .replace(/\/+$/, '');
  const title = req.reddit?.title;
  if (!subreddit || !title?.trim()) throw new PlatformError('permanent', 'Reddit posts need reddit.subreddit and reddit.title');
  return { subreddit, title };
}

/** What a submission says of the post itself; the rest (api_type, flags, options) submit adds. */
type SubmitPost = Pick<SubmitForm, 'sr' | 'kind' | 'title' | 'text' | 'url' | 'video_poster_url'>;

/** A media post's body (`text`), when the post has one: image, video and gallery posts may carry one too. */
const bodyText = (text: string) => (text.trim() ? text : undefined);

/** A form's fields as url-encoded: those without a value are left out. */
function encoded(fields: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter((f): f is [string, string] => f[1] !== undefined));
}

/** A media type Reddit leases uploads for. */
const isLeaseType = (type: string): type is LeaseMimeType => (LEASE_MIME_TYPES as readonly string[]).includes(type);

/** The file's media type when Reddit takes it; any other is final here, as Reddit would refuse the lease. */
function leaseType(file: MediaBytes): LeaseMimeType {
  if (isLeaseType(file.mimeType)) return file.mimeType;
  // 415 (unsupported media type): a media refusal (platforms/failure-class.ts), as Reddit's own would be.
  throw new PlatformError(
    'permanent',
    `Reddit takes JPEG, PNG and GIF images and MP4 and QuickTime videos; ${file.fileName} is ${file.mimeType}`,
    { status: 415 },
  );
}

/** A post's fullname from a submit answer's data: `name`, else `id`, else the id in its url. */
function fullname(data: { name?: unknown; id?: unknown; url?: unknown }, url?: string): string | undefined {
  if (typeof data.name === 'string' && data.name) return data.name;
  // A gallery answers with only its url, either …/comments/{id}/… or …/gallery/{id}.
  const id = typeof data.id === 'string' && data.id ? data.id : url ? /\/(?:comments|gallery)\/([a-z0-9]+)/i.exec(url)?.[1] : undefined;
  return id ? (id.startsWith('t3_') ? id : `t3_${id}`) : undefined;
}

/** The fullname of what a comment answers: the recorded id (t3_…), or a bare id taken as a submission's. */
const thingId = (ref: PostRef) => (/^t[1-6]_/.test(ref.platformPostId) ? ref.platformPostId : `t3_${ref.platformPostId}`);
const sameSub = (s: Submission, subreddit: string) => s.subreddit.toLowerCase() === subreddit.toLowerCase();
const isMediaMatch = (s: Submission, subreddit: string, title: string) => !s.is_self && sameSub(s, subreddit) && s.title === title;
const norm = (t: string) => t.replace(/\r\n/g, '\n').trim();
const sameText = (a: string, b: string) => norm(a) === norm(b);

/** Reddit's media lease takes JPEG, PNG and GIF; WebP is converted to JPEG first. */
async function imageBytes(item: MediaRef): Promise<MediaBytes> {
  const bytes = await item.read();
  if (item.mimeType !== 'image/webp') return { bytes, mimeType: item.mimeType, fileName: item.fileName };
  const sharp = (await import('sharp')).default;
  const jpeg = await sharp(bytes).jpeg({ quality: 90 }).toBuffer();
  return { bytes: new Uint8Array(jpeg), mimeType: 'image/jpeg', fileName: `${item.fileName.replace(/\.[^.]*$/, '')}.jpg` };
}

/** The video's first frame as JPEG, read with the project's ffmpeg. */
async function firstFrame(video: MediaRef, bytes: Uint8Array): Promise<MediaBytes> {
  const [{ ffmpegPath, run }, { mkdtemp, rm, writeFile }, { tmpdir }, { join }] = await Promise.all([
    import('../media/exec.ts'),
    import('node:fs/promises'),
    import('node:os'),
    import('node:path'),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'reddit-poster-'));
  try {
    const file = join(dir, 'video');
    await writeFile(file, bytes);
    const r = await run([
      await ffmpegPath(),
      '-nostdin',
      '-v',
      'error',
      '-i',
      `file:${file}`,
      '-frames:v',
      '1',
      '-q:v',
      '3',
      '-f',
      'image2pipe',
      '-c:v',
      'mjpeg',
      '-',
    ]);
    if (r.exitCode !== 0 || !r.stdout.length) {
      throw new PlatformError('permanent', `Reddit video posts need a poster image, and no frame could be read from ${video.fileName}`);
    }
    return { bytes: r.stdout, mimeType: 'image/jpeg', fileName: 'poster.jpg' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
