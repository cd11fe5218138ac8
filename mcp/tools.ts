// The tools of the MCP server: each states its input as JSON Schema (TypeBox), the scope its /v1
// twin needs, and calls the same services as that route (services/*). What a tool returns is the
// /v1 answer's JSON; what it throws becomes a tool error carrying our error code (mcp/server.ts).
import { Type as T, type Static, type TSchema } from '@sinclair/typebox';
import type { AppDeps } from '../http/deps.ts';
import { COMMENT_STATUSES, type CommentStatus, POST_STATUSES, type PostStatus } from '../db/entities/index.ts';
import { COMMENT_FIELDS, listInbox, postConversation, updateComment } from '../domain/inbox/comments.ts';
import { getReply } from '../domain/inbox/replies.ts';
import { createDraft, DRAFT_FIELDS, listDrafts } from '../domain/posts/drafts.ts';
import { scheduleDraftOnce } from '../services/draft-requests.ts';
import { replyToCommentOnce } from '../services/reply-requests.ts';
import { DATE_TIME_PATTERN, parseRangeBound } from '../lib/date-time.ts';
import { ApiError, errors, type ErrorBody, type FieldError } from '../lib/errors.ts';
import { DEFAULT_OUTBOUND } from '../lib/outbound.ts';
import type { AuditTarget } from '../domain/audit.ts';
import { accountView, type Caller } from '../services/account.ts';
import { channelView, listChannels } from '../domain/channels.ts';
import { channelCapabilities } from '../domain/capabilities.ts';
import { ChannelIds as PostChannelIds, CREATE_FIELDS, EDIT_FIELDS } from '../domain/posts/content.ts';
import { BodyId } from '../lib/chars.ts';
import { GENERATE_LIMITS, generateAltText, generatePostDrafts } from '../services/generate.ts';
import { KEY_PATTERN, type StoredResponse } from '../services/idempotency.ts';
import { ALT_TEXT_CHARS, getMediaItem, mediaView } from '../domain/media.ts';
import { uploadMediaFromUrl } from '../services/media-from-url.ts';
import { cancelPost, retryPost } from '../domain/posts/lifecycle.ts';
import { POST_LIMITS } from '../domain/posts/limits.ts';
import { validatePost } from '../domain/posts/create.ts';
import { createPostOnce, createPostRequest, editPostForKey } from '../services/post-requests.ts';
import { getPostForKey, listPostsForKey } from '../domain/posts/view.ts';
import { postAnalyticsForKey } from '../domain/analytics/post-analytics.ts';
import type { AuditOrigin } from '../domain/audit.ts';
import type { Action } from '../domain/access.ts';
import { createTag, listTags, TAG_FIELDS } from '../domain/tags.ts';
import { actorOf, APPROVAL_COMMENT_CHARS, decideApproval } from '../domain/posts/approval.ts';

/** What a tool runs with: the app's dependencies and the caller its API key authenticated. */
export interface ToolContext {
  deps: AppDeps;
  caller: Caller;
  /** Where the request came from, for the audit log (mcp/audit.ts). */
  origin?: AuditOrigin;
  /** Set by a tool whose answer is a replay of an earlier call (an idempotency key): no change to record. */
  replayed?: boolean;
}

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface Tool<S extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  /** What it does, as its /v1 twin (domain/access.ts): the scope and the maker's role it needs. */
  action: Action;
  /** The audit event of a call that changes something (mcp/audit.ts); a read-only tool has none. */
  audit?: AuditTarget;
  input: S;
  annotations: ToolAnnotations;
  run: (ctx: ToolContext, args: Static<S>) => Promise<Record<string, unknown>>;
}

/** A create answered once per idempotency key: its answer, or its refusal thrown (a replayed refusal as it was the first time). */
function answerOnce(ctx: ToolContext, result: StoredResponse & { replayed: boolean }): Record<string, unknown> {
  ctx.replayed = result.replayed;
  if (result.status >= 400) {
    const { error } = result.body as ErrorBody;
    throw new ApiError(error.code, error.message, { details: error.details, status: result.status });
  }
  return result.body as Record<string, unknown>;
}

