// Each platform's API version in one place: the version a connector speaks, the setting that
// overrides it where the platform takes the version as a value we send (a header or a path
// segment the platform retires on a schedule), and the page where the platform documents its
// versions. Platforms whose version is a fixed part of every path (YouTube v3, X 2, TikTok v2,
// Pinterest v5) list it here with no setting: a new version there is a new connector, not a
// setting. docs/platforms.md ("Published contracts") shows this table.
import type { PlatformSetting } from '../lib/config.ts';
import type { Platform } from './catalog.ts';
import { PlatformError } from './types.ts';

export interface ApiVersion {
  /** The version the connector sends unless `setting` overrides it. */
  version: string;
  /** The setting (environment variable) that overrides it; null: fixed in the request paths. */
  setting: PlatformSetting | null;
  /** Where the platform documents its versions and when it retires them. */
  docs: string;
}

const GRAPH: ApiVersion = {
  // v26.0 is Graph's version of 29 July 2026; Meta serves each version for at least two years.
  version: 'v26.0',
  setting: 'META_GRAPH_API_VERSION',
  docs: 'https://developers.facebook.com/docs/graph-api/changelog/versions',
};

export const API_VERSIONS = {
  // LinkedIn-Version (YYYYMM): LinkedIn serves each monthly version for at least a year.
  LINKEDIN: {
    version: '202609',
    setting: 'LINKEDIN_API_VERSION',
    docs: 'https://learn.microsoft.com/en-us/linkedin/marketing/versioning',
  },
  FACEBOOK: GRAPH,
  INSTAGRAM: GRAPH,
  // v1.0 is the only Threads API version.
  THREADS: { version: 'v1.0', setting: null, docs: 'https://developers.facebook.com/docs/threads/reference' },
  YOUTUBE: { version: 'v3', setting: null, docs: 'https://developers.google.com/youtube/v3/docs' },
  X: { version: '2', setting: null, docs: 'https://docs.x.com/x-api/introduction' },
  TIKTOK: { version: 'v2', setting: null, docs: 'https://developers.tiktok.com/doc/content-posting-api-reference-direct-post' },
  PINTEREST: { version: 'v5', setting: null, docs: 'https://developers.pinterest.com/docs/api/v5/' },
  // Reddit's API is unversioned: https://www.reddit.com/dev/api/ is the one contract.
  REDDIT: null,
  MASTODON: null,
  BLUESKY: null,
  TELEGRAM: null,
  DISCORD: null,
} satisfies Record<Platform, ApiVersion | null>;

/** The version a platform's connector sends: the setting's value when set, else the default. */
export function apiVersionOf(platform: Platform, settings: Partial<Record<PlatformSetting, string>> = {}): string {
  const v: ApiVersion | null = API_VERSIONS[platform];
  if (!v) throw new Error(`${platform} has no API version`);
  return (v.setting && settings[v.setting]) || v.version;
}

/** platformCode of a refusal because the version sent is one the platform no longer serves. */
export const API_VERSION_RETIRED = 'api_version_retired';

/**
 * The platform no longer serves the version the connector sent (LinkedIn's 426
 * NONEXISTENT_VERSION, Graph's 2635): permanent until the setting names a current version, which
 * the message says.
 */
export function apiVersionRetired(platform: Platform, name: string, sent: string, detail: string, status?: number): PlatformError {
  const setting = (API_VERSIONS[platform] as ApiVersion | null)?.setting;
  const fix = setting ? `: set ${setting} to a current one` : '';
  return new PlatformError('permanent', `${name} no longer serves API version ${sent}${fix} (${detail})`, {
    status,
    platformCode: API_VERSION_RETIRED,
  });
}
