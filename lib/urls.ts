// URLs that others hand us (a platform's answer, a feed's item) and that we hand on as links: to
// the web app's pages, API clients and webhook receivers. Only http(s) is a link; anything else
// (`javascript:`, `data:`, a relative path) would run or resolve where the link is followed.

/**
 * The absolute http: or https: URL `url` names (as the URL parser reads it), or null for anything
 * else: another scheme, a relative or unparsable string, empty.
 */
export function safeHttpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
