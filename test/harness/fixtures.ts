// Small builders for tests: organizations, keys, channels, and requests through app.handle().
import { createApp, type ServerDeps } from '../../server/app.ts';
import { createApiKey } from '../../services/api-keys.ts';
import { addChannel } from '../../domain/channels.ts';
import { createOrganization } from '../../domain/organizations.ts';
import { harness } from './index.ts';
import { PLATFORM_INFO, type Platform } from '../../platforms/catalog.ts';

export async function makeOrg(plan = 'PRO', name = 'Test org') {
  const h = await harness();
  return createOrganization(h.orm.em.fork(), { name, plan });
}

export async function makeKey(
  organizationId: string,
  opts: { scopes?: string[]; channels?: 'all' | string[]; expiresAt?: Date | null; name?: string } = {},
) {
  const h = await harness();
  return createApiKey(h.orm.em.fork(), {
    organizationId,
    name: opts.name ?? 'test key',
    scopes: opts.scopes ?? ['read', 'generate', 'publish'],
    channels: opts.channels ?? 'all',
    expiresAt: opts.expiresAt ?? null,
  });
}

export async function makeChannel(organizationId: string, platform = 'MASTODON', extra: { name?: string; maxChars?: number } = {}) {
  const h = await harness();
  // Every credential key the platform requires, with a placeholder value ('tok' for tokens).
  const credentials = Object.fromEntries(
    PLATFORM_INFO[platform as Platform].credentials.map((k) => [k, k === 'instanceUrl' ? 'https://mastodon.example' : 'tok']),
  );
  return addChannel(h.orm.em.fork(), h.credentialsKey, {
    organizationId,
    platform,
    name: extra.name ?? `${platform} channel`,
    credentials,
    maxChars: extra.maxChars,
  });
}

export async function testApp(overrides: Partial<ServerDeps> = {}) {
  const h = await harness();
  return createApp({
    orm: h.orm,
    log: () => {},
    rateLimiter: h.rateLimiter,
    webhooks: { credentialsKey: h.credentialsKey, outbound: { allowPrivate: true } },
    ...overrides,
  });
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  app: { handle: (r: Request) => Promise<Response> },
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* keep text */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
