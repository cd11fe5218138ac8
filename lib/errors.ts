// Domain errors carrying the public error code of SPEC.md §7 / DESIGN.md §3. The API's one
// onError handler turns them into `{error:{code,message,details?}}` with the matching status.
export const ERROR_STATUS = {
  unauthorized: 401,
  forbidden_scope: 403,
  forbidden_role: 403,
  plan_required: 403,
  limit_reached: 403,
  not_found: 404,
  reauth_required: 409,
  duplicate_post: 409,
  conflict: 409,
  validation_failed: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
/** The web application's own refusal of a member's role; the API (SPEC.md §7) never answers it. */
export const WEB_ONLY_CODES = ['forbidden_role'] as const;
/** The codes of the API's error body (SPEC.md §7). */
export type ApiErrorCode = Exclude<ErrorCode, (typeof WEB_ONLY_CODES)[number]>;

export interface FieldError {
  path: string;
  message: string;
}

export interface ApiErrorOptions {
  /** `error.details` of the body. */
  details?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** The HTTP status, when not the code's usual one. */
  status?: number;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.details = options.details;
    this.headers = options.headers;
    this.statusOverride = options.status;
  }
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  /** Overrides the code's usual status (413 uses validation_failed: SPEC.md has no code for it). */
  readonly statusOverride?: number;
  get status(): number {
    return this.statusOverride ?? ERROR_STATUS[this.code];
  }
}

export const errors = {
  unauthorized: (message = 'Missing or invalid API key.') => new ApiError('unauthorized', message),
  /** A member whose role does not allow the action (domain/access.ts). */
  forbiddenRole: (role: string, action: string) =>
    new ApiError('forbidden_role', `Your role in this organization (${role}) does not allow this (${action}).`, {
      details: { role, action },
    }),
  forbiddenScope: (scope: string) =>
    new ApiError('forbidden_scope', `This API key lacks the "${scope}" scope.`, { details: { requiredScope: scope } }),
  planRequired: (plan: string) =>
    new ApiError('plan_required', `The ${plan} plan has no API access. Upgrade to use the API.`, { details: { plan } }),
  notFound: (what = 'Resource') => new ApiError('not_found', `${what} not found.`),
  validation: (fields: FieldError[], message = 'The request is invalid.') =>
    new ApiError('validation_failed', message, { details: { fields } }),
  conflict: (message: string, details?: Record<string, unknown>) => new ApiError('conflict', message, { details }),
};

/** The error body of SPEC.md §7. http/errors.ts answers with it; the idempotency store keeps it. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export function errorBody(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { error: details ? { code, message, details } : { code, message } };
}
