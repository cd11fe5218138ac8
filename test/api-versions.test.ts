// Each platform's API version in one place (platforms/api-versions.ts): the settings override the
// defaults the connectors send, and a version the platform no longer serves (LinkedIn's 426
// NONEXISTENT_VERSION, Graph's error 2635) is the channel's `api_version_retired`, with a message
// that names the setting to change.
import { describe, expect, test } from 'bun:test';
import { API_VERSION_RETIRED, API_VERSIONS, apiVersionOf } from '../platforms/api-versions.ts';
import { PLATFORMS } from '../platforms/catalog.ts';
import { classifyPlatformError } from '../platforms/failure-class.ts';
import { createConnectors } from '../platforms/index.ts';
import { createLinkedInConnector } from '../platforms/linkedin.ts';
import { createFacebookConnector } from '../platforms/meta/facebook.ts';
import { createInstagramConnector } from '../platforms/meta/instagram.ts';
import type { PublishRequest } from '../platforms/types.ts';
import { CHANNEL_ERROR_CODES, RETRYABLE } from '../workflows/publish-failure-types.ts';
import { startFakeLinkedIn } from './fakes/linkedin.ts';
import { startFakeMeta } from './fakes/meta.ts';
import { perTest } from './harness/per-test.ts';
import { failure } from './harness/platform-failure.ts';

const linkedIn = perTest((versions?: string[]) => startFakeLinkedIn({ versions }));
const meta = perTest((flavor: 'facebook' | 'instagram', retiredVersions?: string[]) => startFakeMeta(flavor, { retiredVersions }));

const post = (credentials: Record<string, unknown>): PublishRequest => ({
  text: 'Hello',
  media: [],
  idempotencyKey: 'post-1:channel-1',
  credentials,
});

