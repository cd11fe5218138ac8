// Real headless Chromium (playwright-core driving Debian's /usr/bin/chromium, or CHROMIUM_PATH)
// for the end-to-end browser tests: the app on a real loopback socket, a page that records its
// console errors, uncaught exceptions, failed requests and any request leaving the machine.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import sharp from 'sharp';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * A loopback HTTP server whose handler is set later: the app needs its own public base URL
 * (OAuth redirect URIs, signed storage URLs) before it exists, and the URL needs the port.
 */
export function lateBoundServer() {
  let handler: Handler = () => new Response('not ready', { status: 503 });
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    // Uploads from the composer go through this socket (the disk store's PUT URLs).
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: (request) => handler(request),
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port,
    setHandler(h: Handler) {
      handler = h;
    },
    stop: () => server.stop(true),
  };
}

export interface PageProblem {
  kind: 'console' | 'pageerror' | 'requestfailed' | 'external';
  url: string;
  text: string;
}

/**
 * A browser context for one signed-in person: UTC, en-US, 1280x800, clipboard allowed on the
 * app's origin. Every request that is not for a loopback address is aborted and recorded (the
 * pages must not load anything from the internet), as is every console error, uncaught page
 * exception and failed request.
 */
export async function newRecordedContext(browser: Browser, origin: string) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    timezoneId: 'UTC',
    locale: 'en-US',
    baseURL: origin,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const problems: PageProblem[] = [];
  /** Page path → ids used by more than one element (a label's `for` then points at the wrong field). */
  const duplicateIds = new Map<string, string[]>();
  await context.route(
    (url) =>
      !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && !url.protocol.startsWith('data') && !url.protocol.startsWith('blob'),
    async (route) => {
      problems.push({ kind: 'external', url: route.request().url(), text: `${route.request().method()} to a non-local host` });
      await route.abort('blockedbyclient');
    },
  );
  const watch = (page: Page) => {
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push({ kind: 'console', url: page.url(), text: msg.text() });
    });
    page.on('pageerror', (err) => problems.push({ kind: 'pageerror', url: page.url(), text: err.stack ?? err.message }));
    page.on('requestfailed', (req) => {
      // A navigation that replaces an unfinished poll cancels it; that is not a failure of the page.
      const failure = req.failure()?.errorText ?? '';
      if (failure === 'net::ERR_ABORTED') return;
      problems.push({ kind: 'requestfailed', url: req.url(), text: failure });
    });
    page.on('load', async () => {
      try {
        const url = new URL(page.url());
        const dupes = (await page.evaluate(`(() => {
          const seen = {};
          for (const el of document.querySelectorAll('[id]')) seen[el.id] = (seen[el.id] || 0) + 1;
          return Object.keys(seen).filter((id) => seen[id] > 1);
        })()`)) as string[];
        if (dupes.length) duplicateIds.set(url.pathname, dupes);
      } catch {
        /* the page navigated on before it could be checked */
      }
    });
  };
  context.on('page', watch);
  const page = await context.newPage();
  return { context, page, problems, duplicateIds };
}

/** Chromium with one recorded context (newRecordedContext), signed in to the web app as this person. */
export async function signedInChromium(origin: string, email: string, password: string) {
  const browser = await launchChromium();
  return { browser, ...(await signedInContext(browser, origin, email, password)) };
}

/** One more recorded context of this browser, signed in as this person (several people side by side). */
export async function signedInContext(browser: Browser, origin: string, email: string, password: string) {
  const recorded = await newRecordedContext(browser, origin);
  const { page } = recorded;
  await page.goto('/sign-in');
  await page.getByTestId('sign-in-email').fill(email);
  await page.getByTestId('sign-in-password').fill(password);
  await Promise.all([page.waitForURL(/\/calendar$/), page.getByTestId('sign-in-submit').click()]);
  return recorded;
}

/** Every page visited (by path), for the report of which pages were checked for console errors. */
export function visitedPaths(page: Page): Set<string> {
  const seen = new Set<string>();
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) seen.add(new URL(frame.url()).pathname);
  });
  return seen;
}

// The run writes here (not tracked); docs/screenshots holds the copies the README shows.
export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? join(import.meta.dir, '..', '..', 'test-results', 'screenshots');
export const DOCS_SCREENSHOT_DIR = join(import.meta.dir, '..', '..', 'docs', 'screenshots');
/** UPDATE_SCREENSHOTS=1: the run also replaces the README's copies in docs/screenshots. */
export const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

/** How every screenshot is taken: the whole page, still, without a caret. */
const WHOLE_PAGE = { fullPage: true, type: 'png', animations: 'disabled', caret: 'hide' } as const;

/** A full-page PNG under SCREENSHOT_DIR (overwritten each run). */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path, ...WHOLE_PAGE });
  return path;
}

/**
 * A screenshot the README shows: written under SCREENSHOT_DIR like any other as a 256-colour PNG
 * (the pages are flat colours: a fraction of the bytes, the same picture), and copied to
 * docs/screenshots/<name>.png only when UPDATE_SCREENSHOTS=1, so a normal run leaves the
 * committed images alone. Call it after the step's assertions, so only a checked page is copied.
 */
export async function docsScreenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  const png = await page.screenshot(WHOLE_PAGE);
  await sharp(png).png({ palette: true, colours: 256, compressionLevel: 9, effort: 10 }).toFile(path);
  if (UPDATE_SCREENSHOTS) {
    mkdirSync(DOCS_SCREENSHOT_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_SCREENSHOT_DIR, `${name}.png`));
  }
  return path;
}

export async function closeAll(...things: ({ close: () => Promise<void> } | undefined)[]): Promise<void> {
  for (const t of things) await t?.close().catch(() => {});
}

export type { Browser, BrowserContext, Page };

/** Polls until fn() is truthy (real time), or fails with the message and the last value. */
export async function until<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
    await Bun.sleep(everyMs);
  }
}
