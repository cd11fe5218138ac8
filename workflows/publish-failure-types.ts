// Why a channel failed, in a form a program can act on (docs/decisions.md "Publishing"): the
// publish activity classifies the platform's refusal and puts the class in its
// ApplicationFailure's details; the post workflow hands it to recordChannelFailure, and the API
// shows it as the post channel's `errorCode` and `retryable`. Plain data (no imports), shared by
// the workflow, its activities, the database entity and the API. The codes are durable: stored
// in post_channels.error_code and documented to clients — add, never rename.

export const CHANNEL_ERROR_CODES = [
  'reauth_required',
  'rate_limited',
  'rejected_content',
  'media_rejected',
  'platform_unavailable',
  'may_have_posted',
  'unknown',
  'not_approved',
  'api_version_retired',
] as const;
export type ChannelErrorCode = (typeof CHANNEL_ERROR_CODES)[number];

/**
 * Whether POST /v1/posts/{id}/retry may succeed for a channel that failed with the code:
 * reauth_required once the channel is reconnected; rate_limited and platform_unavailable later;
 * may_have_posted after checking the platform (a retry looks the post up first where the
 * platform can); unknown because nothing says it cannot. The same request refused for its text
 * or its media is refused again. not_approved: the post's approval did not come in time
 * (domain/posts/approval.ts); a retry would publish it unapproved. api_version_retired once the
 * platform's version setting names a version it serves (platforms/api-versions.ts).
 */
export const RETRYABLE: Record<ChannelErrorCode, boolean> = {
  reauth_required: true,
  rate_limited: true,
  rejected_content: false,
  media_rejected: false,
  platform_unavailable: true,
  may_have_posted: true,
  unknown: true,
  not_approved: false,
  api_version_retired: true,
};

/** The class of a failure: the first item of a publish ApplicationFailure's `details`. */
export interface ChannelFailureClass {
  errorCode: ChannelErrorCode;
  retryable: boolean;
}

/** What recordChannelFailure stores for a failed channel. */
export interface ChannelFailure extends ChannelFailureClass {
  /** The human reason. */
  error: string;
}

export const failureClass = (errorCode: ChannelErrorCode): ChannelFailureClass => ({ errorCode, retryable: RETRYABLE[errorCode] });

/** The failure types the publish activities throw (the values of FAILURE in post-types.ts). */
const BY_FAILURE_TYPE: Record<string, ChannelErrorCode> = {
  ReauthRequired: 'reauth_required',
  PermanentPublishError: 'rejected_content',
  TransientPublishError: 'platform_unavailable',
};

/**
 * The class of an activity failure: its details when they carry one (a worker of this version),
 * else a guess from its type (a failure thrown without details, or by an older worker); `unknown`
 * for anything else (a timeout, an unexpected error).
 */
export function classOfFailure(type: string | null | undefined, details: readonly unknown[] | null | undefined): ChannelFailureClass {
  const given = details?.[0] as Partial<ChannelFailureClass> | null | undefined;
  const code = given?.errorCode;
  if (typeof code === 'string' && (CHANNEL_ERROR_CODES as readonly string[]).includes(code)) {
    return {
      errorCode: code as ChannelErrorCode,
      retryable: typeof given?.retryable === 'boolean' ? given.retryable : RETRYABLE[code as ChannelErrorCode],
    };
  }
  return failureClass((type && BY_FAILURE_TYPE[type]) || 'unknown');
}