describe('the version table', () => {
  test('every platform is listed; a setting is named only where the version is a value the connector sends', () => {
    expect(Object.keys(API_VERSIONS).sort()).toEqual([...PLATFORMS].sort());
    const settings = Object.entries(API_VERSIONS).flatMap(([p, v]) => (v?.setting ? [[p, v.setting]] : []));
    expect(settings).toEqual([
      ['LINKEDIN', 'LINKEDIN_API_VERSION'],
      ['FACEBOOK', 'META_GRAPH_API_VERSION'],
      ['INSTAGRAM', 'META_GRAPH_API_VERSION'],
    ]);
    for (const v of Object.values(API_VERSIONS)) if (v) expect(v.docs).toMatch(/^https:\/\//);
  });

  test('a setting overrides the default; an empty or absent one does not', () => {
    expect(apiVersionOf('LINKEDIN')).toBe(API_VERSIONS.LINKEDIN.version);
    expect(apiVersionOf('LINKEDIN', { LINKEDIN_API_VERSION: '202601' })).toBe('202601');
    expect(apiVersionOf('INSTAGRAM', { META_GRAPH_API_VERSION: 'v25.0' })).toBe('v25.0');
    expect(apiVersionOf('FACEBOOK', { LINKEDIN_API_VERSION: '202601' })).toBe(API_VERSIONS.FACEBOOK.version);
    expect(apiVersionOf('YOUTUBE', { META_GRAPH_API_VERSION: 'v25.0' })).toBe('v3');
  });

  test('api_version_retired is a channel error code a retry may fix once the setting changes', () => {
    expect(CHANNEL_ERROR_CODES).toContain(API_VERSION_RETIRED);
    expect(RETRYABLE.api_version_retired).toBe(true);
  });
});

describe('LinkedIn-Version', () => {
  test('the connectors send the default, and LINKEDIN_API_VERSION when set', async () => {
    const f = await linkedIn(['202609', '202601']);
    const credentials = { accessToken: 'good-token', authorUrn: f.member };
    await createConnectors({ LINKEDIN_API_URL: f.url, LINKEDIN_AUTH_URL: f.url }).LINKEDIN!.publish(post(credentials));
    await createConnectors({ LINKEDIN_API_URL: f.url, LINKEDIN_AUTH_URL: f.url, LINKEDIN_API_VERSION: '202601' }).LINKEDIN!.publish({
      ...post(credentials),
      text: 'Hello again',
    });
    expect(f.posts).toHaveLength(2);
  });

  test('426 NONEXISTENT_VERSION: permanent, api_version_retired, the message names LINKEDIN_API_VERSION', async () => {
    const f = await linkedIn();
    const c = createLinkedInConnector({ baseUrl: f.url, authBaseUrl: f.url, apiVersion: '202301', timeoutMs: 2_000 });
    const err = await failure(c.publish(post({ accessToken: 'good-token', authorUrn: f.member })));
    expect(err.kind).toBe('permanent');
    expect(err.opts).toMatchObject({ status: 426, platformCode: API_VERSION_RETIRED });
    expect(err.message).toBe(
      'LinkedIn no longer serves API version 202301: set LINKEDIN_API_VERSION to a current one (LinkedIn 426: Requested version 202301 is not active)',
    );
    expect(classifyPlatformError('LINKEDIN', err)).toEqual({ errorCode: 'api_version_retired', retryable: true });
    expect(f.posts).toHaveLength(0);
  });

  test('LinkedIn’s documented 426 body, from any versioned call', async () => {
    const body = { status: 426, code: 'NONEXISTENT_VERSION', message: 'Requested version 20230101 is not active' };
    const fetch = (async () => Response.json(body, { status: 426 })) as unknown as typeof globalThis.fetch;
    const c = createLinkedInConnector({ fetch, apiVersion: '20230101' });
    const err = await failure(c.readMetrics!({ accessToken: 't', authorUrn: 'urn:li:organization:1' }, ['urn:li:share:1']));
    expect(err.message).toStartWith('LinkedIn no longer serves API version 20230101: set LINKEDIN_API_VERSION to a current one');
    expect(classifyPlatformError('LINKEDIN', err).errorCode).toBe('api_version_retired');
  });
});

describe('Graph version', () => {
  test('Facebook: the version in the path is the default, and META_GRAPH_API_VERSION when set', async () => {
    const f = await meta('facebook');
    const credentials = { accessToken: 'EAAG-page-token', pageId: f.accountId };
    await createConnectors({ FACEBOOK_GRAPH_URL: f.url }).FACEBOOK!.publish(post(credentials));
    await createConnectors({ FACEBOOK_GRAPH_URL: f.url, META_GRAPH_API_VERSION: 'v25.0' }).FACEBOOK!.publish({
      ...post(credentials),
      text: 'Hello again',
    });
    expect(f.requests.map((r) => r.version)).toEqual([API_VERSIONS.FACEBOOK.version, 'v25.0']);
  });

  test('error 2635 on Facebook: permanent, api_version_retired, the message names META_GRAPH_API_VERSION', async () => {
    const f = await meta('facebook', ['v19.0']);
    const c = createFacebookConnector({ baseUrl: f.url, apiVersion: 'v19.0', timeoutMs: 2_000 });
    const err = await failure(c.publish(post({ accessToken: 'EAAG-page-token', pageId: f.accountId })));
    expect(err.kind).toBe('permanent');
    expect(err.opts).toMatchObject({ status: 400, platformCode: API_VERSION_RETIRED });
    expect(err.message).toStartWith(
      'Facebook no longer serves API version v19.0: set META_GRAPH_API_VERSION to a current one (Facebook 400: (#2635)',
    );
    expect(classifyPlatformError('FACEBOOK', err)).toEqual({ errorCode: 'api_version_retired', retryable: true });
    expect(f.posts).toHaveLength(0);
  });

  test('error 2635 on Instagram, from Graph’s documented body', async () => {
    const f = await meta('instagram', ['v19.0']);
    const c = createInstagramConnector({
      baseUrl: f.url,
      apiVersion: 'v19.0',
      timeoutMs: 2_000,
      mediaUrl: async () => 'https://example.com/a.png',
    });
    const err = await failure(c.readMetrics!({ accessToken: 'IGAA-user-token', igUserId: f.accountId }, ['1']));
    expect(err.message).toStartWith('Instagram no longer serves API version v19.0: set META_GRAPH_API_VERSION to a current one');
    expect(classifyPlatformError('INSTAGRAM', err).errorCode).toBe('api_version_retired');
  });
});

describe('docs/platforms.md', () => {
  test('its "API versions" table states the versions and settings of platforms/api-versions.ts', async () => {
    const doc = await Bun.file(new URL('../docs/platforms.md', import.meta.url)).text();
    const section = doc.split('\n### API versions\n')[1]!.split('\n### ')[0]!;
    const rows = new Map(
      section
        .split('\n')
        .filter((l) => /^\| [A-Z][\w, ]* \| `/.test(l))
        .map((l) => l.split('|').map((c) => c.trim()))
        .map((c) => [c[1]!, { version: /`([^`]+)`/.exec(c[2]!)?.[1], setting: c[3]!.replace(/`/g, '') }]),
    );
    const row = (name: string) => rows.get(name);
    expect(row('LinkedIn')).toEqual({ version: API_VERSIONS.LINKEDIN.version, setting: 'LINKEDIN_API_VERSION' });
    expect(row('Facebook, Instagram')).toEqual({ version: API_VERSIONS.FACEBOOK.version, setting: 'META_GRAPH_API_VERSION' });
    expect(row('Threads')).toEqual({ version: API_VERSIONS.THREADS.version, setting: 'fixed' });
    expect(row('YouTube')).toEqual({ version: API_VERSIONS.YOUTUBE.version, setting: 'fixed' });
    expect(row('X')).toEqual({ version: API_VERSIONS.X.version, setting: 'fixed' });
    expect(row('TikTok')).toEqual({ version: API_VERSIONS.TIKTOK.version, setting: 'fixed' });
    expect(row('Pinterest')).toEqual({ version: API_VERSIONS.PINTEREST.version, setting: 'fixed' });
  });
});
