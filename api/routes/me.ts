import { router } from '../../http/router.ts';
import { accountView } from '../../services/account.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { KeyMemberSchema, MeSchema } from '../schemas.ts';
import { keyMember } from '../../domain/members.ts';
import { OPERATIONS } from '../openapi/operations.ts';

export function meRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/me',
      // The same view as the MCP tool whoami (services/account.ts).
      ({ auth }) => accountView(auth),
      { response: { 200: MeSchema }, operation: OPERATIONS.getMe },
    )
    .get('/me/member', async ({ auth }) => ({ member: await keyMember(deps.orm.em.fork(), auth.organization.id, auth.key.id) }), {
      response: { 200: KeyMemberSchema },
      operation: OPERATIONS.getKeyMember,
    });
}
