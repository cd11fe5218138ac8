// LinkedIn connector: the versioned REST Posts API (POST /rest/posts) as credentials.authorUrn
// (urn:li:person:… or urn:li:organization:…), media through the Images, Videos and Documents
// APIs, a first comment through the Comments API (/rest/socialActions/{urn}/comments). Every call
// carries LinkedIn-Version and X-Restli-Protocol-Version: 2.0.0.
//
// The Comments API also lists a post's comments and a comment's replies, takes a reply to a
// comment (parentComment) and deletes a comment. Listing needs r_organization_social for an
// organization's posts, or for a member's r_member_social, which LinkedIn grants to select
// developers only; the service's LinkedIn sign-in asks for w_member_social alone. So comments are
// read for organization pages (a page's channel connected with a Community Management token);
// a member's channel reads none. LinkedIn offers no way to hide a comment.
import { API_VERSIONS, apiVersionRetired } from './api-versions.ts';
import type {
  AccessTokenAnswer,
  Comment,
  CommentBody,
  CommentsList,
  Document,
  FinalizeVideoUploadBody,
  Image,
  InitializeDocumentUploadAnswer,
  InitializeDocumentUploadBody,
  InitializeImageUploadAnswer,
  InitializeImageUploadBody,
  InitializeVideoUploadAnswer,
  InitializeVideoUploadBody,
  MediaContent,
  Post,
  PostBody,
  PostContent,
  PostsList,
  RestliError,
  SocialActions,
  Video,
} from './contracts/linkedin.ts';
import { createHttp, credential, isOk, reasonOf, sleep, tokenError, trimSlash, type Reply, type SendOptions } from './http.ts';
import { type Answer, counts, str } from './json.ts';
import type { LinkedInOptions } from './options.ts';
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

export interface LinkedInConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each HTTP request (not for the whole publish). */
  timeoutMs?: number;
  /** REST API host (https://api.linkedin.com). */
  baseUrl?: string;
  /** OAuth host serving /oauth/v2/accessToken (https://www.linkedin.com). */
  authBaseUrl?: string;
  /** The app's OAuth client, needed for refresh. */
  oauth?: { clientId: string; clientSecret: string };
  /** LinkedIn-Version header (YYYYMM; default: platforms/api-versions.ts). */
  apiVersion?: string;
  pollIntervalMs?: number;
  /** How long to wait for an uploaded asset to become AVAILABLE. */
  pollTimeoutMs?: number;
  /** How far back findPublished looks for a post an earlier attempt created. */
  lookbackMs?: number;
}

const LI = 'LinkedIn';
/** Comments asked for a page (the Comments API's paging), pages of a post's comments read, and pages of one comment's replies. */
const COMMENTS_PAGE = 100;
const COMMENT_PAGES = 20;
const REPLY_PAGES = 5;
/** Why a member's channel reads no comments (readComments' refusal; docs/platforms.md "Comments"). */
const MEMBER_UNREADABLE =
  'LinkedIn lets a member’s comments be read only with r_member_social, which it grants to select developers; comments are read for organization pages (r_organization_social)';

type AssetKind = 'images' | 'videos' | 'documents';
interface Asset {
  urn: string;
  item: MediaRef;
  kind: AssetKind;
}

