// Discord connector: executes the channel's incoming webhook (credentials.webhookUrl,
// https://discord.com/api/webhooks/<id>/<token>[?thread_id=…]) with ?wait=true, which answers with
// the created message.
//
// Never posting twice: message create's `nonce` + `enforce_nonce` dedupe works for bot tokens only;
// Execute Webhook documents no nonce, and a webhook token can read a message only by its id
// (GET /webhooks/<id>/<token>/messages/<message id>), which a lost answer never gave us. So:
// - a request that may have reached Discord but got no answer (timeout, reset, abort) fails
//   permanently with platformCode 'outcome_unknown' instead of being re-sent blindly; a request
//   that never left (connection refused, DNS) stays transient;
// - findPublished returns a message this process created for the same idempotency key (e.g. when
//   recording it failed afterwards); a worker restart forgets it. The durable record of an
//   accepted message is the publish activity's heartbeat details (activities/posts.ts): a retry
//   on any worker after a failed recording does not call the connector at all.
//
// Request bodies, query parameters and the answers' fields are typed by discord-api-types (API
// v10), imported as types only: the package is not needed at run time, and a field Discord does
// not have is a compile error here.
import type {
  APIMessage,
  RESTAPIAttachment,
  RESTError,
  RESTErrorData,
  RESTErrorFieldInformation,
  RESTGetAPIWebhookWithTokenResult,
  RESTJSONErrorCodes,
  RESTPostAPIWebhookWithTokenJSONBody,
  RESTPostAPIWebhookWithTokenQuery,
  RESTRateLimit,
} from 'discord-api-types/v10';
import { blobOf, connectTracking, createHttp, credential, isOk, reasonOf, trimSlash, type Reply, type SendOptions } from './http.ts';
import type { DiscordOptions } from './options.ts';
import { PlatformError, parseRetryAfter, type Connector, type MediaRef, type PublishRequest, type PublishResult } from './types.ts';

export interface DiscordConnectorOptions {
  fetch?: typeof fetch;
  /** Limit for each HTTP request; all files go in the one execute request. */
  timeoutMs?: number;
  /**
   * The REST API the webhook is executed against (default https://discord.com/api/v10). Only the
   * webhook id and token are taken from credentials.webhookUrl, so a stored URL can never send
   * the worker elsewhere; a webhookUrl on this base's host is accepted too (tests, proxies).
   */
  baseUrl?: string;
}

const API = 'https://discord.com/api/v10';
const WEB = 'https://discord.com';
const DISCORD_HOSTS = new Set([
  'discord.com',
  'discordapp.com',
  'ptb.discord.com',
  'canary.discord.com',
  'ptb.discordapp.com',
  'canary.discordapp.com',
]);
const DESCRIPTION_LIMIT = 1024;
const REMEMBERED = 1000;
// Discord asks API clients to identify themselves as `DiscordBot ($url, $version)`.
const USER_AGENT = 'DiscordBot (postpilot, 0.1.0)';

interface Webhook {
  id: string;
  token: string;
  threadId: string | null;
}

/** Discord's error body (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json) or a 429's (rate-limits). */
type ApiError = Partial<RESTError & RESTRateLimit>;

/** The error code read below, checked against the package's RESTJSONErrorCodes. */
const API_OVERLOADED = 130000 satisfies RESTJSONErrorCodes.APIResourceOverloaded;

