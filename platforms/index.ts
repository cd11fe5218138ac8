// The connectors the worker publishes with. A platform without one fails its channel with a
// permanent "not supported yet" error instead of retrying.
import { createMastodonConnector } from './mastodon.ts';
import type { Connectors } from './types.ts';

export function createConnectors(): Connectors {
  return { MASTODON: createMastodonConnector() };
}