export function createLinkedInConnector(opts: LinkedInConnectorOptions = {}): Connector {
  const http = createHttp(LI, { fetch: opts.fetch, timeoutMs: opts.timeoutMs });
  const base = trimSlash(opts.baseUrl ?? 'https://api.linkedin.com');
  const authBase = trimSlash(opts.authBaseUrl ?? 'https://www.linkedin.com');
  const version = opts.apiVersion ?? API_VERSIONS.LINKEDIN.version;
  const pollIntervalMs = opts.pollIntervalMs ?? 2_000;
  const pollTimeoutMs = opts.pollTimeoutMs ?? 300_000;
  const lookbackMs = opts.lookbackMs ?? 24 * 60 * 60 * 1000;

  function restHeaders(token: string): Record<string, string> {
    return { Authorization: `Bearer ${token}`, 'LinkedIn-Version': version, 'X-Restli-Protocol-Version': '2.0.0' };
  }

  /**
   * A request to the versioned REST API. 426 (NONEXISTENT_VERSION) means LinkedIn no longer
   * serves the LinkedIn-Version sent, whatever the request: the setting must change.
   */
  async function versioned(url: string, o: SendOptions): Promise<Reply> {
    const r = await http.send(url, o);
    if (r.status === 426) throw apiVersionRetired('LINKEDIN', LI, version, `${LI} 426: ${liReason(r)}`, 426);
    return r;
  }

  async function rest(token: string, method: string, path: string, o: Omit<SendOptions, 'method' | 'headers'> = {}): Promise<Reply> {
    const r = await versioned(`${base}/rest${path}`, { ...o, method, headers: restHeaders(token) });
    if (isOk(r)) return r;
    throw liError(r);
  }

  /** PUT to an upload URL LinkedIn handed out; only the single-file image/document upload takes the bearer token. */
  async function put(url: string, bytes: Uint8Array, token: string | null, signal?: AbortSignal): Promise<Reply> {
    const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const r = await http.send(url, { method: 'PUT', headers, body: bytes, signal });
    if (isOk(r)) return r;
    throw liError(r);
  }

  async function upload(token: string, owner: string, item: MediaRef, signal?: AbortSignal): Promise<Asset> {
    const kind = assetKind(item);
    const bytes = await item.read();
    const urn = kind === 'videos' ? await uploadVideo(token, owner, bytes, signal) : await uploadFile(token, owner, kind, bytes, signal);
    await waitUntilAvailable(token, kind, urn, signal);
    return { urn, item, kind };
  }

  async function uploadFile(
    token: string,
    owner: string,
    kind: 'images' | 'documents',
    bytes: Uint8Array,
    signal?: AbortSignal,
  ): Promise<string> {
    const body: InitializeImageUploadBody | InitializeDocumentUploadBody = { initializeUploadRequest: { owner } };
    const init = await rest(token, 'POST', `/${kind}?action=initializeUpload`, { json: body, signal });
    const uploadUrl = str((init.body as Answer<InitializeImageUploadAnswer | InitializeDocumentUploadAnswer> | null)?.value?.uploadUrl);
    const urn = str(
      kind === 'images'
        ? (init.body as Answer<InitializeImageUploadAnswer> | null)?.value?.image
        : (init.body as Answer<InitializeDocumentUploadAnswer> | null)?.value?.document,
    );
    if (!uploadUrl || !urn) throw new PlatformError('transient', `LinkedIn ${kind} initializeUpload returned ${init.text.slice(0, 200)}`);
    await put(uploadUrl, bytes, token, signal);
    return urn;
  }

  /** Videos come back with one upload URL per byte range; finalize lists each part's ETag in order. */
  async function uploadVideo(token: string, owner: string, bytes: Uint8Array, signal?: AbortSignal): Promise<string> {
    const body: InitializeVideoUploadBody = {
      initializeUploadRequest: { owner, fileSizeBytes: bytes.byteLength, uploadCaptions: false, uploadThumbnail: false },
    };
    const init = await rest(token, 'POST', '/videos?action=initializeUpload', { json: body, signal });
    const value = (init.body as Answer<InitializeVideoUploadAnswer> | null)?.value;
    const urn = str(value?.video);
    const parts = Array.isArray(value?.uploadInstructions) ? value.uploadInstructions : [];
    if (!urn || !parts.length) throw new PlatformError('transient', `LinkedIn videos initializeUpload returned ${init.text.slice(0, 200)}`);
    const partIds: string[] = [];
    for (const part of parts) {
      const url = str(part.uploadUrl);
      const first = Number(part.firstByte);
      const last = Number(part.lastByte);
      if (!url || !Number.isInteger(first) || !Number.isInteger(last) || last < first || last >= bytes.byteLength) {
        throw new PlatformError('transient', `LinkedIn returned an unusable video upload instruction: ${JSON.stringify(part)}`);
      }
      const r = await put(url, bytes.subarray(first, last + 1), null, signal);
      const etag = r.headers.get('etag');
      if (!etag) throw new PlatformError('transient', 'LinkedIn video part upload returned no ETag');
      partIds.push(etag.replace(/^"|"$/g, ''));
    }
    const finalize: FinalizeVideoUploadBody = {
      finalizeUploadRequest: {
        video: urn,
        uploadToken: typeof value?.uploadToken === 'string' ? value.uploadToken : '',
        uploadedPartIds: partIds,
      },
    };
    await rest(token, 'POST', '/videos?action=finalizeUpload', { json: finalize, signal });
    return urn;
  }

  /** A post may reference an asset only once LinkedIn reports it AVAILABLE. */
  async function waitUntilAvailable(token: string, kind: AssetKind, urn: string, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + pollTimeoutMs;
    for (;;) {
      const r = await rest(token, 'GET', `/${kind}/${encodeURIComponent(urn)}`, { signal });
      const asset = r.body as Answer<Image | Video | Document> | null;
      const status = str(asset?.status);
      if (status === 'AVAILABLE') return;
      if (status === 'PROCESSING_FAILED') {
        // processingFailureReason is the Videos API's field; an image or document answer names none.
        const why = str((asset as Answer<Video> | null)?.processingFailureReason) ?? 'processing failed';
        throw new PlatformError('permanent', `LinkedIn could not process ${urn}: ${why}`);
      }
      if (Date.now() >= deadline)
        throw new PlatformError('transient', `LinkedIn ${urn} still ${status ?? 'processing'} after ${pollTimeoutMs} ms`);
      await sleep(pollIntervalMs, signal);
    }
  }

  const commentsUrl = (on: PostRef | string) =>
    `${base}/rest/socialActions/${encodeURIComponent(typeof on === 'string' ? on : on.platformPostId)}/comments`;

  /**
   * A first comment: POST /rest/socialActions/{post urn}/comments as the author. The message is
   * text with attributes, not little text, so it goes as written. A 404 is a post LinkedIn does
   * not have, or one published a moment ago that is not open to comments yet (a few seconds,
   * longer with media). The two look alike, so a 404 is transient here: the workflow's retry
   * policy asks again with its backoff, and a post that never appears fails the channel once
   * its attempts run out.
   *
   * A reply to a comment: POST /rest/socialActions/{comment urn}/comments with parentComment that
   * comment and object the post. The comment answered is older than a moment, so its 404 is a
   * comment LinkedIn no longer has: permanent.
   */
  async function comment(token: string, author: string, req: PublishRequest, root: PostRef, parent: PostRef): Promise<PublishResult> {
    if (req.media.length) throw new PlatformError('permanent', 'LinkedIn comments carry no attachments');
    const nested = parent.platformPostId !== root.platformPostId;
    const body: CommentBody = {
      actor: author,
      object: root.platformPostId,
      message: { text: req.text },
      ...(nested ? { parentComment: parent.platformPostId } : {}),
    };
    const r = await versioned(commentsUrl(parent), { method: 'POST', headers: restHeaders(token), json: body, signal: req.signal });
    if (r.status === 404) {
      if (nested) {
        throw new PlatformError('permanent', `LinkedIn 404: ${liReason(r)} (the comment answered is gone)`, {
          status: 404,
          platformCode: errorCode(r.body),
        });
      }
      const message = `LinkedIn 404: ${liReason(r)} (the post is not open to comments yet, or is gone; asked again later)`;
      throw new PlatformError('transient', message, { status: 404, platformCode: errorCode(r.body) });
    }
    if (!isOk(r)) throw liError(r);
    const found = commentResult(r.body as Answer<Comment> | null, root, r.headers.get('x-restli-id'));
    // Created but unnamed: a retry looks for it with findPublished first.
    if (!found) throw new PlatformError('transient', 'LinkedIn created the comment but returned no id', { status: r.status });
    return found;
  }

  /**
   * Comments have no idempotency key: the comments on what was answered (the post's, or the
   * replies of the comment answered: GET …/comments, paged) are read for one by this author with
   * this text. Reading them needs r_organization_social (organizations) or the restricted
   * r_member_social (members); without it LinkedIn answers 403 and we return null, so for a
   * member a lost answer can mean a second comment. A 404 (the post is not open to comments yet,
   * or is gone) holds no comment of ours either: null, and the send that follows meets the same
   * 404 and is classified there.
   */
  async function findComment(
    token: string,
    author: string,
    req: PublishRequest,
    root: PostRef,
    parent: PostRef,
  ): Promise<PublishResult | null> {
    for (let start = 0, page = 0; page < 5; page++) {
      const q = new URLSearchParams({ start: String(start), count: String(COMMENTS_PAGE) });
      const r = await versioned(`${commentsUrl(parent)}?${q}`, { headers: restHeaders(token), signal: req.signal });
      if (r.status === 403 || r.status === 404) return null;
      if (!isOk(r)) throw liError(r);
      const listed = r.body as Answer<CommentsList> | null;
      const list = Array.isArray(listed?.elements) ? listed.elements : [];
      const hit = list.find((c) => c?.actor === author && str(c?.message?.text)?.trim() === req.text.trim());
      if (hit) return commentResult(hit, root, null);
      start += list.length;
      const total = Number(listed?.paging?.total);
      if (list.length < COMMENTS_PAGE || (Number.isFinite(total) && start >= total)) return null;
    }
    return null;
  }

  /**
   * GET /rest/socialActions/{urn}/comments, page by page (at most `pages` of COMMENTS_PAGE): a
   * post's comments, or a comment's replies. null: LinkedIn has no such post or comment (404).
   * A 403 is a token without the read permission: permanent, since reconnecting through the
   * service's sign-in does not grant it.
   */
  async function listOn(token: string, urn: string, pages: number, signal?: AbortSignal): Promise<Answer<Comment>[] | null> {
    const out: Answer<Comment>[] = [];
    for (let start = 0, page = 0; page < pages; page++) {
      const q = new URLSearchParams({ start: String(start), count: String(COMMENTS_PAGE) });
      const r = await versioned(`${commentsUrl(urn)}?${q}`, { headers: restHeaders(token), signal });
      if (r.status === 404) return page === 0 ? null : out;
      if (r.status === 403) {
        throw new PlatformError('permanent', `LinkedIn 403: ${liReason(r)} (reading comments needs r_organization_social)`, {
          status: 403,
          platformCode: errorCode(r.body),
        });
      }
      if (!isOk(r)) throw liError(r);
      const listed = r.body as Answer<CommentsList> | null;
      const list = Array.isArray(listed?.elements) ? listed.elements : [];
      out.push(...list);
      start += list.length;
      const total = Number(listed?.paging?.total);
      if (list.length < COMMENTS_PAGE || (Number.isFinite(total) && start >= total)) break;
    }
    return out;
  }

  /**
   * A post's conversation: its comments (at most COMMENT_PAGES pages), and under each one whose
   * commentsSummary counts replies (or has none to say) those replies (at most REPLY_PAGES pages).
   * null: LinkedIn has no comments list for the post (404).
   */
  async function conversation(token: string, post: string, signal?: AbortSignal) {
    const top = await listOn(token, post, COMMENT_PAGES, signal);
    if (!top) return null;
    const out: { comment: Answer<Comment>; parent: string }[] = [];
    for (const c of top) {
      out.push({ comment: c, parent: post });
      const urn = str(c?.commentUrn);
      const replies = Number(c?.commentsSummary?.totalFirstLevelComments ?? c?.commentsSummary?.aggregatedTotalComments ?? 1);
      if (!urn || !(replies > 0)) continue;
      for (const r of (await listOn(token, urn, REPLY_PAGES, signal)) ?? []) out.push({ comment: r, parent: urn });
    }
    return out;
  }

  /**
   * An organization page's conversation under a post (see the file's head for why members read
   * none). LinkedIn names a commenter by URN only: no name, picture or profile comes with a
   * comment. A 404 for the comments list is a post not open to comments yet, or one gone: the
   * post itself (GET /rest/posts/{urn}) says which.
   */
  async function readComments(credentials: Record<string, unknown>, post: PostRef, signal?: AbortSignal): Promise<CommentsRead> {
    const token = credential(LI, credentials, 'accessToken');
    const author = authorUrn(credentials);
    if (author.startsWith('urn:li:person:')) throw new PlatformError('permanent', MEMBER_UNREADABLE);
    const found = await conversation(token, post.platformPostId, signal);
    if (!found) {
      const r = await versioned(`${base}/rest/posts/${encodeURIComponent(post.platformPostId)}`, { headers: restHeaders(token), signal });
      if (r.status === 404) return { comments: [], gone: true };
      if (!isOk(r)) throw liError(r);
      return { comments: [] };
    }
    const comments: PlatformComment[] = [];
    for (const { comment: c, parent } of found) {
      const urn = str(c?.commentUrn);
      const actor = str(c?.actor);
      const time = Number(c?.created?.time);
      if (!urn || !actor || !(time > 0)) continue;
      comments.push({
        platformCommentId: urn,
        parentPlatformId: str(c?.parentComment) ?? parent,
        author: { name: null, handle: null, avatarUrl: null, profileUrl: null },
        text: str(c?.message?.text) ?? '',
        createdAt: new Date(time).toISOString(),
        url: null,
        ours: actor === author,
      });
    }
    return { comments };
  }

  /**
   * DELETE /rest/socialActions/{target}/comments/{id}?actor= (204). The target is what the comment
   * answers: the post for a comment, the parent comment for a reply. CommentTarget names the post
   * only, so a 404 there is a reply or a comment already gone, and the post's conversation says
   * which (an organization's; a member's channel answers no comments, so its 404 is a comment
   * gone). A comment gone is deleted already. A 403 is a comment this author may not delete:
   * permanent.
   */
  async function deletePublished(credentials: Record<string, unknown>, target: CommentTarget, signal?: AbortSignal): Promise<void> {
    const token = credential(LI, credentials, 'accessToken');
    const author = authorUrn(credentials);
    const urn = target.platformCommentId;
    const id = commentIdOf(urn);
    const remove = async (on: string) => {
      const q = new URLSearchParams({ actor: author });
      const r = await versioned(`${commentsUrl(on)}/${encodeURIComponent(id)}?${q}`, {
        method: 'DELETE',
        headers: restHeaders(token),
        signal,
      });
      if (isOk(r) || r.status === 404) return r.status;
      if (r.status === 403) {
        throw new PlatformError('permanent', `LinkedIn 403: ${liReason(r)} (not a comment this author may delete)`, {
          status: 403,
          platformCode: errorCode(r.body),
        });
      }
      throw liError(r);
    };
    if ((await remove(target.post.platformPostId)) !== 404) return;
    // A member's channel reads no comments, so it answers none: its comments are all under the post.
    if (author.startsWith('urn:li:person:')) return;
    const found = await conversation(token, target.post.platformPostId, signal);
    const parent = found?.find((x) => str(x.comment?.commentUrn) === urn)?.parent;
    if (parent && parent !== target.post.platformPostId) await remove(parent);
  }

  return {
    platform: 'LINKEDIN',
    metricsBatch: 1,

    /**
     * GET /rest/socialActions/{urn}: likes (likesSummary.totalLikes) and comments
     * (commentsSummary.aggregatedTotalComments). Impressions are the organization's share
     * statistics or the member's creator analytics, which need scopes this app does not ask for.
     * A post LinkedIn no longer has (404) is left out.
     */
    async readMetrics(credentials, ids, signal) {
      const token = credential(LI, credentials, 'accessToken');
      const out: Record<string, PlatformMetrics> = {};
      for (const urn of ids) {
        const r = await versioned(`${base}/rest/socialActions/${encodeURIComponent(urn)}`, {
          method: 'GET',
          headers: restHeaders(token),
          signal,
        });
        if (r.status === 404) continue;
        if (!isOk(r)) throw liError(r);
        const body = (r.body ?? {}) as Answer<SocialActions>;
        out[urn] = {
          ...counts(body.likesSummary ?? {}, { likes: 'totalLikes' }),
          ...counts(body.commentsSummary ?? {}, { replies: 'aggregatedTotalComments' }),
        };
      }
      return out;
    },

    readComments,
    deletePublished,

    async publish(req: PublishRequest): Promise<PublishResult> {
      const token = credential(LI, req.credentials, 'accessToken');
      const author = authorUrn(req.credentials);
      if (req.replyTo) return comment(token, author, req, req.replyTo.root, req.replyTo.parent);
      checkMediaMix(req.media);
      // Sequential: keeps the image order of a multi-image post.
      const assets: Asset[] = [];
      for (const item of req.media) assets.push(await upload(token, author, item, req.signal));

      const post: PostBody = {
        author,
        commentary: escapeLittleText(req.text),
        // Sent as given: LinkedIn's own refusal of a value it does not know names the field.
        visibility: (req.options as LinkedInOptions | undefined)?.visibility || 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: 'PUBLISHED',
        isReshareDisabledByAuthor: false,
      };
      if (assets.length) post.content = postContent(assets);

      const r = await versioned(`${base}/rest/posts`, { method: 'POST', headers: restHeaders(token), json: post, signal: req.signal });
      if (!isOk(r)) {
        // LinkedIn refuses the same commentary twice and names the post it already has. On a
        // retry that post is the one an earlier attempt created although its answer was lost.
        const existing = duplicateOf(r);
        if (existing && (req.attempt ?? 1) > 1) return result(existing);
        throw liError(r);
      }
      const urn = r.headers.get('x-restli-id') ?? str((r.body as Answer<Post> | null)?.id);
      // Created but unnamed: retrying is safe, the duplicate check above finds it.
      if (!urn) throw new PlatformError('transient', 'LinkedIn created the post but returned no x-restli-id', { status: r.status });
      return result(urn);
    },

    /**
     * LinkedIn has no idempotency key. Before a retry we read the author's latest posts
     * (GET /rest/posts?q=author) and look for this commentary with the same number of
     * attachments. That finder needs r_organization_social (organizations) or the restricted
     * r_member_social (members); without it LinkedIn answers 403 and we return null, and the
     * retry relies on LinkedIn's DUPLICATE_POST answer instead (see publish). A comment is
     * looked for among the post's comments (findComment).
     */
    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      const token = credential(LI, req.credentials, 'accessToken');
      const author = authorUrn(req.credentials);
      if (req.replyTo) return findComment(token, author, req, req.replyTo.root, req.replyTo.parent);
      const q = new URLSearchParams({ author, q: 'author', count: '20', sortBy: 'LAST_MODIFIED' });
      const r = await versioned(`${base}/rest/posts?${q}`, {
        headers: { ...restHeaders(token), 'X-RestLi-Method': 'FINDER' },
        signal: req.signal,
      });
      if (r.status === 403) return null;
      if (!isOk(r)) throw liError(r);
      const since = Date.now() - lookbackMs;
      const elements = (r.body as Answer<PostsList> | null)?.elements;
      const hit = (Array.isArray(elements) ? elements : []).find(
        (p) =>
          typeof p?.commentary === 'string' &&
          unescapeLittleText(p.commentary).trim() === req.text.trim() &&
          attachmentCount(p) === req.media.length &&
          (Number(p.createdAt) || Date.now()) >= since &&
          p.lifecycleState !== 'DRAFT',
      );
      const urn = str(hit?.id);
      if (!urn) return null;
      const published = Number(hit?.publishedAt) || Number(hit?.createdAt);
      return { ...result(urn), ...(published ? { publishedAt: new Date(published).toISOString() } : {}) };
    },

    async refreshCredentials(credentials: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
      const refreshToken = credential(LI, credentials, 'refreshToken');
      if (!opts.oauth?.clientId || !opts.oauth.clientSecret) {
        throw new PlatformError('permanent', 'LinkedIn token refresh needs LINKEDIN_CLIENT_ID and LINKEDIN_CLIENT_SECRET on the worker');
      }
      const r = await http.send(`${authBase}/oauth/v2/accessToken`, {
        method: 'POST',
        form: {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: opts.oauth.clientId,
          client_secret: opts.oauth.clientSecret,
        },
        signal,
      });
      if (!isOk(r)) throw tokenError(LI, r);
      const answer = r.body as Answer<AccessTokenAnswer> | null;
      const accessToken = str(answer?.access_token);
      if (!accessToken) throw new PlatformError('transient', `LinkedIn token endpoint returned no access_token: ${r.text.slice(0, 200)}`);
      const now = Date.now();
      const expiresIn = Number(answer?.expires_in) || 60 * 24 * 3600;
      const fresh: Record<string, unknown> = { accessToken, expiresAt: new Date(now + expiresIn * 1000).toISOString() };
      // LinkedIn returns the same refresh token with its remaining lifetime (it is not rotated).
      const next = str(answer?.refresh_token);
      if (next) fresh.refreshToken = next;
      const refreshIn = Number(answer?.refresh_token_expires_in);
      if (refreshIn > 0) fresh.refreshTokenExpiresAt = new Date(now + refreshIn * 1000).toISOString();
      return fresh;
    },
  };
}

