// The API's own objects for webhook event bodies (README "Webhooks"): the services build them, and
// the activities, below the services, get them through ActivityDeps.webhookEvents.
import { Channel, MediaItem } from '../../db/entities/index.ts';
import type { WebhookViews } from './outbox.ts';
import { channelView } from '../channels.ts';
import { mediaView } from '../media.ts';
import { loadPostView } from '../posts/view.ts';
import type { ObjectStorage } from '../../storage/types.ts';

export function webhookViews(storage?: ObjectStorage): WebhookViews {
  return {
    post: async (em, id) => ({ ...(await loadPostView(em, id, storage)) }),
    channel: async (em, id) => ({ ...channelView(await em.findOneOrFail(Channel, { id })) }),
    media: async (em, id) => {
      const item = await em.findOneOrFail(MediaItem, { id });
      // Without object storage (a worker that runs no media work) the item has no URLs to sign.
      return storage ? { ...(await mediaView(item, storage)) } : { id: item.id, status: item.status, type: item.type };
    },
  };
}
