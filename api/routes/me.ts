import { router } from '../../http/router.ts';
import { accountView } from '../../services/account.ts';
import { authPlugin } from '../auth.ts';
import type { AppDeps } from '../../http/deps.ts';
import { MeSchema } from '../schemas.ts';
import { OPERATIONS } from '../openapi/operations.ts';

export function meRoutes(deps: AppDeps) {
  return router()
    .use(authPlugin(deps))
    .get(
      '/me',
      // The same view as the MCP tool whoami (services/account.ts).
      ({ auth }) => accountView(auth),
      { scope: 'read', response: { 200: MeSchema }, detail: OPERATIONS.getMe },
    );
}
