// Settings → Audit log: who changed what in the organization, newest first, filtered by action and
// resource, a page at a time (domain/audit.ts, as GET /v1/audit-events). An administration page:
// owners and admins (`settings.manage`).
import { router } from '../http/router.ts';
import { AUDIT_ACTIONS, AUDIT_FILTER_CHARS, AUDIT_RESOURCES, listAuditEvents, type AuditEventView } from '../domain/audit.ts';
import { pageRoute, type PageContext, type Web } from './context.ts';
import { html } from './html.ts';
import { htmlResponse } from './http.ts';
import { layout } from './layout.ts';
import { formatDateTime } from './time.ts';

const PAGE_SIZE = 50;

/** A filter from the query: one of the known values, or none. */
const known = (value: string | null, values: readonly string[]) => (value && values.includes(value) ? value : undefined);

function eventRow(ctx: PageContext, e: AuditEventView) {
  const details = Object.entries(e.details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  return html`<tr data-testid="audit-row" data-action="${e.action}" data-resource-id="${e.resource.id ?? ''}">
    <td><time datetime="${e.occurredAt}">${formatDateTime(new Date(e.occurredAt), ctx.tz)}</time></td>
    <td data-testid="audit-actor">${e.actor.name} <span class="hint">(${e.actor.type.replace('_', ' ')})</span></td>
    <td data-testid="audit-action"><code>${e.action}</code></td>
    <td data-testid="audit-resource">${e.resource.type}${e.resource.id ? html` <code>${e.resource.id}</code>` : ''}</td>
    <td title="${e.userAgent ?? ''}">${e.ip ?? '—'}</td>
    <td class="hint">${details}</td>
  </tr>`;
}

async function auditPage(ctx: PageContext): Promise<Response> {
  const q = ctx.url.searchParams;
  const action = known(q.get('action'), AUDIT_ACTIONS);
  const resourceType = known(q.get('resourceType'), AUDIT_RESOURCES);
  const resourceId = q.get('resourceId')?.trim().slice(0, AUDIT_FILTER_CHARS) || undefined;
  const cursor = q.get('cursor') ?? undefined;
  const page = await listAuditEvents(ctx.em, ctx.signedIn.organization.id, { limit: PAGE_SIZE, cursor, action, resourceType, resourceId });
  const next = new URLSearchParams();
  for (const [k, v] of Object.entries({ action, resourceType, resourceId })) if (v) next.set(k, v);
  if (page.nextCursor) next.set('cursor', page.nextCursor);
  const body = html`<h1>Audit log</h1>
<p class="hint">Every change made to ${ctx.signedIn.organization.name}: in this app, through the API and the MCP server
(by API key, with the member it belongs to), and by an operator's CLI. Entries cannot be changed or deleted.</p>
<form method="get" action="/settings/audit" class="filters" data-testid="audit-filters">
  <div class="field"><label for="action">Action</label>
    <select id="action" name="action" data-testid="audit-filter-action"><option value="">Any</option>${AUDIT_ACTIONS.map(
      (a) => html`<option value="${a}"${a === action ? html` selected` : ''}>${a}</option>`,
    )}</select></div>
  <div class="field"><label for="resourceType">Resource</label>
    <select id="resourceType" name="resourceType" data-testid="audit-filter-resource"><option value="">Any</option>${AUDIT_RESOURCES.map(
      (r) => html`<option value="${r}"${r === resourceType ? html` selected` : ''}>${r}</option>`,
    )}</select></div>
  <div class="field"><label for="resourceId">Resource id</label>
    <input id="resourceId" name="resourceId" maxlength="${AUDIT_FILTER_CHARS}" value="${resourceId ?? ''}" data-testid="audit-filter-resource-id"></div>
  <div class="actions"><button type="submit" data-testid="audit-apply">Show</button></div>
</form>
${
  page.data.length
    ? html`<table class="table" data-testid="audit-events">
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Resource</th><th scope="col">From</th><th scope="col">Details</th></tr></thead>
  <tbody>${page.data.map((e) => eventRow(ctx, e))}</tbody>
</table>`
    : html`<p data-testid="audit-empty">No changes recorded${action || resourceType || resourceId ? ' for these filters' : ''}.</p>`
}
${page.nextCursor ? html`<p><a href="/settings/audit?${next.toString()}" data-testid="audit-next">Older entries</a></p>` : ''}`;
  return htmlResponse(layout({ title: 'Audit log', body, signedIn: ctx.signedIn, tz: ctx.tz, nav: 'audit' }));
}

export function auditLogRoutes(web: Web) {
  return router().get(
    '/settings/audit',
    pageRoute(web, 'audit.read', (ctx) => auditPage(ctx)),
  );
}
