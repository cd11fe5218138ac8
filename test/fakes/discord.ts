// A local fake Discord REST API serving incoming webhooks (/api[/vN]/webhooks/<id>/<token>): Get
// Webhook with Token and Execute Webhook, with Discord's error bodies ({message, code, errors?}),
// snowflake ids and message objects. Wording marked "approx." was not confirmed against Discord.
//
// Held to discord-api-types (API v10): the Execute Webhook query and the body fields the
// connector sends are checked against TypeBox schemas whose Static types equal the package's
// (test/shapes-discord.test.ts asserts it), and a request that breaks them is refused as Discord
// refuses it: 400 with code 50035 "Invalid Form Body" and the field errors. Fields outside the
// schemas (embeds, components, poll…) are not checked; unknown fields are ignored, as Discord
// ignores them. Answers are typed by the package's response types.
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import {
  AllowedMentionsTypes,
  type MessageFlags,
  MessageType,
  type RESTError,
  type RESTErrorData,
  type RESTGetAPIWebhookWithTokenResult,
  type RESTPostAPIWebhookWithTokenWaitResult,
  type UserFlags,
  WebhookType,
} from 'discord-api-types/v10';

/** A bitfield with no flag set, as Discord sends it; the package's flag enums have no member for it. */
const NO_FLAGS = 0;

const Snowflake = Type.String({ pattern: '^[0-9]{1,20}$' });

/** allowed_mentions (APIAllowedMentions). */
export const AllowedMentionsSchema = Type.Object({
  // Static as the enum itself (Type.Enum's is the union of its members, a different type to tsc).
  parse: Type.Optional(Type.Array(Type.Unsafe<AllowedMentionsTypes>(Type.Enum(AllowedMentionsTypes)))),
  roles: Type.Optional(Type.Array(Snowflake)),
  users: Type.Optional(Type.Array(Snowflake)),
  replied_user: Type.Optional(Type.Boolean()),
});

/** An attachments[] entry of a request (RESTAPIAttachment). */
export const AttachmentSchema = Type.Object({
  id: Type.Union([Snowflake, Type.Number()]),
  filename: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  duration_secs: Type.Optional(Type.Number()),
  waveform: Type.Optional(Type.String()),
  is_spoiler: Type.Optional(Type.Boolean()),
});

/** The Execute Webhook body fields that are checked (RESTPostAPIWebhookWithTokenJSONBody). */
export const ExecuteBodySchema = Type.Object({
  content: Type.Optional(Type.String()),
  username: Type.Optional(Type.String()),
  avatar_url: Type.Optional(Type.String()),
  tts: Type.Optional(Type.Boolean()),
  allowed_mentions: Type.Optional(AllowedMentionsSchema),
  attachments: Type.Optional(Type.Array(AttachmentSchema)),
  thread_name: Type.Optional(Type.String()),
  applied_tags: Type.Optional(Type.Array(Snowflake)),
});

/** The Execute Webhook query (RESTPostAPIWebhookWithTokenQuery). */
export const ExecuteQuerySchema = Type.Object({
  wait: Type.Optional(Type.Boolean()),
  thread_id: Type.Optional(Snowflake),
  with_components: Type.Optional(Type.Boolean()),
});

export interface FakeDiscordWebhook {
  id: string;
  token: string;
  guild_id: string;
  channel_id: string;
  name: string;
}

export interface FakeDiscordAttachment {
  id: string;
  filename: string;
  description: string | null;
  content_type: string;
  size: number;
}

export interface FakeDiscordMessage {
  id: string;
  webhookId: string;
  channel_id: string;
  /** As Discord shows it: '' when the message has no text. */
  content: string;
  attachments: FakeDiscordAttachment[];
  allowedMentions: unknown;
  /** The name shown for this message (payload `username`); absent: the webhook's own name. */
  username?: string;
  /** The JSON payload exactly as sent (JSON body or payload_json): tells an absent `content` from ''. */
  payload: Record<string, unknown>;
  timestamp: string;
}

export interface FakeDiscordRequest {
  method: string;
  webhookId: string | null;
  wait: string | null;
  threadId: string | null;
  contentType: string;
  userAgent: string | null;
}

/** 'accept-then-hang': create the message, then never answer (the answer is lost). */
export type FakeDiscordResponse = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang' | 'accept-then-hang';

