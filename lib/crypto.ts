// API key material and credential encryption.
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from 'node:crypto';

export const KEY_PREFIX = 'sk_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Length of the random part: 40 base62 characters is ~238 bits. */
const KEY_RANDOM_LENGTH = 40;
/** `key.prefix` shown to users: the first 12 characters of the full key. */
export const KEY_DISPLAY_PREFIX_LENGTH = 12;
export const KEY_PATTERN = /^sk_live_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  let random = '';
  for (let i = 0; i < KEY_RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  const key = KEY_PREFIX + random;
  return { key, prefix: key.slice(0, KEY_DISPLAY_PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** Keys carry ~238 bits of entropy, so a plain SHA-256 is a sufficient one-way hash (no KDF needed). */
export function hashApiKey(key: string): string {
  // Bun's one-shot hash: every authenticated request makes one, at a quarter of createHash's cost.
  return Bun.SHA256.hash(key, 'hex') as string;
}

/** Comparison of two hex digests in time independent of where they differ (no early exit). */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** AES-256-GCM; the stored form is `v1:<iv>:<tag>:<ciphertext>` in base64. */
export function encryptJson(key: Buffer, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
}

export function decryptJson<T = unknown>(key: Buffer, stored: string): T {
  const [version, iv, tag, body] = stored.split(':');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unrecognised credential format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]);
  return JSON.parse(plain.toString('utf8')) as T;
}
