// The API's errors as classes: every refusal carries the error body's `code`, `message` and
// `details`, the HTTP status and the request id (the `X-Request-Id` answered; quote it when
// reporting a problem). One class per kind a caller handles differently.

/** What the API answered: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export class PostpilotError extends Error {
  override name = 'PostpilotError';
  constructor(
    message: string,
    /** The HTTP status; 0 when no answer came (the network). */
    readonly status: number,
    /** The error body's `code` (`validation_failed`, `not_found`, …). */
    readonly code: string,
    readonly details: Record<string, unknown> | undefined,
    /** The request's id, as the API answered it in `X-Request-Id`. */
    readonly requestId: string | undefined,
  ) {
    super(message);
  }
}

/** 401: the key is missing, unknown, expired or revoked. */
export class AuthenticationError extends PostpilotError {
  override name = 'AuthenticationError';
}

/** 403: the key lacks a scope, the plan a feature, or the member a role. */
export class PermissionError extends PostpilotError {
  override name = 'PermissionError';
}

/** 404. */
export class NotFoundError extends PostpilotError {
  override name = 'NotFoundError';
}

/** 409: the resource is not in a state that allows this, or an Idempotency-Key was reused with another body. */
export class ConflictError extends PostpilotError {
  override name = 'ConflictError';
}

/** 422: `details.fields` names each field refused (`{ path, message }`). */
export class ValidationError extends PostpilotError {
  override name = 'ValidationError';
  get fields(): { path: string; message: string }[] {
    return (this.details?.fields as { path: string; message: string }[] | undefined) ?? [];
  }
}

/** 429, after the client's retries: `retryAfterMs` is when the API said to come back. */
export class RateLimitError extends PostpilotError {
  override name = 'RateLimitError';
  retryAfterMs: number | undefined;
}

/** 503 (a service the API depends on is briefly unreachable) and other 5xx, after the client's retries. */
export class ServerError extends PostpilotError {
  override name = 'ServerError';
  retryAfterMs: number | undefined;
}

/** The request never got an answer (a refused connection, a reset, a timeout). */
export class ConnectionError extends PostpilotError {
  override name = 'ConnectionError';
}

const BY_STATUS: Record<number, typeof PostpilotError> = {
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  413: ValidationError,
  422: ValidationError,
  429: RateLimitError,
};

/** The error of an answer that is not a success. */
export function errorOf(status: number, body: unknown, requestId: string | undefined, retryAfterMs?: number): PostpilotError {
  const e = (body as ErrorBody | undefined)?.error;
  const code = typeof e?.code === 'string' ? e.code : `http_${status}`;
  const message = typeof e?.message === 'string' ? e.message : `HTTP ${status}`;
  const Kind = BY_STATUS[status] ?? (status >= 500 ? ServerError : PostpilotError);
  const err = new Kind(message, status, code, e?.details, requestId);
  if (err instanceof RateLimitError || err instanceof ServerError) err.retryAfterMs = retryAfterMs;
  return err;
}
