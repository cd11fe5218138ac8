// A minimal "browser" for the web application's tests: requests through app.handle() with a
// cookie jar, forms posted with the page's CSRF token, and HTML queried by CSS selector (Bun's
// HTMLRewriter) — the tests look pages up by data-testid, as the browser tests will.
import { addChannel } from '../../domain/channels.ts';
import { createUser } from '../../services/users.ts';
import type { Role } from '../../db/entities/index.ts';
import { harness } from './index.ts';
import { makeOrg } from './fixtures.ts';

export interface Found {
  attrs: Record<string, string>;
  /** Text content (entities decoded, whitespace collapsed). */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`', nbsp: ' ' };
export const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|#39|#96|nbsp);/g, (_, e: string) => ENTITIES[e]!);

/** Every element matching the selector, with its attributes and text. */
export async function query(html: string, selector: string): Promise<Found[]> {
  const out: Found[] = [];
  const open: { text: string; rec: Found }[] = [];
  await new HTMLRewriter()
    .on(selector, {
      element(el) {
        const rec: Found = { attrs: Object.fromEntries([...el.attributes].map(([k, v]) => [k, decode(v)])), text: '' };
        out.push(rec);
        if (el.selfClosing || el.tagName === 'input' || el.tagName === 'img' || el.tagName === 'meta') return;
        const slot = { text: '', rec };
        open.push(slot);
        el.onEndTag(() => {
          slot.rec.text = decode(slot.text).replace(/\s+/g, ' ').trim();
          open.splice(open.indexOf(slot), 1);
        });
      },
      text(t) {
        for (const slot of open) slot.text += t.text;
      },
    })
    .transform(new Response(html))
    .text();
  return out;
}

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
  setCookies: string[];
  json: () => any;
  query: (selector: string) => Promise<Found[]>;
  one: (selector: string) => Promise<Found>;
}

type App = { handle: (r: Request) => Promise<Response> };

export class Browser {
  readonly jar = new Map<string, string>();
  /** The CSRF token of the last signed-in page. */
  csrfToken = '';

  constructor(
    readonly app: App,
    readonly origin = 'http://localhost',
  ) {}

  cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    o: {
      form?: Record<string, string | string[]> | URLSearchParams;
      json?: unknown;
      headers?: Record<string, string>;
      csrf?: boolean;
    } = {},
  ): Promise<Page> {
    // As a browser: pages are asked for as HTML, fetches as anything.
    const headers: Record<string, string> = {
      accept: o.json !== undefined ? '*/*' : 'text/html,application/xhtml+xml,*/*;q=0.8',
      ...o.headers,
    };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (o.form) {
      const form = o.form instanceof URLSearchParams ? new URLSearchParams(o.form) : new URLSearchParams();
      if (!(o.form instanceof URLSearchParams)) {
        for (const [k, v] of Object.entries(o.form)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
      }
      if (o.csrf !== false && !form.has('_csrf')) form.set('_csrf', this.csrfToken);
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['content-type'] = 'application/json';
      if (o.csrf !== false) headers['x-csrf-token'] ??= this.csrfToken;
    } else if (o.csrf !== false && method !== 'GET') {
      headers['x-csrf-token'] ??= this.csrfToken;
    }
    const res = await this.app.handle(new Request(new URL(path, this.origin).toString(), { method, headers, body }));
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = decodeURIComponent(pair!.slice(eq + 1).trim());
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const html = await res.text();
    const meta = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
    if (meta) this.csrfToken = decode(meta[1]!);
    const page: Page = {
      status: res.status,
      headers: res.headers,
      html,
      location: res.headers.get('location'),
      setCookies,
      json: () => JSON.parse(html),
      query: (selector) => query(html, selector),
      one: async (selector) => {
        const found = await query(html, selector);
        if (found.length !== 1) throw new Error(`expected one ${selector}, found ${found.length} (status ${res.status})`);
        return found[0]!;
      },
    };
    return page;
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }

  post(
    path: string,
    form: Record<string, string | string[]> | URLSearchParams = {},
    o: { csrf?: boolean; headers?: Record<string, string> } = {},
  ) {
    return this.request('POST', path, { form, ...o });
  }

  json(method: string, path: string, body?: unknown, o: { csrf?: boolean; headers?: Record<string, string> } = {}) {
    return this.request(method, path, { json: body, ...o });
  }

  /** Signs in through the form (its double-submit CSRF token included). */
  async signIn(email: string, password: string, next?: string): Promise<Page> {
    const form = await this.get(`/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
    const token = (await form.one('input[name="_csrf"]')).attrs.value!;
    const res = await this.post('/sign-in', { _csrf: token, email, password, next: next ?? '' }, { csrf: false });
    if (res.status === 303) await this.get('/calendar'); // picks up the session's CSRF token
    return res;
  }
}

let counter = 0;

/** A new organization with one member, signed in. */
export async function signedInUser(app: App, o: { plan?: string; password?: string; role?: Role } = {}) {
  const h = await harness();
  const org = await makeOrg(o.plan ?? 'PRO', `Web org ${++counter}`);
  const email = `user${counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = o.password ?? 'correct horse battery';
  const user = await createUser(h.orm.em.fork(), { organizationId: org.id, email, password, role: o.role });
  const browser = new Browser(app);
  const res = await browser.signIn(email, password);
  if (res.status !== 303) throw new Error(`sign-in failed with ${res.status}`);
  return { org, user, email, password, browser };
}

/** signedInUser, with a Mastodon channel "Team News" of the organization on this instance. */
export async function signedInUserWithChannel(app: App, instanceUrl: string, o: { role?: Role } = {}) {
  const user = await signedInUser(app, o);
  const h = await harness();
  const channel = await addChannel(h.orm.em.fork(), h.credentialsKey, {
    organizationId: user.org.id,
    platform: 'MASTODON',
    name: 'Team News',
    credentials: { instanceUrl, accessToken: 'good-token' },
  });
  return { ...user, channel };
}
