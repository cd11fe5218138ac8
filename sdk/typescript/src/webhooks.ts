// Webhook deliveries verified as Standard Webhooks (https://www.standardwebhooks.com) sign them:
// `webhook-id`, `webhook-timestamp` and `webhook-signature` over the raw body, with the
// endpoint's secret (`whsec_…`), a timestamp more than five minutes off refused. Built on the
// `standardwebhooks` package.
import { Webhook } from 'standardwebhooks';

/** A delivery's event, as the API sends it: its type (`post.published`, …), when, and its data. */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** Headers as a Fetch `Headers`, a Node `IncomingHttpHeaders` or a plain record. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function plain(headers: HeaderSource): Record<string, string> {
  if (typeof (headers as Headers).get === 'function') {
    const h = headers as Headers;
    return Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [n, h.get(n) ?? '']));
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * The event of a delivery whose signature is the endpoint's: `body` exactly as received (the raw
 * text, not parsed and serialized again). Throws when the signature, the timestamp or the
 * headers are not right.
 */
export function verifyWebhook(body: string, headers: HeaderSource, secret: string): WebhookEvent {
  return new Webhook(secret).verify(body, plain(headers)) as WebhookEvent;
}
