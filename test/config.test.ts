import { describe, expect, test } from 'bun:test';
import { ConfigError, EnvSchema, loadConfig, PLATFORM_SETTINGS } from '../lib/config.ts';
import { ffmpegPath, ffprobePath, useMediaBinaries } from '../media/exec.ts';
import { defaultWebOptions, webOptions } from '../web/options.ts';
import { decryptJson, encryptJson, generateApiKey, hashApiKey, hashesEqual, KEY_PATTERN } from '../lib/crypto.ts';
import { monthPeriod } from '../lib/plans.ts';

describe('config', () => {
  test('defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.temporal).toMatchObject({ address: 'localhost:7233', namespace: 'default', taskQueue: 'postpilot', tls: false, uiPort: 8233 });
    expect(c.dataDir).toBe('.data');
    expect(c.databaseUrl).toBeUndefined();
  });

  test('fails fast on missing required and invalid values, naming them', () => {
    expect(() => loadConfig({}, ['DATABASE_URL'])).toThrow(/DATABASE_URL: required/);
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ CREDENTIALS_KEY: 'tooshort' })).toThrow(/32 bytes/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  test('TEMPORAL_API_KEY implies TLS; credentials key accepts hex and base64', () => {
    expect(loadConfig({ TEMPORAL_API_KEY: 'k' }).temporal.tls).toBe(true);
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ CREDENTIALS_KEY: hex }).credentialsKey?.toString('hex')).toBe(hex);
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ CREDENTIALS_KEY: b64 }).credentialsKey?.equals(Buffer.alloc(32, 7))).toBe(true);
  });
});

describe('one source for every setting', () => {
  /** Runs `fn` with these variables in the process environment, then puts it back. */
  async function withEnv<T>(vars: Record<string, string>, fn: () => T | Promise<T>): Promise<T> {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    Object.assign(process.env, vars);
    try {
      return await fn();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  test('platform settings: validated like the rest and passed through, from one table', () => {
    const c = loadConfig({
      X_CLIENT_ID: 'x-app',
      THREADS_TOKEN_URL: 'http://127.0.0.1:9/token',
      LINKEDIN_API_VERSION: '202601',
      NOT_A_SETTING: 'ignored',
    });
    expect(c.platforms).toEqual({ X_CLIENT_ID: 'x-app', THREADS_TOKEN_URL: 'http://127.0.0.1:9/token', LINKEDIN_API_VERSION: '202601' });
    expect(() => loadConfig({ TIKTOK_TOKEN_URL: 'ftp://tiktok.example/token' })).toThrow(/TIKTOK_TOKEN_URL/);
    expect(() => loadConfig({ REDDIT_CLIENT_ID: '' })).not.toThrow(); // empty = unset, as everywhere
    expect(PLATFORM_SETTINGS).toHaveLength(54);
    for (const name of PLATFORM_SETTINGS) expect(Object.keys(EnvSchema.properties)).toContain(name);
  });

  test('FFMPEG_PATH / FFPROBE_PATH: read by the configuration, used by media/exec.ts once the worker hands them over', async () => {
    const installed = { ffmpeg: await ffmpegPath(), ffprobe: await ffprobePath() };
    const config = loadConfig({ FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg', FFPROBE_PATH: '/opt/ffmpeg/bin/ffprobe' });
    expect(config.media).toEqual({ ffmpegPath: '/opt/ffmpeg/bin/ffmpeg', ffprobePath: '/opt/ffmpeg/bin/ffprobe' });
    expect(loadConfig({}).media).toEqual({ ffmpegPath: undefined, ffprobePath: undefined });
    // The environment itself is not read a second time…
    await withEnv({ FFMPEG_PATH: '/from/the/environment', FFPROBE_PATH: '/from/the/environment' }, async () => {
      expect(await ffmpegPath()).toBe(installed.ffmpeg);
      expect(await ffprobePath()).toBe(installed.ffprobe);
    });
    // …the configuration is (worker/run.ts: useMediaBinaries(config.media)).
    try {
      useMediaBinaries(config.media);
      expect(await ffmpegPath()).toBe('/opt/ffmpeg/bin/ffmpeg');
      expect(await ffprobePath()).toBe('/opt/ffmpeg/bin/ffprobe');
    } finally {
      useMediaBinaries(loadConfig({}).media);
    }
    expect(await ffmpegPath()).toBe(installed.ffmpeg);
  });

  test('the web app: its settings are made from the loaded configuration; without them, the defaults, not the environment', async () => {
    const key = 'cd'.repeat(32);
    const config = loadConfig({
      PUBLIC_BASE_URL: 'https://posts.example/',
      TRUST_PROXY: '2',
      CREDENTIALS_KEY: key,
      X_CLIENT_ID: 'x-app',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    expect(webOptions(config)).toEqual({
      publicBaseUrl: 'https://posts.example',
      credentialsKey: Buffer.from(key, 'hex'),
      platforms: { X_CLIENT_ID: 'x-app' },
      outbound: { allowPrivate: true },
      trustProxyHops: 2,
    });
    await withEnv({ PUBLIC_BASE_URL: 'https://from-the-environment.example', CREDENTIALS_KEY: key, X_CLIENT_ID: 'env-app' }, () => {
      expect(defaultWebOptions()).toEqual({
        publicBaseUrl: 'http://localhost:3000',
        credentialsKey: undefined,
        platforms: {},
        outbound: { allowPrivate: false },
        trustProxyHops: 0,
      });
    });
  });
});

describe('keys and credentials', () => {
  test('generated keys: sk_live_ + 40 base62, 12-character prefix, SHA-256 hash', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const k = generateApiKey();
      expect(k.key).toMatch(KEY_PATTERN);
      expect(k.key).toHaveLength(48);
      expect(k.prefix).toBe(k.key.slice(0, 12));
      expect(k.hash).toBe(hashApiKey(k.key));
      seen.add(k.key);
    }
    expect(seen.size).toBe(200);
  });

  test('hash comparison', () => {
    const a = hashApiKey('sk_live_a');
    expect(hashesEqual(a, hashApiKey('sk_live_a'))).toBe(true);
    expect(hashesEqual(a, hashApiKey('sk_live_b'))).toBe(false);
    expect(hashesEqual(a, 'abcd')).toBe(false);
    expect(hashesEqual(a, `${a.slice(0, -1)}${a.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(hashesEqual(a, `${a.startsWith('0') ? '1' : '0'}${a.slice(1)}`)).toBe(false);
  });

  test('a key is stored as its SHA-256 in hex, so the hashes of keys made earlier still match', () => {
    // The FIPS 180-2 test vector.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test('credentials round-trip through AES-256-GCM and tampering is detected', () => {
    const key = Buffer.alloc(32, 1);
    const stored = encryptJson(key, { accessToken: 'secret-token' });
    expect(stored).not.toContain('secret-token');
    expect(decryptJson(key, stored)).toEqual({ accessToken: 'secret-token' });
    expect(() => decryptJson(Buffer.alloc(32, 2), stored)).toThrow();
    const parts = stored.split(':');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => decryptJson(key, parts.join(':'))).toThrow();
  });

  test('quota periods are UTC calendar months', () => {
    expect(monthPeriod(new Date('2026-12-31T23:59:59.999Z'))).toEqual({ period: '2026-12', resetsAt: new Date('2027-01-01T00:00:00Z') });
    expect(monthPeriod(new Date('2027-01-01T00:00:00Z')).period).toBe('2027-01');
  });
});
