// Where each platform's feed folds a long text: it shows about the first `chars` characters, then
// the platform's "more" control, and the rest only once the reader taps it. The previews
// (web/channel-preview.ts, the composer's and a preview link's) show a text so.
//
// Rules:
// - `chars` is counted as the platform counts the text it is sent (platforms/text-length.ts), each
//   link as it is sent (a short link while the post shortens links). null: the feed shows the
//   whole text (within the platform's limit, PLATFORM_INFO maxChars).
// - These figures are approximate display folds, not limits: no platform documents them, they vary
//   with the app, the screen and the line breaks (a feed also folds after a few lines), and
//   nothing is refused for them. They say where a reader stops seeing the text without a tap.
// - The preview cuts at the last grapheme that fits, never inside a grapheme or a link: a link
//   that crosses the fold goes behind it whole.
//
// Sources (the figures the social-media guides agree on, 2024–2026): Instagram captions ~125
// (charactercounter.com/instagram, bulkpublish.com/blog/instagram-character-limit); LinkedIn ~210
// on desktop, ~140 on mobile (posttruncate.com/en/platform-limits, web-3-apps.com LinkedIn post
// length); Facebook ~477 (Dynamic Signal's content-sharing specifications say 483;
// posttruncate.com ~480 on desktop); YouTube descriptions ~157 on desktop, ~100 on mobile
// (videodescriptions.com, txttools.pages.dev); TikTok captions ~100 to 150
// (posttruncate.com/en/ad-previews/tiktok-ads, napoleoncat.com); Pinterest descriptions ~50–60
// in the feed (bulkpublish.com/blog/pinterest-character-limit, typecount.com). X, Bluesky,
// Mastodon, Threads, Telegram, Discord and Reddit show a post's whole text.
import type { Platform } from './catalog.ts';

export interface FeedFold {
  /** About how many characters the feed shows before its "more" control. */
  chars: number;
  /** The control's words, as the feed writes them. */
  more: string;
}

export const FEED_FOLD: Record<Platform, FeedFold | null> = {
  X: null,
  BLUESKY: null,
  THREADS: null,
  LINKEDIN: { chars: 210, more: '…see more' },
  MASTODON: null,
  INSTAGRAM: { chars: 125, more: '… more' },
  FACEBOOK: { chars: 477, more: 'See more' },
  TIKTOK: { chars: 100, more: 'more' },
  YOUTUBE: { chars: 157, more: '…more' },
  PINTEREST: { chars: 60, more: '… more' },
  REDDIT: null,
  TELEGRAM: null,
  DISCORD: null,
};
