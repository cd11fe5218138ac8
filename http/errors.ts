// The one place that turns any failure into the error body of SPEC.md §7 / DESIGN.md §3
// (the body itself: errorBody in lib/errors.ts, which services/ write too).
import { ApiError, ERROR_STATUS, errorBody, type ErrorBody, type FieldError } from '../lib/errors.ts';
import { isDatabaseUnavailable } from '../db/connection-errors.ts';
import { fieldErrors, type ValueProblem } from '../lib/schema-words.ts';

/** Seconds a client is asked to wait after a 503 for an unreachable database. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** TypeBox value errors (as Elysia's ValidationError exposes them) → `details.fields`. */
function validationFields(error: unknown): FieldError[] {
  const all = (error as { all?: ValueProblem[] }).all;
  if (!Array.isArray(all) || all.length === 0) return [{ path: '', message: 'invalid value' }];
  return fieldErrors(all);
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
  /** True when the failure is ours (logged with the request id). */
  unexpected: boolean;
}

export function mapError(code: string | number, error: unknown): MappedError {
  if (error instanceof ApiError) {
    // A 5xx of ours (an outage answered as 503) is logged with its cause, though its body is plain.
    return {
      status: error.status,
      body: errorBody(error.code, error.message, error.details),
      headers: error.headers,
      unexpected: error.status >= 500,
    };
  }
  switch (code) {
    case 'NOT_FOUND':
      return { status: 404, body: errorBody('not_found', 'No such route.'), unexpected: false };
    case 'PARSE':
      return {
        status: ERROR_STATUS.validation_failed,
        body: errorBody('validation_failed', 'The request body is not valid JSON.', { fields: [{ path: '', message: 'malformed JSON' }] }),
        unexpected: false,
      };
    case 'VALIDATION': {
      const fields = validationFields(error);
      return { status: 422, body: errorBody('validation_failed', 'The request is invalid.', { fields }), unexpected: false };
    }
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return { status: 422, body: errorBody('validation_failed', 'The request is invalid.'), unexpected: false };
  }
  const status = (error as { status?: unknown })?.status;
  if (status === 413 || code === 413) {
    // SPEC.md §7 has no code of its own for this; the status says it, the code stays in the enum.
    return { status: 413, body: errorBody('validation_failed', 'The request body is too large.'), unexpected: false };
  }
  if (isDatabaseUnavailable(error)) {
    // Postgres restarting or unreachable: say so (retryable), log it, and never show the driver's text.
    return {
      status: 503,
      body: errorBody('internal_error', 'The service is briefly unavailable. Retry shortly.'),
      headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
      unexpected: true,
    };
  }
  return {
    status: 500,
    body: errorBody('internal_error', 'Something went wrong on our side. Quote the request id when reporting it.'),
    unexpected: true,
  };
}