export interface FakeDiscord {
  url: string;
  /** The API base a connector should use: `${url}/api/v10`. */
  apiBase: string;
  webhook: FakeDiscordWebhook;
  /** The webhook URL as Discord shows it, on the fake's host. */
  webhookUrl(hook?: FakeDiscordWebhook): string;
  webhooks: FakeDiscordWebhook[];
  messages: FakeDiscordMessage[];
  requests: FakeDiscordRequest[];
  /** The next n executes (or, with route 'get', Get Webhook calls) answer this instead. */
  failNext(n: number, response: FakeDiscordResponse, route?: 'execute' | 'get'): void;
  /** Deletes the webhook, as a server admin can: later calls answer 404 Unknown Webhook. */
  deleteWebhook(id: string): void;
  stop(): Promise<void>;
}

const CONTENT_LIMIT = 2000;
const USERNAME_LIMIT = 80;
const FILE_LIMIT = 10;
const DESCRIPTION_LIMIT = 1024;
const DISCORD_EPOCH = 1_420_070_400_000n;

class DiscordError extends Error {
  constructor(
    readonly status: number,
    readonly body: RESTError,
  ) {
    super(body.message);
  }
}

const formError = (field: string, code: string, message: string) =>
  new DiscordError(400, { message: 'Invalid Form Body', code: 50035, errors: { [field]: { _errors: [{ code, message }] } } });

/**
 * The value, checked against the schema; else the 400 Discord answers, with each field's error at
 * its path, e.g. {allowed_mentions: {parse: {0: {_errors: [{code, message}]}}}}
 * (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json).
 */
function checked<S extends TSchema>(schema: S, value: unknown): Static<S> {
  if (Value.Check(schema, value)) return value;
  const errors: { [k: string]: RESTErrorData } = {};
  for (const e of Value.Errors(schema, value)) {
    let node = errors;
    for (const key of e.path.split('/').slice(1)) node = (node[key] ??= {}) as { [k: string]: RESTErrorData };
    const list = ((node._errors as RESTErrorData[] | undefined) ??= []);
    if (!list.length) list.push(fieldError(e));
  }
  throw new DiscordError(400, { message: 'Invalid Form Body', code: 50035, errors });
}