function result(urn: string): PublishResult {
  return { platformPostId: urn, url: `https://www.linkedin.com/feed/update/${urn}` };
}

/**
 * A comment as LinkedIn names it: its commentUrn, urn:li:comment:({thread},{id}), else built
 * from the post and the id (x-restli-id or the body's id). The API gives no link to a comment,
 * so its url is the post's.
 */
function commentResult(body: Answer<Comment> | null | undefined, post: PostRef, restliId: string | null): PublishResult | null {
  const id = restliId ?? str(body?.id);
  const urn =
    str(body?.commentUrn) ?? (id?.startsWith('urn:li:comment:') ? id : id ? `urn:li:comment:(${post.platformPostId},${id})` : undefined);
  if (!urn) return null;
  const created = Number(body?.created?.time);
  return {
    platformPostId: urn,
    url: post.url || result(post.platformPostId).url,
    ...(created ? { publishedAt: new Date(created).toISOString() } : {}),
  };
}

/** A comment's id: the second part of urn:li:comment:({thread},{id}), or the value itself when it is no such URN. */
function commentIdOf(urn: string): string {
  return /^urn:li:comment:\(.+,([^,()]+)\)$/.exec(urn)?.[1] ?? urn;
}

function authorUrn(credentials: Record<string, unknown>): string {
  const urn = credential(LI, credentials, 'authorUrn');
  if (!/^urn:li:(person|organization):[^\s]+$/.test(urn)) {
    throw new PlatformError('permanent', `LinkedIn authorUrn must be urn:li:person:… or urn:li:organization:…, not ${urn}`);
  }
  return urn;
}

