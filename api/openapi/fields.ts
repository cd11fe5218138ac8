// Words of the OpenAPI entries that several route files use (api/routes/*.ts): a date-time
// parameter, publishAt's bounds, the fields of a new post and of a series. Words used by one
// file stay in that file, beside its entries.

export const DATE_TIME = (text: string) => ({ description: text, format: 'date-time' });
export const PUBLISH_AT_BOUNDS = 'at most 5 minutes in the past and before 9999-12-31T00:00:00Z (by the server’s clock; `422` otherwise)';

/** The fields of a new post: the body of createPost and of validatePost (one schema). */
export const CREATE_FIELDS = {
  content:
    'Default text, used on every channel without its own text in `contentByPlatform`. On each channel the text must fit the channel’s `rules.maxChars`, counted as its platform counts (GET /channels); an empty text needs media.',
  channelIds:
    'Target channels: ids of channels of the organization (from GET /channels), 1 to 50, no repeats. An unknown or disabled channel is `422`, one outside a channel-limited key’s list `403`, one to reconnect `409 reauth_required`.',
  publishAt: DATE_TIME(`When to publish, with an offset: ${PUBLISH_AT_BOUNDS}. Omit to publish now.`),
  queue:
    '`true` instead of `publishAt`: at the earliest instant that is a free slot of every target channel’s posting queue (GET /channels/{id}/queue): a slot time at which no other post (not deleted, scheduled or publishing) sits on that channel. Within 90 days, else `422`. `scheduledAt` is the chosen time; the post is otherwise an ordinary scheduled post. Two queued creates never get the same slot on a channel.',
  mediaIds:
    '`ready` media items of the organization to attach, in order (ids from the media library). Each target platform’s media limits apply: how many, which types, a video alone; a channel with `rules.requiresMedia` needs an image or a video.',
  contentByPlatform:
    'Text per platform (upper-case platform name → text), instead of `content` on that platform’s channels. Each key must be the platform of a target channel.',
  reddit: 'Subreddit and title; required when a REDDIT channel is targeted.',
};

/** The fields of a series (createSeries; updateSeries takes the same, each optional). */
export const SERIES_FIELDS = {
  content: CREATE_FIELDS.content,
  channelIds: CREATE_FIELDS.channelIds,
  mediaIds: CREATE_FIELDS.mediaIds,
  contentByPlatform: CREATE_FIELDS.contentByPlatform,
  reddit: CREATE_FIELDS.reddit,
  publishAt: DATE_TIME(`The first occurrence, with an offset: ${PUBLISH_AT_BOUNDS}.`),
  repeat:
    '`every`: `day`, `week` or `month`; `interval` (default 1, at most 365); `until` (not before `publishAt`, before 9999-12-31T00:00:00Z; no occurrence after it) and `count` (at most this many, 1–1000); neither: no end.',
  timeZone: 'IANA time zone whose local time of day the rule keeps, e.g. `Europe/Berlin`; default: the organization’s (UTC unless set).',
};