/** Discord's code and wording for one field error; the docs show BASE_TYPE_CHOICES, the rest are approx. */
function fieldError(e: ValueError): { code: string; message: string } {
  const choices = (e.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const);
  if (choices?.length && choices.every((c) => c !== undefined)) {
    const list = choices.map((c) => (typeof c === 'string' ? `'${c}'` : String(c))).join(', ');
    return { code: 'BASE_TYPE_CHOICES', message: `Value must be one of (${list}).` };
  }
  const shown = typeof e.value === 'string' ? e.value : JSON.stringify(e.value);
  switch (e.type) {
    case ValueErrorType.Object:
      return { code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' };
    case ValueErrorType.Array:
      return { code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' };
    case ValueErrorType.Boolean:
      return { code: 'BOOLEAN_TYPE_CONVERT', message: `Value "${shown}" is not a valid boolean.` };
    case ValueErrorType.Number:
      return { code: 'NUMBER_TYPE_COERCE', message: `Value "${shown}" is not int.` };
    case ValueErrorType.StringPattern:
    case ValueErrorType.Union:
      return { code: 'NUMBER_TYPE_COERCE', message: `Value "${shown}" is not snowflake.` };
    default:
      return { code: 'BASE_TYPE_BAD_TYPE', message: 'Must be a string.' };
  }
}

export async function startFakeDiscord(): Promise<FakeDiscord> {
  let seq = 0n;
  const snowflake = () => String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | (seq++ & 0xfffn));
  const webhook: FakeDiscordWebhook = {
    id: snowflake(),
    token: 'hT7kQ2-fake_webhook_token_for_tests_only_0123456789abcdefABCDEF',
    guild_id: snowflake(),
    channel_id: snowflake(),
    name: 'Postpilot',
  };
  const webhooks = [webhook];
  const messages: FakeDiscordMessage[] = [];
  const requests: FakeDiscordRequest[] = [];
  const scripted = { execute: [] as FakeDiscordResponse[], get: [] as FakeDiscordResponse[] };
  const hanging = new Set<() => void>();

  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handle });
  const base = `http://127.0.0.1:${server.port}`;

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const m = /^\/api(?:\/v(\d+))?\/webhooks\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    requests.push({
      method: req.method,
      webhookId: m?.[2] ?? null,
      wait: url.searchParams.get('wait'),
      threadId: url.searchParams.get('thread_id'),
      contentType: req.headers.get('content-type') ?? '',
      userAgent: req.headers.get('user-agent'),
    });
    if (!m || (req.method !== 'GET' && req.method !== 'POST')) return json({ message: '404: Not Found', code: 0 }, 404);
    if (m[1] && !['9', '10'].includes(m[1])) return json({ message: 'Invalid API version', code: 50041 }, 400);

    const next = scripted[req.method === 'GET' ? 'get' : 'execute'].shift();
    if (next === 'hang') return hang(req);
    if (next && next !== 'accept-then-hang') return canned(next);

    try {
      const hook = webhooks.find((w) => w.id === m[2]);
      if (!hook) throw new DiscordError(404, { message: 'Unknown Webhook', code: 10015 });
      if (hook.token !== m[3]) throw new DiscordError(401, { message: 'Invalid Webhook Token', code: 50027 });
      if (req.method === 'GET') return json(webhookJson(hook));
      // Query strings carry text; Discord reads booleans and snowflakes out of it before checking.
      const query = checked(ExecuteQuerySchema, Value.Convert(ExecuteQuerySchema, Object.fromEntries(url.searchParams)));
      const msg = await execute(req, hook, query.thread_id ?? null);
      if (next === 'accept-then-hang') return hang(req);
      return query.wait ? json(messageJson(msg, hook)) : new Response(null, { status: 204 });
    } catch (err) {
      if (err instanceof DiscordError) return json(err.body, err.status);
      throw err;
    }
  }

  async function execute(req: Request, hook: FakeDiscordWebhook, threadId: string | null): Promise<FakeDiscordMessage> {
    const { payload, files } = await readExecute(req);
    // Discord takes a null field as one not given.
    const body = checked(ExecuteBodySchema, Object.fromEntries(Object.entries(payload).filter(([, v]) => v !== null)));
    // No default: an absent (or null) content is no text at all, and counts for nothing below.
    const content = body.content ?? null;
    if (content !== null && content.length > CONTENT_LIMIT)
      throw formError('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${CONTENT_LIMIT} or fewer in length.`);
    const username = body.username ?? null;
    if (username !== null) {
      if (username.length < 1 || username.length > USERNAME_LIMIT)
        throw formError('username', 'BASE_TYPE_BAD_LENGTH', `Must be between 1 and ${USERNAME_LIMIT} in length.`);
      // Discord keeps webhooks from posing as itself or its old bot.
      const banned = ['discord', 'clyde'].find((w) => username.toLowerCase().includes(w));
      if (banned) throw formError('username', 'USERNAME_INVALID_CONTAINS', `Username cannot contain "${banned}"`);
    }
    if (files.size > FILE_LIMIT)
      throw new DiscordError(400, { message: 'Maximum number of attachments in a message reached (10)', code: 30015 }); // the JSON error codes table (opcodes-and-status-codes)

    const described = body.attachments ?? [];
    const attachments: FakeDiscordAttachment[] = [];
    for (const [n, file] of files) {
      const meta = described.find((a) => String(a.id) === n);
      const description = meta?.description ?? null;
      if (description && description.length > DESCRIPTION_LIMIT) {
        throw formError('attachments', 'BASE_TYPE_MAX_LENGTH', `Must be ${DESCRIPTION_LIMIT} or fewer in length.`);
      }
      attachments.push({
        id: snowflake(),
        filename: meta?.filename ?? file.name,
        description,
        content_type: file.type,
        size: file.size,
      });
    }
    // Discord needs one of content, embeds, files, poll (or stickers/components); blank text is none.
    const hasText = content !== null && content.trim() !== '';
    const hasEmbeds = Array.isArray(payload.embeds) && payload.embeds.length > 0;
    const hasPoll = payload.poll !== undefined && payload.poll !== null;
    const hasOther =
      (Array.isArray(payload.sticker_ids) && payload.sticker_ids.length > 0) ||
      (Array.isArray(payload.components) && payload.components.length > 0);
    if (!hasText && !hasEmbeds && !attachments.length && !hasPoll && !hasOther) {
      throw new DiscordError(400, { message: 'Cannot send an empty message', code: 50006 });
    }

    const msg: FakeDiscordMessage = {
      id: snowflake(),
      webhookId: hook.id,
      channel_id: threadId ?? hook.channel_id,
      content: content ?? '',
      attachments,
      allowedMentions: body.allowed_mentions,
      ...(username !== null ? { username } : {}),
      payload,
      timestamp: new Date().toISOString().replace('Z', '+00:00'),
    };
    messages.push(msg);
    return msg;
  }

  function messageJson(msg: FakeDiscordMessage, hook: FakeDiscordWebhook): RESTPostAPIWebhookWithTokenWaitResult {
    return {
      type: MessageType.Default,
      channel_id: msg.channel_id,
      content: msg.content,
      attachments: msg.attachments.map(({ description, ...a }) => {
        const cdn = `https://cdn.discordapp.com/attachments/${msg.channel_id}/${a.id}/${encodeURIComponent(a.filename)}`;
        return {
          ...a,
          ...(description ? { description } : {}),
          url: cdn,
          proxy_url: cdn.replace('cdn.discordapp.com', 'media.discordapp.net'),
        };
      }),
      embeds: [],
      timestamp: msg.timestamp,
      edited_timestamp: null,
      flags: NO_FLAGS as MessageFlags,
      components: [],
      id: msg.id,
      author: {
        id: hook.id,
        username: msg.username ?? hook.name,
        avatar: null,
        discriminator: '0000',
        public_flags: NO_FLAGS as UserFlags,
        flags: NO_FLAGS as UserFlags,
        bot: true,
        global_name: null,
      },
      mentions: [],
      mention_roles: [],
      pinned: false,
      mention_everyone: false,
      tts: false,
      webhook_id: hook.id,
    };
  }

  function webhookJson(hook: FakeDiscordWebhook): RESTGetAPIWebhookWithTokenResult {
    return {
      application_id: null,
      avatar: null,
      channel_id: hook.channel_id,
      guild_id: hook.guild_id,
      id: hook.id,
      name: hook.name,
      type: WebhookType.Incoming,
      token: hook.token,
    };
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const done = () => {
        hanging.delete(done);
        resolve(json({ message: 'gave up', code: 0 }, 504));
      };
      hanging.add(done);
      req.signal.addEventListener('abort', done, { once: true });
    });
  }

  return {
    url: base,
    apiBase: `${base}/api/v10`,
    webhook,
    webhookUrl: (hook = webhook) => `${base}/api/webhooks/${hook.id}/${hook.token}`,
    webhooks,
    messages,
    requests,
    failNext(n, response, route = 'execute') {
      for (let i = 0; i < n; i++) scripted[route].push(response);
    },
    deleteWebhook(id) {
      const i = webhooks.findIndex((w) => w.id === id);
      if (i >= 0) webhooks.splice(i, 1);
    },
    async stop() {
      for (const done of [...hanging]) done();
      await server.stop(true);
    },
  };
}