export function createDiscordConnector(opts: DiscordConnectorOptions = {}): Connector {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const base = trimSlash(opts.baseUrl ?? API);
  const baseOrigin = new URL(base).origin;
  const guilds = new Map<string, string>(); // webhook id → guild id; a webhook never changes guild
  const published = new Map<string, PublishResult>();

  /**
   * One exchange. Errors never carry the URL (it holds the webhook token). A failure after the
   * request may have left is permanent 'outcome_unknown' when `creates` (see the top of the file).
   */
  async function exchange(hook: Webhook, url: string, o: SendOptions, creates: boolean): Promise<Reply> {
    const what = `${o.method ?? 'GET'} webhook`;
    if (o.signal?.aborted) throw new PlatformError('transient', `Discord ${what} aborted before sending`);
    const tracked = connectTracking(doFetch);
    const http = createHttp('Discord', { fetch: tracked.fetch, timeoutMs });
    try {
      return await http.send(url, { ...o, headers: { 'User-Agent': USER_AGENT, ...o.headers } });
    } catch (err) {
      if (!(err instanceof PlatformError)) throw err;
      const reason = err.message.replaceAll(hook.token, '<token>').replace(/^Discord [A-Z]+ \S+ /, '');
      if (tracked.unreached() || !creates) throw new PlatformError('transient', `Discord ${what} ${reason}`, err.opts);
      throw new PlatformError(
        'permanent',
        `Discord ${what} ${reason}; the message may have been posted, so it is not sent again automatically — check the channel`,
        { platformCode: 'outcome_unknown' },
      );
    }
  }

  /** The guild of the webhook's channel (for the message link); also proves the webhook still exists. */
  async function guildOf(hook: Webhook, signal?: AbortSignal): Promise<string> {
    const known = guilds.get(hook.id);
    if (known) return known;
    const r = await exchange(hook, `${base}/webhooks/${hook.id}/${hook.token}`, { signal }, false);
    if (!isOk(r)) throw discordError(r);
    const guildId: unknown = (r.body as Partial<RESTGetAPIWebhookWithTokenResult> | null)?.guild_id;
    if (typeof guildId !== 'string' || !guildId) {
      throw new PlatformError(
        'permanent',
        'Discord webhook belongs to no server channel (not an incoming webhook); reconnect the channel with a channel webhook',
      );
    }
    guilds.set(hook.id, guildId);
    return guildId;
  }

  return {
    platform: 'DISCORD',

    async publish(req: PublishRequest): Promise<PublishResult> {
      const hook = parseWebhook(credential('Discord', req.credentials, 'webhookUrl'), baseOrigin);
      const guildId = await guildOf(hook, req.signal);
      const query: RESTPostAPIWebhookWithTokenQuery = { wait: true, thread_id: hook.threadId ?? undefined };
      const url = `${base}/webhooks/${hook.id}/${hook.token}?${queryString(query)}`;
      const body = await executeBody(req.text, req.media, (req.options as DiscordOptions | undefined)?.username);
      const r = await exchange(hook, url, { method: 'POST', ...body, signal: req.signal }, true);
      if (!isOk(r)) throw discordError(r);
      // Typed by the answer Discord documents (wait=true: the message); checked, since a proxy may answer anything.
      const msg = r.body as Partial<APIMessage> | null;
      if (typeof msg?.id !== 'string' || typeof msg.channel_id !== 'string') {
        throw new PlatformError('permanent', `Discord answered ${r.status} without a message: ${r.text.slice(0, 200)}`, {
          status: r.status,
          platformCode: 'outcome_unknown',
        });
      }
      const result: PublishResult = {
        platformPostId: msg.id,
        url: `${WEB}/channels/${guildId}/${msg.channel_id}/${msg.id}`,
        publishedAt: typeof msg.timestamp === 'string' ? msg.timestamp : undefined,
      };
      published.set(req.idempotencyKey, result);
      if (published.size > REMEMBERED) published.delete(published.keys().next().value!);
      return result;
    },

    async findPublished(req: PublishRequest): Promise<PublishResult | null> {
      return published.get(req.idempotencyKey) ?? null;
    },
  };
}

/**
 * JSON for text only; multipart with payload_json and files[n] when there are attachments.
 * `username` overrides the webhook's name for this message; it goes as given, since Discord's
 * refusal of a name it does not allow names the rule.
 */
async function executeBody(text: string, media: MediaRef[], username?: string): Promise<SendOptions> {
  // One object literal of the package's type, so an unknown or misspelt field fails to compile;
  // an undefined field is left out of the JSON.
  const payload: RESTPostAPIWebhookWithTokenJSONBody = {
    // Posted text is the customer's, not a ping: no @everyone, @here, role or user mentions.
    allowed_mentions: { parse: [] },
    content: text || undefined,
    username: username || undefined,
    attachments: media.length ? media.map(attachmentOf) : undefined,
  };
  if (!media.length) return { json: payload };
  const form = new FormData();
  form.append('payload_json', JSON.stringify(payload));
  for (const [i, m] of media.entries()) {
    const bytes = await m.read();
    form.append(`files[${i}]`, blobOf(bytes, m.mimeType), m.fileName);
  }
  return { multipart: form };
}

