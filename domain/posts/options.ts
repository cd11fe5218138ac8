// Per-platform post options (platforms/options.ts): the checks a post's options get with its
// channels.
//
// Rules:
// - Each key of `options` is the lower-case name of a target channel's platform: options for a
//   platform the post does not go to are refused at `options.<platform>`, as a stray
//   contentByPlatform key is.
import type { IChannel } from '../../db/entities/index.ts';
import type { FieldError } from '../../lib/errors.ts';
import type { PlatformOptions } from '../../platforms/options.ts';

export function optionProblems(channels: Pick<IChannel, 'platform'>[], options: PlatformOptions): FieldError[] {
  const targeted = new Set(channels.map((c) => c.platform.toLowerCase()));
  return Object.keys(options)
    .filter((platform) => !targeted.has(platform))
    .map((platform) => ({ path: `options.${platform}`, message: 'no target channel is on this platform' }));
}
