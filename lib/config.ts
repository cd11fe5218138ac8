// The one typed, validated configuration module. Read once at start; the README ("Configuration")
// and docs/operations.md ("Channels and platform settings") list the variables. Missing required
// values fail fast with a message naming them.
import { Type as T, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const Bool = T.Union([T.Literal('true'), T.Literal('false'), T.Literal('1'), T.Literal('0')]);
const Port = T.String({ pattern: '^[0-9]{1,5}$' });
const text = T.Optional(T.String({ minLength: 1 }));
const url = T.Optional(T.String({ pattern: '^https?://' }));

/**
 * Platform app credentials, API versions and base-URL overrides, each passed through as it is
 * (Config.platforms; read by platforms/index.ts and web/oauth.ts). The one list of them: the
 * schema and PLATFORM_SETTINGS are both made from it.
 */
const PLATFORM_ENV = {
  X_CLIENT_ID: text,
  X_CLIENT_SECRET: text,
  LINKEDIN_CLIENT_ID: text,
  LINKEDIN_CLIENT_SECRET: text,
  LINKEDIN_API_VERSION: text,
  REDDIT_CLIENT_ID: text,
  REDDIT_CLIENT_SECRET: text,
  REDDIT_USER_AGENT: text,
  PINTEREST_CLIENT_ID: text,
  PINTEREST_CLIENT_SECRET: text,
  GOOGLE_CLIENT_ID: text,
  GOOGLE_CLIENT_SECRET: text,
  TIKTOK_CLIENT_KEY: text,
  TIKTOK_CLIENT_SECRET: text,
  META_GRAPH_API_VERSION: text,
  X_API_URL: url,
  LINKEDIN_API_URL: url,
  LINKEDIN_AUTH_URL: url,
  REDDIT_API_URL: url,
  REDDIT_AUTH_URL: url,
  PINTEREST_API_URL: url,
  FACEBOOK_GRAPH_URL: url,
  INSTAGRAM_GRAPH_URL: url,
  THREADS_GRAPH_URL: url,
  TELEGRAM_API_URL: url,
  DISCORD_API_URL: url,
  YOUTUBE_API_URL: url,
  YOUTUBE_UPLOAD_URL: url,
  GOOGLE_AUTH_URL: url,
  TIKTOK_API_URL: url,
  // The web application's OAuth connect flows (web/oauth.ts): Meta app credentials, and the
  // authorize / token endpoints of each platform (overridable so tests can use a local fake).
  META_APP_ID: text,
  META_APP_SECRET: text,
  INSTAGRAM_APP_ID: text,
  INSTAGRAM_APP_SECRET: text,
  THREADS_APP_ID: text,
  THREADS_APP_SECRET: text,
  X_AUTHORIZE_URL: url,
  X_TOKEN_URL: url,
  LINKEDIN_AUTHORIZE_URL: url,
  LINKEDIN_TOKEN_URL: url,
  REDDIT_AUTHORIZE_URL: url,
  REDDIT_TOKEN_URL: url,
  PINTEREST_AUTHORIZE_URL: url,
  PINTEREST_TOKEN_URL: url,
  GOOGLE_AUTHORIZE_URL: url,
  GOOGLE_TOKEN_URL: url,
  TIKTOK_AUTHORIZE_URL: url,
  TIKTOK_TOKEN_URL: url,
  FACEBOOK_AUTHORIZE_URL: url,
  FACEBOOK_TOKEN_URL: url,
  INSTAGRAM_AUTHORIZE_URL: url,
  INSTAGRAM_TOKEN_URL: url,
  THREADS_AUTHORIZE_URL: url,
  THREADS_TOKEN_URL: url,
};
export const PLATFORM_SETTINGS = Object.keys(PLATFORM_ENV) as PlatformSetting[];
export type PlatformSetting = keyof typeof PLATFORM_ENV;

export const EnvSchema = T.Object({
  PORT: T.Optional(Port),
  HOST: T.Optional(T.String({ minLength: 1 })),
  PUBLIC_BASE_URL: T.Optional(T.String({ pattern: '^https?://' })),
  // Where short links point (domain/links/rewrite.ts: `{SHORT_LINK_BASE_URL}/l/{code}`); default PUBLIC_BASE_URL.
  SHORT_LINK_BASE_URL: T.Optional(T.String({ pattern: '^https?://' })),
  // Proxies in front of the service that append to X-Forwarded-For: false/0 (default), true (= 1), or a count.
  TRUST_PROXY: T.Optional(T.String({ pattern: '^(true|false|[0-9])$' })),
  DATABASE_URL: T.Optional(T.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_MAX: T.Optional(T.String({ pattern: '^[0-9]+$' })),
  CREDENTIALS_KEY: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_ADDRESS: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_NAMESPACE: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_TASK_QUEUE: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_API_KEY: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_TLS: T.Optional(Bool),
  TEMPORAL_REQUEST_TIMEOUT_MS: T.Optional(T.String({ pattern: '^[1-9][0-9]{2,5}$' })),
  TEMPORAL_CLI_PATH: T.Optional(T.String({ minLength: 1 })),
  TEMPORAL_UI_PORT: T.Optional(Port),
  DATA_DIR: T.Optional(T.String({ minLength: 1 })),
  EMBEDDED_PG_PORT: T.Optional(Port),
  LOG_LEVEL: T.Optional(T.Union([T.Literal('debug'), T.Literal('info'), T.Literal('warn'), T.Literal('error')])),
  STORAGE_DRIVER: T.Optional(T.Union([T.Literal('disk'), T.Literal('s3')])),
  STORAGE_DIR: T.Optional(T.String({ minLength: 1 })),
  STORAGE_SIGNING_KEY: T.Optional(T.String({ minLength: 1 })),
  S3_ENDPOINT: T.Optional(T.String({ pattern: '^https?://' })),
  S3_REGION: T.Optional(T.String({ minLength: 1 })),
  S3_BUCKET: T.Optional(T.String({ minLength: 1 })),
  S3_ACCESS_KEY_ID: T.Optional(T.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: T.Optional(T.String({ minLength: 1 })),
  S3_FORCE_PATH_STYLE: T.Optional(Bool),
  VISION_API_URL: T.Optional(T.String({ pattern: '^https?://' })),
  ...PLATFORM_ENV,
  VISION_MODEL: T.Optional(T.String({ minLength: 1 })),
  VISION_API_KEY: T.Optional(T.String({ minLength: 1 })),
  // The generate scope (services/generate.ts): an OpenAI-compatible chat-completions endpoint.
  GENERATE_API_URL: T.Optional(T.String({ pattern: '^https?://' })),
  GENERATE_MODEL: text,
  GENERATE_API_KEY: text,
  GENERATE_TIMEOUT_MS: T.Optional(T.String({ pattern: '^[1-9][0-9]{2,5}$' })),
  // The stdio MCP server (mcp/main.ts): the API it speaks to and the key it speaks with.
  POSTPILOT_API_URL: T.Optional(T.String({ pattern: '^https?://' })),
  POSTPILOT_API_KEY: text,
  OUTBOUND_ALLOW_PRIVATE: T.Optional(Bool),
  // Outgoing mail (services/mail.ts): invitations. Unset: no mail is sent; the inviter shares the link.
  SMTP_URL: T.Optional(T.String({ pattern: '^smtps?://' })),
  MAIL_FROM: text,
  // Keys and counts held in the API process (services/admission-cache.ts); false: one statement per request.
  ADMISSION_CACHE: T.Optional(Bool),
  // GET /v1/posts's pages held in the API process (domain/posts/page-cache.ts); false: every page is read.
  PAGE_CACHE: T.Optional(Bool),
  // Other ffmpeg/ffprobe binaries than the npm packages' (media/exec.ts).
  FFMPEG_PATH: text,
  FFPROBE_PATH: text,
});

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  /** The base of the service's short links (`{base}/l/{code}`): SHORT_LINK_BASE_URL, else publicBaseUrl; no trailing slash. */
  shortLinkBaseUrl: string;
  /** How many proxies' X-Forwarded-For entries to trust for the client address (TRUST_PROXY); 0 = the socket's. */
  trustProxyHops: number;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** Admission from memory (services/admission-cache.ts), on unless ADMISSION_CACHE=false. */
  admissionCache: boolean;
  /** GET /v1/posts's pages from memory (domain/posts/page-cache.ts), on unless PAGE_CACHE=false. */
  pageCache: boolean;
  /** 32-byte key for AES-256-GCM encryption of channel credentials. */
  credentialsKey: Buffer | undefined;
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    apiKey: string | undefined;
    tls: boolean;
    /** Deadline of each Temporal call made while an HTTP request waits (start, Update); past it → 503. */
    requestTimeoutMs: number;
    cliPath: string | undefined;
    uiPort: number;
  };
  dataDir: string;
  embeddedPgPort: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  storage: StorageConfig;
  /** The optional vision pass: an OpenAI-compatible chat-completions endpoint; off when unset. */
  vision: { url: string; model: string; apiKey?: string } | undefined;
  /**
   * The generate scope's text generator (services/generate.ts): an OpenAI-compatible
   * chat-completions endpoint (`url` is the full endpoint); off when GENERATE_API_URL is unset.
   */
  generate: { url: string; model: string; apiKey?: string; timeoutMs: number } | undefined;
  /** The stdio MCP server (mcp/main.ts): the service's base URL and the API key it uses. */
  mcp: { apiUrl: string; apiKey: string | undefined };
  /** Outgoing mail (SMTP_URL, MAIL_FROM; services/mail.ts); undefined: none is sent. */
  mail: { url: string; from: string } | undefined;
  /** Platform app credentials (for OAuth token refresh) and API base-URL overrides; see platforms/index.ts. */
  platforms: Partial<Record<PlatformSetting, string>>;
  /** Calls to tenant-chosen hosts (lib/outbound.ts): private addresses only with OUTBOUND_ALLOW_PRIVATE. */
  outbound: { allowPrivate: boolean };
  /** FFMPEG_PATH / FFPROBE_PATH; unset: the binaries of the npm packages (media/exec.ts). */
  media: { ffmpegPath: string | undefined; ffprobePath: string | undefined };
}

export interface StorageConfig {
  driver: 'disk' | 's3';
  /** Root folder of the disk store. */
  dir: string;
  /** 32-byte HMAC key for the disk store's upload/download URLs; when absent see storageSigningKey (storage/index.ts). */
  signingKey: Buffer | undefined;
  s3: {
    endpoint: string | undefined;
    region: string;
    /** Always set when driver is s3 (checked at load). */
    bucket: string | undefined;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
    forcePathStyle: boolean;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses a 32-byte key given as 64 hex characters or as base64. */
export function parseCredentialsKey(raw: string, name = 'CREDENTIALS_KEY'): Buffer {
  const buf = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes (64 hex characters or base64)`);
  return buf;
}

const isTrue = (v: string | undefined) => v === 'true' || v === '1';

/** A base URL (`https://api.openai.com/v1`, `http://localhost:11434/v1`) or the full endpoint → the endpoint. */
export function chatCompletionsUrl(raw: string): string {
  const url = raw.replace(/\/+$/, '');
  return url.endsWith('/chat/completions') ? url : `${url}/chat/completions`;
}

type Env = Record<string, string | undefined>;
type Required = 'DATABASE_URL' | 'CREDENTIALS_KEY';

export function loadConfig(env: Env = process.env, required: Required[] = []): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const errors = [...Value.Errors(EnvSchema, picked)].map((e) => `${e.path.slice(1)}: ${e.message}`);
  const missing = required.filter((k) => !picked[k]);
  if (missing.length) errors.push(...missing.map((k) => `${k}: required`));
  if (picked.STORAGE_DRIVER === 's3' && !picked.S3_BUCKET) errors.push('S3_BUCKET: required when STORAGE_DRIVER=s3');
  if (Boolean(picked.S3_ACCESS_KEY_ID) !== Boolean(picked.S3_SECRET_ACCESS_KEY)) {
    errors.push('S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: give both or neither');
  }
  if (errors.length) throw new ConfigError(`invalid configuration:\n  ${errors.join('\n  ')}`);
  const e = picked as Static<typeof EnvSchema>;
  const port = Number(e.PORT ?? 3000);
  const dataDir = e.DATA_DIR ?? '.data';
  return {
    port,
    host: e.HOST ?? '0.0.0.0',
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    shortLinkBaseUrl: (e.SHORT_LINK_BASE_URL ?? e.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    trustProxyHops: e.TRUST_PROXY === 'true' ? 1 : e.TRUST_PROXY === 'false' || e.TRUST_PROXY === undefined ? 0 : Number(e.TRUST_PROXY),
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: Number(e.DATABASE_POOL_MAX ?? 10),
    admissionCache: e.ADMISSION_CACHE === undefined || isTrue(e.ADMISSION_CACHE),
    pageCache: e.PAGE_CACHE === undefined || isTrue(e.PAGE_CACHE),
    credentialsKey: e.CREDENTIALS_KEY ? parseCredentialsKey(e.CREDENTIALS_KEY) : undefined,
    temporal: {
      address: e.TEMPORAL_ADDRESS ?? 'localhost:7233',
      namespace: e.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: e.TEMPORAL_TASK_QUEUE ?? 'postpilot',
      apiKey: e.TEMPORAL_API_KEY,
      tls: e.TEMPORAL_TLS === 'true' || e.TEMPORAL_TLS === '1' || Boolean(e.TEMPORAL_API_KEY),
      requestTimeoutMs: Number(e.TEMPORAL_REQUEST_TIMEOUT_MS ?? 5000),
      cliPath: e.TEMPORAL_CLI_PATH,
      uiPort: Number(e.TEMPORAL_UI_PORT ?? 8233),
    },
    dataDir,
    embeddedPgPort: Number(e.EMBEDDED_PG_PORT ?? 5433),
    logLevel: e.LOG_LEVEL ?? 'info',
    storage: {
      driver: e.STORAGE_DRIVER ?? 'disk',
      dir: e.STORAGE_DIR ?? `${dataDir}/media`,
      signingKey: e.STORAGE_SIGNING_KEY ? parseCredentialsKey(e.STORAGE_SIGNING_KEY, 'STORAGE_SIGNING_KEY') : undefined,
      s3: {
        endpoint: e.S3_ENDPOINT?.replace(/\/+$/, ''),
        region: e.S3_REGION ?? 'us-east-1',
        bucket: e.S3_BUCKET,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        // Custom endpoints (SeaweedFS, MinIO) rarely resolve bucket subdomains; AWS wants virtual-hosted.
        forcePathStyle: e.S3_FORCE_PATH_STYLE !== undefined ? isTrue(e.S3_FORCE_PATH_STYLE) : Boolean(e.S3_ENDPOINT),
      },
    },
    platforms: Object.fromEntries(PLATFORM_SETTINGS.filter((k) => picked[k]).map((k) => [k, picked[k]!])),
    vision: e.VISION_API_URL ? { url: e.VISION_API_URL, model: e.VISION_MODEL ?? 'gpt-4o-mini', apiKey: e.VISION_API_KEY } : undefined,
    outbound: { allowPrivate: isTrue(e.OUTBOUND_ALLOW_PRIVATE) },
    generate: e.GENERATE_API_URL
      ? {
          url: chatCompletionsUrl(e.GENERATE_API_URL),
          model: e.GENERATE_MODEL ?? 'gpt-4o-mini',
          apiKey: e.GENERATE_API_KEY,
          timeoutMs: Number(e.GENERATE_TIMEOUT_MS ?? 30_000),
        }
      : undefined,
    mcp: { apiUrl: (e.POSTPILOT_API_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''), apiKey: e.POSTPILOT_API_KEY },
    mail: e.SMTP_URL ? { url: e.SMTP_URL, from: e.MAIL_FROM ?? 'Postpilot <no-reply@localhost>' } : undefined,
    media: { ffmpegPath: e.FFMPEG_PATH, ffprobePath: e.FFPROBE_PATH },
  };
}