/** The metadata of the upload `files[i]` (its id is the n of files[n]). */
function attachmentOf(m: MediaRef, i: number): RESTAPIAttachment {
  return { id: i, filename: m.fileName, description: m.altText ? m.altText.slice(0, DESCRIPTION_LIMIT) : undefined };
}

/** Query parameters as Discord reads them: booleans as true/false; an undefined one is left out. */
function queryString(q: RESTPostAPIWebhookWithTokenQuery): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) out.set(k, String(v));
  return out.toString();
}

function parseWebhook(raw: string, baseOrigin: string): Webhook {
  let u: URL | null = null;
  try {
    u = new URL(raw.trim());
  } catch {
    // reported below
  }
  const m = u && /^(?:\/api(?:\/v\d+)?)?\/webhooks\/(\d+)\/([\w-]+)\/?$/.exec(u.pathname);
  const hostOk = u && (DISCORD_HOSTS.has(u.hostname) ? u.protocol === 'https:' : u.origin === baseOrigin);
  if (!u || !m || !hostOk) {
    throw new PlatformError(
      'reauth',
      'Discord webhookUrl is not a Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>); reconnect the channel',
    );
  }
  return { id: m[1]!, token: m[2]!, threadId: u.searchParams.get('thread_id') };
}

/**
 * 401 (50027 invalid webhook token), 403 and 404 (10015 unknown webhook: it was deleted, and
 * Discord asks clients to stop using a webhook that answers 404) need the channel reconnected.
 * 130000 (API overloaded) is transient whatever the status.
 */
function discordError(r: Reply): PlatformError {
  const b = r.body as ApiError | null;
  const code = typeof b?.code === 'number' ? b.code : undefined;
  const message = `Discord ${r.status}: ${reason(r)}`;
  const opts = { status: r.status, platformCode: code === undefined ? undefined : String(code) };
  if (r.status === 401 || r.status === 403 || r.status === 404) return new PlatformError('reauth', message, opts);
  if (r.status === 429 || r.status >= 500 || code === API_OVERLOADED) {
    return new PlatformError('transient', message, { ...opts, retryAfterMs: retryAfterMs(r) });
  }
  return new PlatformError('permanent', message, opts);
}

/** `message` plus the field errors of a 50035 body, e.g. "Invalid Form Body (content: Must be 2000 or fewer in length.)". */
function reason(r: Reply): string {
  const b = r.body as ApiError | null;
  if (typeof b?.message !== 'string' || !b.message) return reasonOf(r);
  const details = fieldErrors(b.errors);
  return details.length ? `${b.message} (${details.slice(0, 3).join('; ')})` : b.message;
}

function fieldErrors(errors: RESTErrorData | undefined, path: string[] = [], out: string[] = []): string[] {
  if (!errors || typeof errors !== 'object') return out;
  for (const [key, value] of Object.entries(errors)) {
    if (key !== '_errors') {
      fieldErrors(value, [...path, key], out);
      continue;
    }
    for (const e of Array.isArray(value) ? value : []) {
      const text = (e as Partial<RESTErrorFieldInformation> | null)?.message;
      if (typeof text === 'string') out.push(path.length ? `${path.join('.')}: ${text}` : text);
    }
  }
  return out;
}

/** The body's retry_after (seconds, with decimals), else Retry-After, else X-RateLimit-Reset-After. */
function retryAfterMs(r: Reply): number | undefined {
  const inBody = (r.body as ApiError | null)?.retry_after;
  if (typeof inBody === 'number' && inBody >= 0) return Math.ceil(inBody * 1000);
  const header = parseRetryAfter(r.headers.get('retry-after'));
  if (header !== undefined) return header;
  const resetAfter = Number(r.headers.get('x-ratelimit-reset-after') ?? NaN);
  return Number.isFinite(resetAfter) && resetAfter >= 0 ? Math.ceil(resetAfter * 1000) : undefined;
}