const tool = <S extends TSchema>(t: Tool<S>): Tool => t as unknown as Tool;

// Input values, with the bounds /v1 puts on them (lengths in characters).
const Id = (description: string) => BodyId(description);
const Text = (max: number, description: string, min = 0) => T.String({ minLength: min, maxLength: max, description });
/** As /v1 reads date-times: RFC 3339 with an offset (a pattern, so no format registry is needed). */
const DateTime = (description: string) => T.String({ pattern: DATE_TIME_PATTERN, description });
const ChannelIds = { ...PostChannelIds, description: 'Target channels: ids (`ch_…`) from list_channels, 1 to 50, no repeats.' };
/** A post: its content (domain/posts/content.ts, the same schema as POST /v1/posts), where and when. */
const PostFields = {
  ...CREATE_FIELDS,
  channelIds: ChannelIds,
  publishAt: T.Optional(
    DateTime('When to publish, ISO 8601 with an offset (e.g. 2026-12-01T09:00:00Z), at most 5 minutes in the past. Omit to publish now.'),
  ),
  queue: T.Optional(
    T.Boolean({
      description:
        'true: publish at the earliest free slot of every target channel’s posting queue instead of at publishAt (leave publishAt out).',
    }),
  ),
};
const PostId = T.Object({ id: Id('The post id (`post_…`).') }, { additionalProperties: false });
/** A list's page: its size and the previous page's nextCursor, as /v1 takes them. */
const PAGE = {
  limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: 'Page size, 1 to 100 (default 20).' })),
  cursor: T.Optional(T.String({ pattern: '^[A-Za-z0-9_-]{0,512}$', description: 'The nextCursor of the previous page.' })),
};
const NoInput = T.Object({}, { additionalProperties: false });
/** A list's tag filter, as /v1's `tagId` (http/page-query.ts): an id that is none of the organization's tags matches none. */
const TagFilter = (what: string) =>
  T.Optional(Id(`Only ${what} with this tag (\`tag_…\`, from list_tags); an id that is not one of the organization’s tags matches none.`));

function need<K extends 'temporal' | 'storage'>(deps: AppDeps, ...what: K[]): Required<Pick<AppDeps, K>> {
  for (const w of what) if (!deps[w]) throw new Error(`${w} is not configured for the MCP server`);
  return deps as unknown as Required<Pick<AppDeps, K>>;
}

const viewer = (c: Caller) => ({ apiKeyId: c.key.id, channels: c.channels });

const PostBody = T.Object(PostFields, { additionalProperties: false });

