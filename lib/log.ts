// Structured logs: one JSON object per line, `{time, level, msg, ...fields}`, at LOG_LEVEL and
// above. Every entry is redacted before it is written: no API key, bearer token, password or
// credential may reach a log line, whatever a caller puts into an entry.
import { writeSync } from 'node:fs';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogEntry = Record<string, unknown>;
/** Receives finished entries; AppDeps.log has this shape (tests capture entries with it). */
export type LogSink = (entry: LogEntry) => void;

export const REDACTED = '[redacted]';

/**
 * Field names whose values are secrets, whatever they hold (compared lower-case with `-` and `_`
 * removed, as a substring): headers (Authorization, Cookie, X-Api-Key), channel credentials
 * (accessToken, refreshToken, appPassword, botToken, webhookUrl — a Discord webhook URL is its
 * own credential), keys of this service (CREDENTIALS_KEY, STORAGE_SIGNING_KEY). `key` alone and
 * `idempotencyKey` are not secrets and stay.
 */
const SECRET_FIELD =
  /authorization|cookie|password|passwd|passphrase|secret|token|credential|apikey|privatekey|signingkey|credentialskey|sessionkey|webhookurl/;

/** Field names seen so far (a log line has the same few every time), bounded. */
const secretFields = new Map<string, boolean>();

export function isSecretField(name: string): boolean {
  let secret = secretFields.get(name);
  if (secret === undefined) {
    secret = SECRET_FIELD.test(name.toLowerCase().replace(/[-_\s]/g, ''));
    if (secretFields.size < 1000) secretFields.set(name, secret);
  }
  return secret;
}

/** Secrets recognised inside any string (a message, a URL, an error's stack). */
const SECRET_TEXT: [RegExp, string][] = [
  // This service's API keys (live or test), whole or cut short.
  [/sk_(?:live|test)_[A-Za-z0-9]*/g, REDACTED],
  // Authorization header values, wherever they were copied to (not a value already redacted above).
  [/\b(Bearer|Basic)\s+(?!\[redacted\])[^\s"',;)}\]]+/gi, `$1 ${REDACTED}`],
  // JSON Web Tokens (OAuth access tokens of several platforms).
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // user:password@ in URLs (DATABASE_URL in a driver's error message).
  [/([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, `$1${REDACTED}@`],
  // Secret query parameters: OAuth tokens, presigned URL signatures and credentials.
  [
    /([?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|password|client_secret|signature|sig|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&\s"'#]*/gi,
    `$1${REDACTED}`,
  ],
  // name=value or "name": "value" pairs in free text (a form body, a serialised object).
  [
    /((?:password|passwd|secret|access_?token|refresh_?token|id_?token|bot_?token|client_?secret|api_?key|app_?password)["']?\s*[:=]\s*["']?)[^"'&\s,;}]+/gi,
    `$1${REDACTED}`,
  ],
];

/** Every pattern above needs one of these; most strings of a log line (ids, routes) have none. */
const MAY_HOLD_SECRET = /sk_|bearer|basic|eyj|[:=]/i;

export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [re, replacement] of SECRET_TEXT) out = out.replace(re, replacement);
  return out;
}

/** A deep copy of `value` with secret fields replaced and secrets inside strings cut out. */
export function redact<T>(value: T): T {
  return redactValue(value, 0, new WeakSet()) as T;
}

function redactValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? String(value) : value;
  if (seen.has(value)) return '[circular]';
  if (depth > 8) return '[too deep]';
  seen.add(value);
  if (value instanceof Error) {
    const out: LogEntry = { name: value.name, message: redactText(value.message) };
    if (value.stack) out.stack = redactText(value.stack);
    const code = (value as { code?: unknown }).code;
    if (code !== undefined) out.code = redactValue(code, depth + 1, seen);
    if (value.cause !== undefined) out.cause = redactValue(value.cause, depth + 1, seen);
    return out;
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Headers) return redactValue(Object.fromEntries(value.entries()), depth + 1, seen);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen));
  const out: LogEntry = {};
  for (const [k, v] of Object.entries(value))
    out[k] = isSecretField(k) && v !== null && v !== undefined ? REDACTED : redactValue(v, depth + 1, seen);
  return out;
}

export function levelEnabled(min: LogLevel, level: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
}

export interface Logger {
  /** The sink for AppDeps.log: redacts, filters by level, writes one line. */
  sink: LogSink;
  debug(msg: string, fields?: LogEntry): void;
  info(msg: string, fields?: LogEntry): void;
  warn(msg: string, fields?: LogEntry): void;
  error(msg: string, fields?: LogEntry): void;
}

export interface LoggerOptions {
  /** Entries below this level are dropped (LOG_LEVEL; default info). */
  level?: LogLevel;
  /** Fields on every line, e.g. `{ service: 'api' }`. */
  base?: LogEntry;
  /** Where a finished line goes (default: stdout). */
  write?: (line: string) => void;
}

/**
 * Lines written in one turn of the event loop go to stdout in one write after it (a busy API
 * writes a line per request, and a write per line costs more than the line). What is still held
 * when the process exits is written synchronously by the exit handler; a SIGKILL can lose the
 * lines of the last turn only.
 */
let pending: string[] = [];
const flushPending = () => {
  if (!pending.length) return;
  const text = pending.join('');
  pending = [];
  process.stdout.write(text);
};
process.on('exit', () => {
  if (!pending.length) return;
  try {
    writeSync(1, pending.join(''));
  } catch {}
  pending = [];
});
const stdout = (line: string) => {
  if (!pending.length) setImmediate(flushPending);
  pending.push(`${line}\n`);
};

/** Marks a sink that redacts (and filters by level) itself: a caller need not redact before it. */
export const REDACTING_SINK = Symbol('redacting log sink');
export const sinkRedacts = (sink: LogSink): boolean => (sink as { [REDACTING_SINK]?: boolean })[REDACTING_SINK] === true;

export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = opts.level ?? 'info';
  const write = opts.write ?? stdout;
  const base = opts.base ?? {};
  const sink: LogSink = (entry) => {
    const level = (LOG_LEVELS as readonly unknown[]).includes(entry.level) ? (entry.level as LogLevel) : 'info';
    if (!levelEnabled(min, level)) return;
    const { time, ...rest } = entry;
    const line = redact({ time: typeof time === 'string' ? time : new Date().toISOString(), level, ...base, ...rest });
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch {
      text = JSON.stringify({ time: line.time, level, msg: 'unserialisable log entry' });
    }
    write(text);
  };
  (sink as { [REDACTING_SINK]?: boolean })[REDACTING_SINK] = true;
  const at =
    (level: LogLevel) =>
    (msg: string, fields: LogEntry = {}) =>
      sink({ time: new Date().toISOString(), level, msg, ...fields });
  return { sink, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
