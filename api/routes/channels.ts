import { router } from '../../http/router.ts';
import { channelView, listChannels } from '../../domain/channels.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { ChannelListSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

export function channelRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/channels',
      async ({ auth }) => {
        const channels = await listChannels(deps.orm.em.fork(), auth.organization.id, auth.channels);
        return { data: channels.map(channelView) };
      },
      { scope: 'read', response: { 200: ChannelListSchema }, detail: OPERATIONS.listChannels },
    );
}
