// What an API key limited to channels may see: a post or a series only when every one of its
// channels is within the key's list, a queue only when its channel is. A key for all channels (and
// the web app, which passes 'all') sees the whole organization. The post list applies the same
// rule in SQL (post_page, its `key_channels` test), where this code cannot run. Media has a rule
// of its own (media.ts hiddenMediaIds: visible when a post using it is on one of the key's channels).

/** An API key's channels: 'all', or the ids of the channels it is limited to. */
export type KeyChannels = 'all' | readonly string[];

/** The ids in `channelIds` outside the key's list, in their order (none for a key for all channels). */
export function channelsOutsideKey(keyChannels: KeyChannels, channelIds: readonly string[]): string[] {
  return keyChannels === 'all' ? [] : channelIds.filter((id) => !keyChannels.includes(id));
}

/** Whether the key sees what sits on these channels: every one of them is within its list. */
export function keySees(keyChannels: KeyChannels, channelIds: readonly string[]): boolean {
  return keyChannels === 'all' || channelIds.every((id) => keyChannels.includes(id));
}
