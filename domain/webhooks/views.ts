// The API's own objects for webhook event bodies (docs/api.md "Webhooks"): a post, a channel and a
// media item as GET /v1/posts/{id}, /v1/channels and /v1/media/{id} show them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Channel, MediaItem } from '../../db/entities/index.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { channelView } from '../channels.ts';
import { mediaView } from '../media.ts';
import { loadPostView } from '../posts/view.ts';

export interface WebhookViews {
  post(em: EntityManager, postId: string): Promise<Record<string, unknown>>;
  channel(em: EntityManager, channelId: string): Promise<Record<string, unknown>>;
  media(em: EntityManager, mediaId: string): Promise<Record<string, unknown>>;
}

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