export const TOOLS: Tool[] = [
  tool({
    name: 'whoami',
    title: 'Who am I',
    description:
      'The organization this API key belongs to, the key’s scopes (read, generate, publish, approve) and channel limits, and the quota used this month. Call it first to learn what the key may do.',
    action: 'read',
    input: NoInput,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ caller }) => accountView(caller),
  }),

  tool({
    name: 'list_channels',
    title: 'List channels',
    description:
      'The connected social accounts (channels) this key may post to, each with its id, platform, status (`active` can be posted to; `reauth_required` must be reconnected in the web app) and rules: maxChars (the longest text, counted as the platform counts), requiresMedia, and requiredFields (e.g. REDDIT needs reddit.subreddit and reddit.title).',
    action: 'read',
    input: NoInput,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }) => ({
      data: (await listChannels(deps.orm.em.fork(), caller.organization.id, caller.channels)).map(channelView),
    }),
  }),

  tool({
    name: 'get_channel_capabilities',
    title: 'What a channel can do',
    description:
      'For one channel: the platform’s fixed facts (maxChars, media limits, whether it takes a thread or a first comment) and what the platform says of this account now: TikTok’s privacy levels and limits, Pinterest’s boards, a subreddit’s flairs and rules (REDDIT, with subreddit), YouTube’s categories. The live part is kept 5 minutes; liveError says why it is missing.',
    action: 'read',
    input: T.Object(
      {
        id: Id('The channel id (`ch_…`) from list_channels.'),
        subreddit: T.Optional(
          T.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_]{1,20}$', description: 'REDDIT channels: the subreddit, without r/.' }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async ({ deps, caller }, { id, subreddit }) => ({
      ...(await channelCapabilities(
        deps.orm.em.fork(),
        { orm: deps.orm, ...deps.platforms, now: () => caller.now },
        caller.organization.id,
        id,
        caller.channels,
        subreddit === undefined ? {} : { subreddit },
      )),
    }),
  }),

  tool({
    name: 'validate_post',
    title: 'Check a post',
    description:
      'Runs every check create_post runs (channels, each channel’s text length and media rules, required fields, publishAt, duplicates, plan limits) without creating anything. Returns each channel’s text and its length against maxChars, or the error create_post would give.',
    action: 'posts.write',
    input: PostBody,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({
      ...(await validatePost(deps.orm.em.fork(), createPostRequest(caller, a, { orm: deps.orm, ...deps.platforms }))),
    }),
  }),

  tool({
    name: 'create_post',
    audit: { action: 'post.create', resource: 'post' },
    title: 'Create a post',
    description:
      'Schedules a post on one or more channels at `publishAt`, or at the next free slot of the channels’ posting queues with `queue: true`, or publishes it now (within about a minute) when neither is given. With `thread` and `firstComment` it is a conversation: the post, then its replies one by one (or its comment), each with its own outcome in channels[].items. Returns the post with a status per channel; follow it with get_post. Check first with validate_post if unsure. Pass an idempotencyKey to make a retry safe (the same key and arguments within 24 h return the first post instead of creating another).',
    action: 'posts.write',
    input: T.Object(
      {
        ...PostFields,
        idempotencyKey: T.Optional(
          T.String({
            pattern: KEY_PATTERN.source,
            description: '1–255 printable ASCII characters, no spaces; as the Idempotency-Key header of POST /v1/posts.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async (ctx, { idempotencyKey, ...body }) => {
      const { deps, caller } = ctx;
      const em = deps.orm.em.fork();
      const result = await createPostOnce(
        { em, temporal: deps.temporal, storage: deps.storage, capabilities: { orm: deps.orm, ...deps.platforms } },
        caller,
        body,
        idempotencyKey,
      );
      return answerOnce(ctx, result);
    },
  }),

  tool({
    name: 'list_posts',
    title: 'List posts',
    description:
      'Posts newest first (by scheduled time) with each channel’s status, live URL and error. Filter by status, channel, tag or a time range; page with limit and the nextCursor of the previous page.',
    action: 'read',
    input: T.Object(
      {
        status: T.Optional(
          T.Union(
            POST_STATUSES.map((s) => T.Literal(s)),
            { description: 'Only posts with this status.' },
          ),
        ),
        channelId: T.Optional(Id('Only posts that include this channel.')),
        tagId: TagFilter('posts'),
        from: T.Optional(DateTime('Only posts scheduled at or after this instant.')),
        to: T.Optional(DateTime('Only posts scheduled before this instant.')),
        ...PAGE,
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      const fields: FieldError[] = [];
      const from = parseRangeBound(a.from, 'from', fields);
      const to = parseRangeBound(a.to, 'to', fields);
      if (fields.length) throw errors.validation(fields);
      return listPostsForKey(
        deps.orm.em.fork(),
        caller.organization.id,
        caller.channels,
        {
          status: a.status as PostStatus | undefined,
          channelId: a.channelId,
          tagId: a.tagId,
          from,
          to,
          limit: a.limit ?? 20,
          cursor: a.cursor,
        },
        deps.storage,
      );
    },
  }),

  tool({
    name: 'list_tags',
    title: 'List tags',
    description:
      'The organization’s tags (id, name, colour), by name. Put them on posts with tagIds (create_post, update_post, create_draft); list_posts and list_drafts narrow to one with tagId.',
    action: 'read',
    input: NoInput,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }) => ({ data: await listTags(deps.orm.em.fork(), caller.organization.id) }),
  }),

  tool({
    name: 'create_tag',
    audit: { action: 'tag.create', resource: 'tag' },
    title: 'Make a tag',
    description:
      'Makes a tag of the organization (a campaign, a topic) to put on posts. Its name is unique whatever its letter case: an existing one is a conflict naming it (details.tagId), so look with list_tags first. As POST /v1/tags.',
    action: 'tags.manage',
    input: T.Object({ name: TAG_FIELDS.name, colour: T.Optional(TAG_FIELDS.colour) }, { additionalProperties: false }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({ ...(await createTag(deps.orm.em.fork(), caller.organization.id, a)) }),
  }),

  tool({
    name: 'get_post',
    title: 'Get a post',
    description:
      'One post with its status on every channel: published ones have platformPostId and url, failed ones error, errorCode and retryable.',
    action: 'read',
    input: PostId,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({
      ...(await getPostForKey(deps.orm.em.fork(), caller.organization.id, a.id, caller.channels, deps.storage)),
    }),
  }),

  tool({
    name: 'get_post_analytics',
    title: 'How a post performed',
    description:
      'Per channel of a post: the latest figures (impressions, views, likes, replies, reposts, quotes, saves, clicks; null where the platform reports none, never 0), when each was read, the next scheduled reading, and every reading so far. Readings are taken 1 h, 6 h, 24 h, 3 d, 7 d and 30 d after publishing. Where the platform reports no clicks, clicks is the service’s count of the post’s short links (clicksSource: service); links lists each short link with its clicks.',
    action: 'read',
    input: PostId,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({
      ...(await postAnalyticsForKey(deps.orm.em.fork(), caller.organization.id, a.id, caller.channels, deps.storage)),
    }),
  }),

  tool({
    name: 'get_post_comments',
    title: 'A post’s conversation',
    description:
      'What people answered under a published post on each of its channels, and your replies, as collected so far: depth first (each comment followed by those answering it, with its depth and parentId), each with author, text, time, link and status.',
    action: 'read',
    input: PostId,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({
      data: await postConversation(deps.orm.em.fork(), caller.organization.id, a.id, caller.channels),
    }),
  }),

  tool({
    name: 'list_inbox',
    title: 'The inbox',
    description:
      'Comments others wrote under the organization’s published posts, newest first. Filter by channel, post, status (unread, read, replied, hidden), assignee (a member’s user id, or none) or since; page with limit and the nextCursor of the previous page.',
    action: 'read',
    input: T.Object(
      {
        channelId: T.Optional(Id('Only this channel’s comments.')),
        postId: T.Optional(Id('Only this post’s comments.')),
        status: T.Optional(
          T.Union(
            COMMENT_STATUSES.map((s) => T.Literal(s)),
            { description: 'Only comments with this status.' },
          ),
        ),
        assignee: T.Optional(COMMENT_FIELDS.assignee),
        since: T.Optional(DateTime('Only comments written at or after this instant.')),
        ...PAGE,
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      const fields: FieldError[] = [];
      const since = parseRangeBound(a.since, 'since', fields);
      if (fields.length) throw errors.validation(fields);
      return {
        ...(await listInbox(deps.orm.em.fork(), caller.organization.id, caller.channels, {
          channelId: a.channelId,
          postId: a.postId,
          status: a.status as CommentStatus | undefined,
          assignee: a.assignee,
          since,
          limit: a.limit ?? 20,
          cursor: a.cursor,
        })),
      };
    },
  }),

  tool({
    name: 'update_comment',
    title: 'Mark or assign a comment',
    description: 'Marks a comment read or unread, and/or gives it to a member of the organization (assigneeUserId) or to no one (null).',
    action: 'comments.manage',
    audit: { action: 'comment.update', resource: 'comment' },
    input: T.Object(
      {
        id: Id('The comment id (`cmt_…`).'),
        status: T.Optional(COMMENT_FIELDS.status),
        assigneeUserId: T.Optional(COMMENT_FIELDS.assigneeUserId),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      if (a.status === undefined && a.assigneeUserId === undefined)
        throw errors.validation([{ path: '', message: 'give status, assigneeUserId or both' }]);
      const change = {
        ...(a.status ? { status: a.status } : {}),
        ...(a.assigneeUserId !== undefined ? { assigneeUserId: a.assigneeUserId } : {}),
      };
      return { ...(await updateComment(deps.orm.em.fork(), caller.organization.id, a.id, caller.channels, change, new Date())) };
    },
  }),

  tool({
    name: 'reply_to_comment',
    title: 'Answer a comment',
    description:
      'Publishes a reply to a collected comment (get_post_comments, list_inbox) on its platform, from the channel’s account, once: pass an idempotencyKey to make a retry safe (the same key and text within 24 h return the first reply). A contributor’s reply waits for approval as their posts do. Returns the reply (`publishing` or `pending_approval`); follow it with get_reply.',
    action: 'comments.reply',
    audit: { action: 'comment.reply', resource: 'reply' },
    input: T.Object(
      {
        id: Id('The comment id (`cmt_…`).'),
        content: T.String({
          minLength: 1,
          maxLength: POST_LIMITS.textChars,
          description: 'The reply’s text, within the platform’s limit.',
        }),
        idempotencyKey: T.Optional(
          T.String({ pattern: KEY_PATTERN.source, description: 'As the Idempotency-Key header of POST /v1/comments/{id}/reply.' }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async (ctx, { id, content, idempotencyKey }) => {
      const { deps, caller } = ctx;
      const result = await replyToCommentOnce({ em: deps.orm.em.fork(), temporal: deps.temporal }, caller, id, { content }, idempotencyKey);
      return answerOnce(ctx, result);
    },
  }),

  tool({
    name: 'get_reply',
    title: 'A reply to a comment',
    description:
      'A reply sent through reply_to_comment: its status, and its outcome (url once published; error and errorCode when it failed).',
    action: 'read',
    input: T.Object({ id: Id('The reply id (`rpl_…`).') }, { additionalProperties: false }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({ ...(await getReply(deps.orm.em.fork(), caller.organization.id, a.id, caller.channels)) }),
  }),

  tool({
    name: 'create_draft',
    title: 'Keep a draft',
    description:
      'Keeps content not yet scheduled: any of create_post’s fields (none required), the channels it is meant for (maybe none) and an intended time (maybe none). A draft is never published; schedule it with schedule_draft.',
    action: 'posts.write',
    audit: { action: 'draft.create', resource: 'draft' },
    input: T.Object(
      { ...DRAFT_FIELDS, intendedAt: T.Optional(T.Union([DateTime('When it is meant to go out.'), T.Null()])) },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      const who = {
        organizationId: caller.organization.id,
        keyChannels: caller.channels,
        actor: actorOf(await caller.principal()),
        now: caller.now,
      };
      return { ...(await createDraft(deps.orm.em.fork(), who, a)) };
    },
  }),

  tool({
    name: 'list_drafts',
    title: 'List drafts',
    description:
      'The organization’s drafts, last changed first; `status` draft (not scheduled yet) or scheduled (became a post, `postId`); `tagId` narrows to one tag’s.',
    action: 'read',
    input: T.Object(
      { status: T.Optional(T.Union([T.Literal('draft'), T.Literal('scheduled')])), tagId: TagFilter('drafts'), ...PAGE },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => ({
      ...(await listDrafts(deps.orm.em.fork(), caller.organization.id, caller.channels, {
        status: a.status,
        tagId: a.tagId,
        limit: a.limit ?? 20,
        cursor: a.cursor,
      })),
    }),
  }),

  tool({
    name: 'schedule_draft',
    title: 'Schedule a draft',
    description:
      'Makes the post from a draft through create_post’s own path (its checks; approval for those who need it): at publishAt, at the next queue slot with queue: true, else at the draft’s intended time, else now. The draft records the post. Pass an idempotencyKey to make a retry safe.',
    action: 'posts.write',
    audit: { action: 'draft.schedule', resource: 'post' },
    input: T.Object(
      {
        id: Id('The draft id (`drf_…`).'),
        publishAt: T.Optional(DateTime('When to publish, ISO 8601 with an offset.')),
        queue: T.Optional(T.Boolean({ description: 'The next free slot of the channels’ posting queues.' })),
        idempotencyKey: T.Optional(
          T.String({ pattern: KEY_PATTERN.source, description: 'As the Idempotency-Key header of POST /v1/drafts/{id}/schedule.' }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async (ctx, { id, idempotencyKey, ...placement }) => {
      const { deps, caller } = ctx;
      const capabilities = { orm: deps.orm, ...deps.platforms };
      const result = await scheduleDraftOnce(
        { em: deps.orm.em.fork(), temporal: deps.temporal, storage: deps.storage, capabilities },
        caller,
        id,
        placement,
        idempotencyKey,
      );
      return answerOnce(ctx, result);
    },
  }),

  tool({
    name: 'update_post',
    audit: { action: 'post.update', resource: 'post' },
    title: 'Edit a scheduled post',
    description:
      'Changes a post that is still scheduled: its text, per-platform text, publish time, media, channels, Reddit fields, thread, first comment or tags (give at least one). The same rules as create_post apply. A post that is publishing or done cannot be edited (conflict), but its tags alone (tagIds) can.',
    action: 'posts.write',
    input: T.Object(
      {
        id: Id('The post id (`post_…`).'),
        ...EDIT_FIELDS,
        publishAt: T.Optional(DateTime('New publish time, ISO 8601 with an offset, at most 5 minutes in the past.')),
        channelIds: T.Optional(ChannelIds),
      },
      { additionalProperties: false, minProperties: 2 },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async ({ deps, caller }, { id, ...edit }) => {
      const { temporal } = need(deps, 'temporal');
      return {
        ...(await editPostForKey(
          { em: deps.orm.em.fork(), temporal, storage: deps.storage, capabilities: { orm: deps.orm, ...deps.platforms } },
          caller,
          id,
          edit,
        )),
      };
    },
  }),

  tool({
    name: 'cancel_post',
    audit: { action: 'post.delete', resource: 'post' },
    title: 'Cancel or delete a post',
    description:
      'A scheduled post is cancelled (never published); a published or failed post is removed from this service’s lists (its live posts on the platforms stay). A post that is publishing right now cannot be cancelled (conflict). As DELETE /v1/posts/{id}.',
    action: 'posts.publish',
    input: PostId,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      await cancelPost(deps.orm.em.fork(), deps.temporal, caller.organization.id, a.id, caller.channels, caller.now);
      return { id: a.id, deleted: true };
    },
  }),

  tool({
    name: 'retry_post',
    audit: { action: 'post.retry', resource: 'post' },
    title: 'Retry failed channels',
    description:
      'Publishes again the channels of a failed post that failed (never those already published). Channels that need reconnecting must be reconnected first (reauth_required).',
    action: 'posts.publish',
    input: PostId,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async ({ deps, caller }, a) => ({
      ...(await retryPost(deps.orm.em.fork(), deps.temporal, caller.organization.id, a.id, caller.channels, caller.now)),
    }),
  }),

  ...(['approve', 'reject'] as const).map((decision) =>
    tool({
      name: `${decision}_post`,
      audit: { action: decision === 'approve' ? 'post.approve' : 'post.reject', resource: 'post' },
      title: decision === 'approve' ? 'Approve a post' : 'Reject a post',
      description:
        decision === 'approve'
          ? 'Approves a scheduled post waiting for approval (its `approval.status` pending or rejected): it is then published at its time, or at once when that time passed less than 24 hours ago. As POST /v1/posts/{id}/approve.'
          : 'Rejects a scheduled post waiting for approval: it is not published unless approved later (within 24 hours of its time). As POST /v1/posts/{id}/reject.',
      action: 'posts.approve',
      input: T.Object(
        {
          id: Id('The post id (`post_…`).'),
          comment: T.Optional(Text(APPROVAL_COMMENT_CHARS, 'Why, for the author (shown with the approval).')),
        },
        { additionalProperties: false },
      ),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: async ({ deps, caller }, a: { id: string; comment?: string }) => ({
        ...(await decideApproval(
          deps.orm.em.fork(),
          deps.temporal,
          caller.organization.id,
          a.id,
          caller.channels,
          {
            decision,
            by: await caller.principal(),
            comment: a.comment ?? null,
            now: caller.now,
          },
          deps.storage,
        )),
      }),
    }),
  ),

  tool({
    name: 'upload_media_from_url',
    audit: { action: 'media.create', resource: 'media' },
    title: 'Add media from a URL',
    description:
      'Fetches a file from a public http(s) URL into the media library (images, GIFs, videos, PDFs, audio; at most 100 MB this way) and processes it as an upload is processed. Returns the media item: `ready` (use its id in mediaIds) or `failed` with the reason in `error`.',
    action: 'media.write',
    input: T.Object(
      {
        url: T.String({
          minLength: 1,
          maxLength: 2048,
          pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
          description: 'Public http(s) URL of the file.',
        }),
        fileName: T.Optional(Text(255, 'File name to keep (default: the last part of the URL).', 1)),
        altText: T.Optional(Text(ALT_TEXT_CHARS, 'Alt text for the file (describe it for people who cannot see it).')),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async ({ deps, caller }, a) => {
      const { storage, temporal } = need(deps, 'storage', 'temporal');
      const item = await uploadMediaFromUrl(deps.orm.em.fork(), storage, temporal, deps.outbound ?? DEFAULT_OUTBOUND, {
        organizationId: caller.organization.id,
        viewer: viewer(caller),
        url: a.url,
        fileName: a.fileName,
        altText: a.altText ?? null,
        now: caller.now,
      });
      return { ...(await mediaView(item, storage)) };
    },
  }),

  tool({
    name: 'get_media',
    title: 'Get a media item',
    description:
      'One media item: its status (pending, ready, failed), type, size, dimensions, alt text and description, and a URL to view it.',
    action: 'read',
    input: T.Object({ id: Id('The media id (`med_…`).') }, { additionalProperties: false }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async ({ deps, caller }, a) => {
      const { storage } = need(deps, 'storage');
      return { ...(await mediaView(await getMediaItem(deps.orm.em.fork(), caller.organization.id, a.id, viewer(caller)), storage)) };
    },
  }),

  tool({
    name: 'generate_post',
    title: 'Draft a post per channel',
    description:
      'Writes a draft for each channel from a brief, fitting each channel’s rules (maxChars as the platform counts, a title for REDDIT), with the character counts. Creates nothing: pass the drafts to create_post (as content, or contentByPlatform per platform). A draft marked truncated was cut to fit; missingFields lists what create_post still needs (e.g. reddit.subreddit).',
    action: 'posts.generate',
    input: T.Object(
      {
        prompt: Text(GENERATE_LIMITS.promptChars, 'What the post is about.', 1),
        tone: T.Optional(Text(GENERATE_LIMITS.toneChars, 'How it should sound, e.g. friendly, formal, playful.', 1)),
        channelIds: ChannelIds,
        mediaIds: T.Optional(
          T.Array(Id('A media id.'), {
            maxItems: POST_LIMITS.mediaItems,
            uniqueItems: true,
            description: 'Ready media the post will carry (their descriptions inform the drafts).',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async ({ deps, caller }, a) =>
      generatePostDrafts(deps.orm.em.fork(), deps.generate, {
        organizationId: caller.organization.id,
        key: viewer(caller),
        prompt: a.prompt,
        tone: a.tone,
        channelIds: a.channelIds,
        mediaIds: a.mediaIds ?? [],
      }),
  }),

  tool({
    name: 'generate_alt_text',
    title: 'Suggest alt text',
    description: 'Describes a ready image (or a video’s thumbnail) for people who cannot see it: a suggested alt text. Changes nothing.',
    action: 'posts.generate',
    input: T.Object({ mediaId: Id('The media id (`med_…`).') }, { additionalProperties: false }),
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async ({ deps, caller }, a) => ({
      ...(await generateAltText(deps.orm.em.fork(), deps.storage, deps.vision, {
        organizationId: caller.organization.id,
        key: viewer(caller),
        mediaId: a.mediaId,
      })),
    }),
  }),
];
