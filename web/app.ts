// The web application, served by the API process itself at `/` (outside /v1 and /storage),
// mounted beside the API by server/app.ts: server-rendered HTML from these routes, a little
// vanilla JS and CSS from web/static.
// See web/README.md for the pages, their flows and their test ids.
import { NotFoundError } from 'elysia';
import { router } from '../http/router.ts';
import { authRoutes } from './auth.ts';
import { calendarRoutes } from './calendar.ts';
import { channelRoutes } from './channels.ts';
import { composerRoutes } from './composer.ts';
import { csvImportRoutes } from './csv-import.ts';
import { draftRoutes } from './drafts.ts';
import { feedRoutes } from './feeds.ts';
import { inboxRoutes } from './inbox.ts';
import { createWeb, errorPage, publicRoute, webBodyParser, type WebDeps } from './context.ts';
import { redirect } from './http.ts';
import { keyRoutes } from './keys.ts';
import { memberRoutes } from './members.ts';
import { invitationRoutes } from './invitations.ts';
import { mediaRoutes } from './media.ts';
import { postLifecycleRoutes } from './post-lifecycle.ts';
import { approvalRoutes } from './approvals.ts';
import { previewRoutes } from './previews.ts';
import { approvalSettingsRoutes } from './approval-settings.ts';
import { queueRoutes } from './queue-editor.ts';
import { settingsRoutes } from './settings.ts';
import { staticRoutes } from './static.ts';
import { webhookRoutes } from './webhooks.ts';
import { analyticsRoutes } from './analytics.ts';
import { auditLogRoutes } from './audit-log.ts';
import { tagRoutes } from './tags.ts';
import { linkSettingsRoutes } from './link-settings.ts';

/** Paths of the JSON API (any version, the storage URLs, the pages' JSON): unknown ones keep the API's JSON 404. */
const API_PATH = /^\/(v\d+|storage|web\/api)(\/|$)/i;

// Browsers ask for text/html when they navigate; API clients (no Accept, JSON, curl's any-type)
// get the API's JSON errors.
const wantsHtml = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html');

export function webApp(deps: WebDeps) {
  const web = createWeb(deps);
  const notFoundPage = publicRoute(web, (ctx) => errorPage(web, 404, 'There is no page at this address.', ctx.signedIn, ctx.tz));
  const notFound = (input: { request: Request }) => {
    if (API_PATH.test(new URL(input.request.url).pathname) || !wantsHtml(input.request)) throw new NotFoundError();
    return notFoundPage(input);
  };
  const home = publicRoute(web, (ctx) => redirect(ctx.signedIn ? '/calendar' : '/sign-in'));
  return (
    router('web')
      // Ahead of every web route's own parser: the session first, then the body with its limit.
      .onParse(webBodyParser(web))
      .use(staticRoutes())
      .get('/', (input: { request: Request }) => {
        if (!wantsHtml(input.request)) throw new NotFoundError();
        return home(input);
      })
      .use(authRoutes(web))
      .use(calendarRoutes(web))
      .use(csvImportRoutes(web))
      .use(composerRoutes(web))
      .use(draftRoutes(web))
      .use(postLifecycleRoutes(web))
      .use(approvalRoutes(web))
      .use(inboxRoutes(web))
      .use(previewRoutes(web))
      .use(approvalSettingsRoutes(web))
      .use(linkSettingsRoutes(web))
      .use(tagRoutes(web))
      .use(channelRoutes(web))
      .use(queueRoutes(web))
      .use(feedRoutes(web))
      .use(analyticsRoutes(web))
      .use(keyRoutes(web))
      .use(memberRoutes(web))
      .use(auditLogRoutes(web))
      .use(invitationRoutes(web))
      .use(settingsRoutes(web))
      .use(webhookRoutes(web))
      .use(mediaRoutes(web))
      .get('/*', notFound)
  );
}
