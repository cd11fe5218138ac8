// What a connector keeps in memory for the retries of one post (an upload session, a pending
// publish, a login): bounded, so a worker that runs for months does not grow without end.

/** Sets key → value as the newest entry, forgetting the oldest beyond `max` entries. */
export function remember<T>(map: Map<string, T>, key: string, value: T, max = 1000): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
