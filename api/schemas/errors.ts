// The error body (SPEC.md §7) and its codes, as the API answers them.
import { t } from 'elysia';
import { ERROR_STATUS, WEB_ONLY_CODES, type ApiErrorCode, type ErrorCode } from '../../lib/errors.ts';
import { strict } from './primitives.ts';

export const ERROR_CODES = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
  (c): c is ApiErrorCode => !(WEB_ONLY_CODES as readonly string[]).includes(c),
);

export const ErrorSchema = t.Object(
  {
    error: t.Object(
      {
        code: t.Union(
          ERROR_CODES.map((c) => t.Literal(c)),
          { description: 'Machine-readable error code (SPEC.md §7, docs/decisions.md).' },
        ),
        message: t.String({ description: 'Human-readable, safe to show to a user.' }),
        details: t.Optional(
          t.Record(t.String(), t.Unknown(), {
            description:
              'Depends on the code: `fields: [{path, message}]` for validation_failed, `requiredScope` for forbidden_scope, `resetsAt` for rate_limited and quota_exceeded, `channelIds`, `postId`, `limit`/`used`…',
          }),
        ),
      },
      strict,
    ),
  },
  strict,
);
