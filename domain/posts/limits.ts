// The size limits of a post request, in one place: the schemas of a post's content and its
// channels (domain/posts/content.ts) are built from them, and the API, the MCP tools and the web
// app's forms check against those schemas, so all refuse the same sizes. Each platform's own
// limits (text length, attachments) are platforms/catalog.ts's.
import { REDDIT_LIMITS } from '../../platforms/options.ts';

export const POST_LIMITS = {
  /** Characters of `content` and of each `contentByPlatform` text. */
  textChars: 100_000,
  /** Media items attached to one post. */
  mediaItems: 20,
  /** Target channels of one post. */
  channels: 50,
  /** Reddit's own limits on a subreddit name and a post title (platforms/options.ts). */
  subredditChars: REDDIT_LIMITS.subredditChars,
  redditTitleChars: REDDIT_LIMITS.titleChars,
  /** Items of `thread` (and of each `threadByPlatform` list); each platform's own limit is platforms/catalog.ts FOLLOW_UPS. */
  threadItems: 50,
  /** Media items attached to one thread item. */
  threadItemMedia: 10,
} as const;