/**
 * Execute Webhook bodies: JSON, or multipart/form-data with `payload_json` (a string field) and
 * files named `files[n]`; any other file part, or another content type, is an invalid form body.
 */
async function readExecute(req: Request): Promise<{ payload: Record<string, unknown>; files: Map<string, File> }> {
  const type = req.headers.get('content-type') ?? '';
  const files = new Map<string, File>();
  if (type.includes('application/json')) return { payload: objectOf(await req.text()), files };
  if (!type.includes('multipart/form-data')) {
    throw new DiscordError(400, {
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        _errors: [
          {
            code: 'CONTENT_TYPE_INVALID',
            message: `Expected "Content-Type" header to be one of {'application/json', 'multipart/form-data', 'application/x-www-form-urlencoded'}.`,
          },
        ],
      },
    });
  }
  let payload: Record<string, unknown> = {};
  for (const [name, value] of await req.formData()) {
    if (name === 'payload_json') {
      if (typeof value !== 'string') throw formError('payload_json', 'BASE_TYPE_BAD_TYPE', 'Must be a string.'); // approx.
      payload = objectOf(value);
    } else if (typeof value !== 'string') {
      const n = /^files\[(\d+)\]$/.exec(name)?.[1];
      if (n === undefined) throw formError(name, 'UNKNOWN_FILE_FIELD', 'Unknown file field; use files[n].'); // approx.
      files.set(n, value as File);
    } else {
      payload[name] = value;
    }
  }
  return { payload, files };
}

function objectOf(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // falls through
  }
  throw new DiscordError(400, { message: 'The request body contains invalid JSON.', code: 50109 });
}

/** A scripted answer; a string body goes out as-is (e.g. Cloudflare's HTML error page). */
function canned(r: { status: number; body?: unknown; headers?: Record<string, string> }): Response {
  if (typeof r.body === 'string') return new Response(r.body, { status: r.status, headers: { 'Content-Type': 'text/html', ...r.headers } });
  return json(r.body ?? { message: `${r.status}`, code: 0 }, r.status, r.headers);
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}
