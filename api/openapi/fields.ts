// Words of the OpenAPI entries that several route files use (api/routes/*.ts): a date-time
// parameter, publishAt's bounds, where and when a new post or a series goes. Words used by one
// file stay in that file, beside its entries.

export const DATE_TIME = (text: string) => ({ description: text, format: 'date-time' });
export const PUBLISH_AT_BOUNDS = 'at most 5 minutes in the past and before 9999-12-31T00:00:00Z (by the server’s clock; `422` otherwise)';

/**
 * Where and when a new post goes: the fields of createPost and validatePost beside its content
 * (whose words are the content schema's own, domain/posts/content.ts).
 */
export const PLACEMENT_FIELDS = {
  channelIds:
    'Target channels: ids of channels of the organization (from GET /channels), 1 to 50, no repeats. An unknown or disabled channel is `422`, one outside a channel-limited key’s list `403`, one to reconnect `409 reauth_required`.',
  publishAt: DATE_TIME(`When to publish, with an offset: ${PUBLISH_AT_BOUNDS}. Omit to publish now.`),
  queue:
    '`true` instead of `publishAt`: at the earliest instant that is a free slot of every target channel’s posting queue (GET /channels/{id}/queue): a slot time at which no other post (not deleted, scheduled or publishing) sits on that channel. Within 90 days, else `422`. `scheduledAt` is the chosen time; the post is otherwise an ordinary scheduled post. Two queued creates never get the same slot on a channel.',
};

/** The `tagId` filter of a list of `what` (http/page-query.ts TagIdParam). */
export const TAG_FILTER = (what: string) =>
  `Only ${what} with this tag (\`tag_…\`, GET /tags); an id that is not one of the organization’s tags matches none.`;

/** The tags a series or a feed gives each post it makes (`what`). */
export const MADE_POSTS_TAG_IDS = (what: string) =>
  `Tags of the organization (ids from GET /tags), no repeats, at most 20, that ${what} gets as it is made; one that is not the organization’s is \`422\` at \`tagIds\`. A PATCH replaces them (\`[]\`: none).`;

/** The fields of a series beside its template's content (createSeries; updateSeries takes the same, each optional). */
export const SERIES_FIELDS = {
  channelIds: PLACEMENT_FIELDS.channelIds,
  tagIds: MADE_POSTS_TAG_IDS('each occurrence'),
  publishAt: DATE_TIME(`The first occurrence, with an offset: ${PUBLISH_AT_BOUNDS}.`),
  repeat:
    '`every`: `day`, `week` or `month`; `interval` (default 1, at most 365); `until` (not before `publishAt`, before 9999-12-31T00:00:00Z; no occurrence after it) and `count` (at most this many, 1–1000); neither: no end.',
  timeZone: 'IANA time zone whose local time of day the rule keeps, e.g. `Europe/Berlin`; default: the organization’s (UTC unless set).',
};