function assetKind(item: MediaRef): AssetKind {
  if (item.type === 'image' || item.type === 'gif') return 'images';
  if (item.type === 'video') return 'videos';
  if (item.type === 'document') return 'documents';
  throw new PlatformError('permanent', `LinkedIn does not accept ${item.type} attachments (${item.fileName})`);
}

/** One video or one document, or 1–20 images (2+ become a multiImage post). */
function checkMediaMix(media: MediaRef[]): void {
  const kinds = media.map(assetKind);
  if (kinds.length > 1 && kinds.some((k) => k !== 'images')) {
    throw new PlatformError('permanent', 'LinkedIn posts carry a video or a document only on its own');
  }
  if (kinds.length > 20) throw new PlatformError('permanent', 'LinkedIn multi-image posts carry at most 20 images');
}

function postContent(assets: Asset[]): PostContent {
  if (assets.length > 1) {
    return { multiImage: { images: assets.map((a) => withAlt({ id: a.urn }, a.item)) } };
  }
  const a = assets[0]!;
  if (a.kind === 'documents') return { media: { id: a.urn, title: a.item.fileName || 'Document' } };
  if (a.kind === 'videos') return { media: { id: a.urn } };
  return { media: withAlt({ id: a.urn }, a.item) };
}

function withAlt<T extends Pick<MediaContent, 'id' | 'altText'>>(media: T, item: MediaRef): T {
  return item.altText ? { ...media, altText: item.altText } : media;
}

