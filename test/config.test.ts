import { describe, expect, test } from 'bun:test';
import { ConfigError, loadConfig } from '../lib/config.ts';
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
