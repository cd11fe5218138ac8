// GET /v1/channels: `{data:[…]}` with each channel's rules (DESIGN.md §4), credentials never shown.
import { describe, expect, test } from 'bun:test';
import { PLATFORMS, PLATFORM_INFO } from '../platforms/catalog.ts';
import { setChannelStatus } from '../services/channels.ts';
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
      { id: m.id, platform: 'MASTODON', name: 'MASTODON channel', status: 'active', rules: { requiresMedia: false, maxChars: 11000, requiredFields: [] } },
      { id: i.id, platform: 'INSTAGRAM', name: 'INSTAGRAM channel', status: 'active', rules: { requiresMedia: true, maxChars: 2200, requiredFields: [] } },
      {
        id: r.id, platform: 'REDDIT', name: 'REDDIT channel', status: 'active',
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
    expect(byPlatform.X.maxChars).toBe(280);
    expect(byPlatform.BLUESKY.maxChars).toBe(300);
    expect(byPlatform.MASTODON.maxChars).toBe(500);
    expect(byPlatform.FACEBOOK.maxChars).toBe(63206);
    expect(byPlatform.TELEGRAM.maxChars).toBe(4096);
    expect(byPlatform.DISCORD.maxChars).toBe(2000);
    for (const p of ['INSTAGRAM', 'TIKTOK', 'YOUTUBE', 'PINTEREST']) expect(byPlatform[p].requiresMedia).toBe(true);
    for (const p of PLATFORMS) expect(byPlatform[p]).toEqual(PLATFORM_INFO[p].rules);
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