function attachmentCount(post: Answer<Post> | null | undefined): number {
  const images = post?.content?.multiImage?.images;
  if (Array.isArray(images)) return images.length;
  return post?.content?.media?.id ? 1 : 0;
}

/**
 * `commentary` is in LinkedIn's "little text" format: unescaped reserved characters start
 * templates, and LinkedIn silently cuts the text at the first one it cannot parse.
 */
export function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, '\\$&');
}

function unescapeLittleText(text: string): string {
  return text.replace(/\\([\\|{}@[\]()<>#*_~])/g, '$1');
}

/** 422 DUPLICATE_POST says "Content is a duplicate of urn:li:share:…". */
function duplicateOf(r: Reply): string | null {
  if (r.status !== 422 || errorCode(r.body) !== 'DUPLICATE_POST') return null;
  return /urn:li:(?:share|ugcPost):\d+/.exec(str((r.body as Answer<RestliError> | null)?.message) ?? '')?.[0] ?? null;
}

/**
 * Rest.li errors: {status, message, code?, serviceErrorCode?, errorDetails.inputErrors[].code}.
 * 401 is a dead or revoked token; 403 a token without the permission (w_member_social,
 * w_organization_social, or not an admin of the organization), which reconnecting fixes.
 */
function liError(r: Reply): PlatformError {
  const status = r.status;
  const platformCode = errorCode(r.body);
  const message = `LinkedIn ${status}: ${liReason(r)}`;
  if (status === 401 || status === 403) return new PlatformError('reauth', message, { status, platformCode });
  if (status === 408 || status === 429 || status >= 500) {
    return new PlatformError('transient', message, { status, platformCode, retryAfterMs: parseRetryAfter(r.headers.get('retry-after')) });
  }
  return new PlatformError('permanent', message, { status, platformCode });
}

function liReason(r: Reply): string {
  const e = r.body as Answer<RestliError> | null;
  const raw = str(e?.message);
  // Messages often carry the server's Java exception class in front of the sentence.
  const message = raw?.replace(/^(?:[\w$]+\.)+[\w$]*(?:Exception|Error): /, '');
  const input = e?.errorDetails?.inputErrors;
  const first = Array.isArray(input) ? input[0] : undefined;
  const detail = str(first?.description);
  if (message && detail && !message.includes(detail)) return `${message} (${detail})`;
  return message ?? detail ?? reasonOf(r);
}

function errorCode(body: unknown): string | undefined {
  const e = body as Answer<RestliError> | null;
  const input = e?.errorDetails?.inputErrors;
  const inputCode = Array.isArray(input) ? str(input[0]?.code) : undefined;
  const service = e?.serviceErrorCode;
  return inputCode ?? str(e?.code) ?? (typeof service === 'number' ? String(service) : undefined);
}
