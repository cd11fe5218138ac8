// Standard Webhooks (standardwebhooks.com) secrets and signatures: `whsec_` + base64 of random
// bytes; `webhook-signature` = space-separated `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`
// keyed by the base64-decoded part after the prefix, one per secret in use (a rotation signs with both).
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** 32 random bytes (the specification asks for 24 to 64). */
const SECRET_BYTES = 32;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;
}

/** The `webhook-signature` header: one signature per secret. */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => signWebhook(s, id, timestampSeconds, body)).join(' ');
}
