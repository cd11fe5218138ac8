// Small builders for tests: organizations, keys, channels, and requests through app.handle().
import { createApp, type ServerDeps } from '../../server/app.ts';
import { createApiKey } from '../../services/api-keys.ts';
import { addChannel } from '../../domain/channels.ts';
import { createOrganization } from '../../domain/organizations.ts';
import { harness } from './index.ts';
import sharp from 'sharp';
import { MediaItem } from '../../db/entities/index.ts';
import type { ObjectStorage } from '../../storage/types.ts';
import { newId } from '../../lib/ids.ts';
import { metricsOf } from '../../domain/analytics/metrics.ts';
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
    postPages: h.postPages,
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

/**
 * A Mastodon channel post published at `at`, with its readings ([measuredAt, figures], steps in
 * order), written straight to the tables: for the analytics read paths.
 */
export async function publishedPostWithReadings(
  organizationId: string,
  channelId: string,
  at: Date | string,
  readings: [Date | string, Record<string, number>][],
): Promise<string> {
  const h = await harness();
  const q = (text: string, values: unknown[]) => h.pool.query(text, values);
  const postId = newId('post');
  const pcId = newId('pc');
  await q(
    `insert into posts (id, organization_id, status, content, source, scheduled_at, published_at, created_at, updated_at)
     values ($1, $2, 'published', $3, 'api', $4, $4, now(), now())`,
    [postId, organizationId, `Launch post ${postId.slice(-4)}`, at],
  );
  await q(
    `insert into post_channels (id, post_id, channel_id, platform, status, content, platform_post_id, url, published_at, metrics_step, created_at, updated_at)
     values ($1, $2, $3, 'MASTODON', 'published', 'x', $4, $5, $6, $7, now(), now())`,
    [pcId, postId, channelId, `s${pcId}`, `https://mastodon.example/@u/${pcId}`, at, readings.length],
  );
  for (const [i, [measuredAt, figures]] of readings.entries()) {
    await q('insert into post_metrics (id, post_channel_id, step, measured_at, metrics) values ($1, $2, $3, $4, $5)', [
      newId('pm'),
      pcId,
      i,
      measuredAt,
      JSON.stringify(metricsOf(figures)),
    ]);
  }
  return postId;
}

/** A media row as processing leaves it, a small PNG's bytes in `storage` (the upload path is media.test.ts's). */
export async function readyMedia(
  storage: ObjectStorage,
  organizationId: string,
  opts: { type?: 'image' | 'document'; status?: 'ready' | 'pending'; description?: string; background?: string } = {},
) {
  const h = await harness();
  const id = newId('med');
  const key = `${organizationId}/${id}/final`;
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: opts.background ?? '#3366ff' } })
    .png()
    .toBuffer();
  await storage.put(key, png, 'image/png');
  const em = h.orm.em.fork();
  em.create(MediaItem, {
    id,
    organization: organizationId,
    type: opts.type ?? 'image',
    status: opts.status ?? 'ready',
    fileName: 'square.png',
    mimeType: opts.type === 'document' ? 'application/pdf' : 'image/png',
    sizeBytes: png.length,
    storageKey: key,
    uploadKey: key,
    apiKeyId: null,
    altText: 'a square',
    description: opts.description ?? null,
    uploadExpiresAt: new Date(Date.now() + 60_000),
  });
  await em.flush();
  return id;
}

/**
 * An organization's Mastodon channel on the fake instance at `instanceUrl`, a key whose posts need
 * approval (`author`), and an approver's key: what the approval tests start from.
 */
export async function approvalSetUp(organizationId: string, instanceUrl: string) {
  const h = await harness();
  const em = h.orm.em.fork();
  const channel = await addChannel(em, h.credentialsKey, {
    organizationId,
    platform: 'MASTODON',
    name: 'mastodon',
    credentials: { instanceUrl, accessToken: 'good-token' },
  });
  const author = await createApiKey(em, {
    organizationId,
    name: 'author',
    scopes: ['read', 'publish'],
    channels: 'all',
    requiresApproval: true,
  });
  const approver = (await makeKey(organizationId, { scopes: ['read', 'approve'], name: 'approver' })).key;
  return { channel, author, approver };
}
