// The page shell: landmarks (banner, navigation, main, contentinfo), a skip link, the signed-in
// user, the viewer's time zone, and the CSRF token for scripts.
import type { SignedIn } from '../services/users.ts';
import { html, type SafeHtml } from './html.ts';
import { assetUrl } from './static.ts';
import { can, type Action } from '../domain/access.ts';

export type NavItem =
  | 'calendar'
  | 'compose'
  | 'drafts'
  | 'import'
  | 'approvals'
  | 'inbox'
  | 'analytics'
  | 'channels'
  | 'feeds'
  | 'tags'
  | 'media'
  | 'keys'
  | 'webhooks'
  | 'members'
  | 'audit'
  | null;

/** The pages in the navigation, each shown to the roles that may use it (domain/access.ts). */
const NAV: { id: Exclude<NavItem, null>; href: string; label: string; action: Action }[] = [
  { id: 'calendar', href: '/calendar', label: 'Calendar', action: 'read' },
  { id: 'compose', href: '/posts/new', label: 'New post', action: 'posts.write' },
  { id: 'drafts', href: '/drafts', label: 'Drafts', action: 'read' },
  { id: 'import', href: '/posts/import', label: 'Import CSV', action: 'posts.write' },
  { id: 'approvals', href: '/approvals', label: 'Approvals', action: 'posts.approve' },
  { id: 'inbox', href: '/inbox', label: 'Inbox', action: 'read' },
  { id: 'analytics', href: '/analytics', label: 'Analytics', action: 'read' },
  { id: 'channels', href: '/channels', label: 'Channels', action: 'read' },
  { id: 'feeds', href: '/feeds', label: 'Feeds', action: 'read' },
  { id: 'tags', href: '/settings/tags', label: 'Tags', action: 'read' },
  { id: 'media', href: '/media', label: 'Media', action: 'read' },
  { id: 'keys', href: '/settings/api-keys', label: 'API keys', action: 'keys.manage' },
  { id: 'webhooks', href: '/settings/webhooks', label: 'Webhooks', action: 'webhooks.manage' },
  { id: 'members', href: '/settings/members', label: 'Members', action: 'read' },
  { id: 'audit', href: '/settings/audit', label: 'Audit log', action: 'audit.read' },
];

export interface PageInput {
  title: string;
  body: SafeHtml;
  signedIn?: SignedIn | null;
  tz?: string;
  nav?: NavItem;
  /** Page scripts under /static (app.js is always loaded). */
  scripts?: string[];
  /** Page stylesheets under /static (app.css is always loaded). */
  styles?: string[];
  notice?: string | null;
  /** app.js may reload the page once to show it in the browser's time zone (GET pages only). */
  tzReload?: boolean;
}

export function layout(page: PageInput): SafeHtml {
  const s = page.signedIn;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Postpilot</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('app.css')}">
${(page.styles ?? []).map((name) => html`<link rel="stylesheet" href="${assetUrl(name)}">`)}
${s ? html`<meta name="csrf-token" content="${s.session.csrfToken}">` : ''}
<script src="${assetUrl('app.js')}" defer></script>
${(page.scripts ?? []).map((name) => html`<script src="${assetUrl(name)}" defer></script>`)}
</head>
<body data-tz="${page.tz ?? 'UTC'}"${page.tzReload ? html` data-tz-reload="true"` : ''}${s && !s.user.timeZone ? html` data-tz-unset="true"` : ''}>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
  <a class="brand" href="${s ? '/calendar' : '/sign-in'}">Postpilot</a>
  ${
    s
      ? html`<nav aria-label="Main" data-testid="main-nav">
    <ul>${NAV.filter((n) => can(s.role, n.action)).map((n) => html`<li><a href="${n.href}" data-testid="nav-${n.id}"${n.id === page.nav ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}</ul>
  </nav>
  <div class="account">
    ${
      s.organizations.length > 1
        ? html`<form method="post" action="/session/organization" class="inline" data-testid="org-switcher">
      <input type="hidden" name="_csrf" value="${s.session.csrfToken}">
      <label for="org-switch" class="visually-hidden">Organization</label>
      <select id="org-switch" name="organizationId" data-testid="org-select">${s.organizations.map(
        (o) => html`<option value="${o.id}"${o.id === s.organization.id ? html` selected` : ''}>${o.name} (${o.role})</option>`,
      )}</select>
      <button type="submit" class="link-button" data-testid="org-switch">Switch</button>
    </form>`
        : html`<span class="org-name" data-testid="current-org">${s.organization.name}</span>`
    }
    <span class="user-email" data-testid="current-user">${s.user.email}</span>
    <a href="/settings/time-zone" class="header-tz" data-testid="header-tz" title="Your time zone: change it">${page.tz ?? 'UTC'}</a>
    <form method="post" action="/sign-out" class="inline">
      <input type="hidden" name="_csrf" value="${s.session.csrfToken}">
      <button type="submit" class="link-button" data-testid="sign-out">Sign out</button>
    </form>
  </div>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
${page.notice ? html`<p class="notice" role="status" data-testid="notice">${page.notice}</p>` : ''}
${page.body}
</main>
<footer class="site-footer">
  <p>Times are shown in <span data-testid="time-zone">${page.tz ?? 'UTC'}</span>.${s ? html` <a href="/settings/time-zone" data-testid="footer-tz-link">Change time zone</a>` : ''}</p>
</footer>
</body>
</html>`;
}

export function errorBody(title: string, message: string, extra?: SafeHtml): SafeHtml {
  return html`<section class="error-page" data-testid="error-page">
  <h1>${title}</h1>
  <p data-testid="error-message">${message}</p>
  ${extra ?? ''}
  <p><a href="/calendar">Back to the calendar</a></p>
</section>`;
}

/** Field errors of a failed form, announced to screen readers. */
export function formErrors(messages: string[]): SafeHtml {
  if (!messages.length) return html``;
  return html`<div class="form-errors" role="alert" data-testid="form-errors">
  <p>Please fix the following:</p>
  <ul>${messages.map((m) => html`<li>${m}</li>`)}</ul>
</div>`;
}
