// GET /v1/channels: `{data:[…]}` with each channel's rules (DESIGN.md §4), credentials never shown.
import { describe, expect, test } from 'bun:test';
import { PLATFORMS } from '../platforms/catalog.ts';
import { probeChannel, setChannelStatus } from '../domain/channels.ts';
import { ApiError } from '../lib/errors.ts';
import { createConnectors } from '../platforms/index.ts';
import { startFakeMastodon } from './fakes/mastodon.ts';
import { harness } from './harness/index.ts';
import { call, makeChannel, makeKey, makeOrg, testApp } from './harness/fixtures.ts';

describe('GET /v1/channels', () => {
  test('lists the organization’s channels with rules, oldest first', async () => {
    const org = await makeOrg();
    const other = await makeOrg();
    await makeChannel(other.id, 'X');
    const m = await makeChannel(org.id, 'MASTODON', { maxChars: 11000 });
    const i = await makeChannel(org.id, 'INSTAGRAM');
    const r = await makeChannel(org.id, 'REDDIT');
    const { key } = await makeKey(org.id, { scopes: ['read'] });
    const res = await call(await testApp(), 'GET', '/v1/channels', { key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data).toEqual([
      {
        id: m.id,
        platform: 'MASTODON',
        name: 'MASTODON channel',
        status: 'active',
        rules: { requiresMedia: false, maxChars: 11000, requiredFields: [] },
      },
      {
        id: i.id,
        platform: 'INSTAGRAM',
        name: 'INSTAGRAM channel',
        status: 'active',
        rules: { requiresMedia: true, maxChars: 2200, requiredFields: [] },
      },
      {
        id: r.id,
        platform: 'REDDIT',
        name: 'REDDIT channel',
        status: 'active',
        rules: { requiresMedia: false, maxChars: 40000, requiredFields: ['reddit.subreddit', 'reddit.title'] },
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('tok');
  });

  test('every platform reports the rules of DESIGN.md §4', async () => {
    const org = await makeOrg();
    for (const p of PLATFORMS) await makeChannel(org.id, p);
    const { key } = await makeKey(org.id);
    const res = await call(await testApp(), 'GET', '/v1/channels', { key });
    expect(res.body.data.map((c: { platform: string }) => c.platform)).toEqual([...PLATFORMS]);
    const byPlatform = Object.fromEntries(res.body.data.map((c: { platform: string; rules: unknown }) => [c.platform, c.rules]));
    // The platforms' documented numbers (DESIGN.md §4), written out here rather than read from
    // platforms/catalog.ts, so a wrong number in the catalog fails this test.
    const none: string[] = [];
    expect(byPlatform).toEqual({
      X: { maxChars: 280, requiresMedia: false, requiredFields: none },
      BLUESKY: { maxChars: 300, requiresMedia: false, requiredFields: none },
      THREADS: { maxChars: 500, requiresMedia: false, requiredFields: none },
      LINKEDIN: { maxChars: 3000, requiresMedia: false, requiredFields: none },
      MASTODON: { maxChars: 500, requiresMedia: false, requiredFields: none },
      INSTAGRAM: { maxChars: 2200, requiresMedia: true, requiredFields: none },
      FACEBOOK: { maxChars: 63206, requiresMedia: false, requiredFields: none },
      TIKTOK: { maxChars: 2200, requiresMedia: true, requiredFields: none },
      YOUTUBE: { maxChars: 5000, requiresMedia: true, requiredFields: none },
      PINTEREST: { maxChars: 500, requiresMedia: true, requiredFields: none },
      REDDIT: { maxChars: 40000, requiresMedia: false, requiredFields: ['reddit.subreddit', 'reddit.title'] },
      TELEGRAM: { maxChars: 4096, requiresMedia: false, requiredFields: none },
      DISCORD: { maxChars: 2000, requiresMedia: false, requiredFields: none },
    });
  });

  test('status changes show; an empty organization gets an empty list', async () => {
    const h = await harness();
    const org = await makeOrg();
    const { key } = await makeKey(org.id);
    const app = await testApp();
    expect((await call(app, 'GET', '/v1/channels', { key })).body).toEqual({ data: [] });
    const ch = await makeChannel(org.id);
    await setChannelStatus(h.orm.em.fork(), ch.id, 'reauth_required');
    expect((await call(app, 'GET', '/v1/channels', { key })).body.data[0].status).toBe('reauth_required');
  });
});

// What the channel form and `channel add` run before saving (domain/channels.ts probeChannel).
describe('adding a channel: the address it names (lib/outbound.ts)', () => {
  const probe = (platform: string, credentials: Record<string, unknown>, allowPrivate: boolean, warn?: (m: string) => void) =>
    probeChannel(createConnectors({}, { allowPrivate }), platform, credentials, { allowPrivate }, warn);

  async function refused(p: Promise<unknown>) {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('validation_failed');
    expect((err as ApiError).status).toBe(422);
    return (err as ApiError).details as { fields: { path: string; message: string }[] };
  }

  test('a Mastodon instance on 127.0.0.1 → 422 on credentials.instanceUrl, nothing sent; allowed with OUTBOUND_ALLOW_PRIVATE', async () => {
    const fake = await startFakeMastodon({ maxCharacters: 1000 });
    try {
      const details = await refused(probe('MASTODON', { instanceUrl: fake.url, accessToken: 'good-token' }, false));
      expect(details.fields).toEqual([
        {
          path: 'credentials.instanceUrl',
          message: `${new URL(fake.url).host} is a loopback address; this service does not connect there (a self-hosted service can allow private addresses with OUTBOUND_ALLOW_PRIVATE=true)`,
        },
      ]);
      expect(fake.requests).toHaveLength(0);
      expect(await probe('mastodon', { instanceUrl: fake.url, accessToken: 'good-token' }, true)).toEqual({
        maxChars: 1000,
        charactersReservedPerUrl: 23,
      });
    } finally {
      await fake.stop();
    }
  });

  test('other refused forms: bare host name, metadata address, decimal loopback, IPv4-mapped, a Bluesky service, a non-http scheme', async () => {
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      [
        'MASTODON',
        { instanceUrl: 'localhost:3000', accessToken: 't' },
        'credentials.instanceUrl',
        /resolves to 127\.0\.0\.1, which is a loopback address/,
      ],
      ['MASTODON', { instanceUrl: 'http://169.254.169.254', accessToken: 't' }, 'credentials.instanceUrl', /link-local/],
      [
        'MASTODON',
        { instanceUrl: 'http://2130706433:3000', accessToken: 't' },
        'credentials.instanceUrl',
        /127\.0\.0\.1:3000 is a loopback address/,
      ],
      ['MASTODON', { instanceUrl: 'http://[::ffff:10.0.0.1]', accessToken: 't' }, 'credentials.instanceUrl', /private-network/],
      ['BLUESKY', { service: 'http://192.168.1.10:2583', identifier: 'a', appPassword: 'b' }, 'credentials.service', /private-network/],
      ['BLUESKY', { service: 'ftp://bsky.social', identifier: 'a', appPassword: 'b' }, 'credentials.service', /use an http\(s\) URL/],
    ];
    for (const [platform, credentials, path, message] of cases) {
      const { fields } = await refused(probe(platform, credentials, false));
      expect(fields).toHaveLength(1);
      expect(fields[0]!.path).toBe(path);
      expect(fields[0]!.message).toMatch(message);
    }
    // Cloud metadata stays refused even where private addresses are allowed.
    await refused(probe('BLUESKY', { service: 'http://169.254.169.254', identifier: 'a', appPassword: 'b' }, true));
  });

  test('a name that does not resolve is not refused: the platform default stays, with a warning', async () => {
    const warnings: string[] = [];
    expect(await probe('MASTODON', { instanceUrl: 'https://m.invalid', accessToken: 't' }, false, (m) => warnings.push(m))).toEqual({});
    expect(warnings).toHaveLength(1);
    expect(await probe('BLUESKY', { service: 'https://pds.invalid', identifier: 'a', appPassword: 'b' }, false)).toEqual({});
  });
});
