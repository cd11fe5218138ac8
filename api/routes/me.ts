import { router } from '../../http/router.ts';
import { accountView } from '../../services/account.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { KeyMemberSchema, MeSchema } from '../schemas.ts';
import { keyMember } from '../../domain/members.ts';
import { doc } from '../openapi/operation.ts';

// The document entries of these routes (api/openapi/operation.ts): words, action, audit. Each is
// attached to its route below (`operation:`); api/openapi/operations.ts gathers every file's table.
export const ME_OPERATIONS = {
  getMe: doc({
    operationId: 'getMe',
    tag: 'Account',
    action: 'read',
    summary: 'The calling key, its organization and quota',
    description:
      'Every authenticated request of the organization counts towards `quota.usedThisMonth`, this one included, except those refused with `429` (past the key’s per-minute limit or the month’s quota).',
  }),

  getKeyMember: doc({
    operationId: 'getKeyMember',
    tag: 'Account',
    action: 'read',
    summary: 'The member the calling key belongs to',
    description:
      'A key made in the web app belongs to the member who made it: its scopes stay within what their role may hold, a new role revokes the keys it no longer allows, and removing the member revokes their keys. `member` is null for a key an operator made with the CLI.',
  }),
};

export function meRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/me',
      // The same view as the MCP tool whoami (services/account.ts).
      ({ auth }) => accountView(auth),
      { response: { 200: MeSchema }, operation: ME_OPERATIONS.getMe },
    )
    .get('/me/member', async ({ auth }) => ({ member: await keyMember(deps.orm.em.fork(), auth.organization.id, auth.key.id) }), {
      response: { 200: KeyMemberSchema },
      operation: ME_OPERATIONS.getKeyMember,
    });
}
