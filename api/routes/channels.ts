import { router } from '../../http/router.ts';
import { channelView, listChannels } from '../../domain/channels.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { ChannelCapabilitiesSchema, ChannelListSchema, PathId } from '../schemas.ts';
import { channelCapabilities } from '../../domain/capabilities.ts';
import { t } from 'elysia';
import { doc } from '../openapi/operation.ts';

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const CHANNEL_OPERATIONS = {
  listChannels: doc({
    operationId: 'listChannels',
    tag: 'Channels',
    action: 'read',
    summary: 'List the connected channels',
    description: 'Oldest first. A key limited to some channels sees only those. Takes no query parameters.',
  }),

  getChannelCapabilities: doc({
    operationId: 'getChannelCapabilities',
    tag: 'Channels',
    action: 'read',
    summary: 'What this channel’s account can do now',
    description:
      'The platform’s fixed facts for this channel (`fixed`: its text limit, media limits, follow-ups) and what the platform says of this account now (`live`): TikTok’s creator_info (privacy levels the creator may choose, longest video, comments, duets and stitches disabled), Pinterest’s boards, a subreddit’s flairs and rules (REDDIT, with `?subreddit=`), YouTube’s assignable categories. The live part is kept 5 minutes per channel and question (`readAt` says when it was read). A read the platform refuses answers 200 with `live: null` and `liveError` (`kind` reauth, transient or permanent, and the platform’s words); it does not change the channel. Other platforms, a channel that must be reconnected, and REDDIT without `subreddit` have no live part.',
    errors: ['not_found', 'validation_failed'],
    errorNotes: {
      not_found: 'no such channel in the organization',
      forbidden_scope: 'the key lacks the `read` scope, or is limited to channels and this is not one of them (`details.channelIds`)',
      validation_failed: '`subreddit` is not a subreddit name, or is given for a channel that is not REDDIT',
    },
    success: { description: 'Fixed facts, the live part or why it is missing.' },
  }),
};

export function channelRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/channels',
      async ({ auth }) => {
        const channels = await listChannels(deps.orm.em.fork(), auth.organization.id, auth.channels);
        return { data: channels.map(channelView) };
      },
      { response: { 200: ChannelListSchema }, operation: CHANNEL_OPERATIONS.listChannels },
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
        operation: CHANNEL_OPERATIONS.getChannelCapabilities,
      },
    );
}
