import { router } from '../../http/router.ts';
import { channelView, listChannels } from '../../domain/channels.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { ChannelCapabilitiesSchema, ChannelListSchema, PathId } from '../schemas.ts';
import { channelCapabilities } from '../../domain/capabilities.ts';
import { t } from 'elysia';
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
      { response: { 200: ChannelListSchema }, operation: OPERATIONS.listChannels },
    )
    .get(
      '/channels/:id/capabilities',
      ({ auth, params, query }) =>
        channelCapabilities(
          deps.orm.em.fork(),
          { orm: deps.orm, ...deps.platforms, now: () => auth.now },
          auth.organization.id,
          params.id,
          auth.channels,
          query,
        ),
      {
        params: t.Object({ id: PathId() }),
        query: t.Object({
          subreddit: t.Optional(
            t.String({
              pattern: '^[A-Za-z0-9][A-Za-z0-9_]{1,20}$',
              description: 'REDDIT channels: the subreddit asked about, without r/.',
            }),
          ),
        }),
        response: { 200: ChannelCapabilitiesSchema },
        operation: OPERATIONS.getChannelCapabilities,
      },
    );
}
