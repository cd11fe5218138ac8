// What a route of /v1 says about itself for the OpenAPI document, beyond its TypeBox schemas:
// declared in its route file's table (api/routes/posts.ts POST_OPERATIONS, …) and attached with
// `operation: POST_OPERATIONS.x` (api/auth.ts's macro, which also sets the route's `detail` and
// its access check from the same entry), read back from `app.routes`.
import type { DocumentDecoration } from 'elysia';
import type { ApiErrorCode as ErrorCode } from '../../lib/errors.ts';
import type { Action } from '../../domain/access.ts';
import type { AuditTarget } from '../../domain/audit.ts';

export type Tag =
  | 'Account'
  | 'Channels'
  | 'Posts'
  | 'Tags'
  | 'Comments'
  | 'Analytics'
  | 'Media'
  | 'Webhooks'
  | 'Feeds'
  | 'Generate'
  | 'Audit';

/** Extra keywords merged into one generated schema (a parameter's, or a body field's). */
export type SchemaPatch = Record<string, unknown>;

export interface OperationDoc {
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /**
   * What the route does (domain/access.ts): the auth macro requires its scope and, for a key made
   * by a member, a role that may; the document shows both (x-required-scope, x-action, x-roles).
   */
  action: Action;
  /**
   * Its audit event (domain/audit.ts), for an operation that is not a GET: the action and resource
   * type; `from`: the field of the answer holding the new resource, when the answer is not the
   * resource itself; `detailsOf`: what the answer adds to the details; `changed`: false for an
   * answer that changed nothing (a batch whose every row was refused), which records no event.
   * null: changes nothing.
   */
  audit?:
    | (AuditTarget & {
        from?: string;
        detailsOf?: (answer: unknown) => Record<string, unknown>;
        changed?: (answer: unknown) => boolean;
      })
    | null;
  /** The largest JSON body the route reads (POST /v1/posts/bulk); MAX_JSON_BODY_BYTES otherwise. */
  maxBodyBytes?: number;
  /**
   * Error codes this route answers with besides those of every authenticated request
   * (unauthorized, forbidden_scope, plan_required, rate_limited, quota_exceeded, internal_error).
   */
  errors?: ErrorCode[];
  /** When an error code happens on this route, where it differs from the general description. */
  errorNotes?: Partial<Record<ErrorCode, string>>;
  /** The success status (default 200) and what it means. */
  success?: { status?: number; description: string; location?: boolean };
  /** The route honours the Idempotency-Key header. */
  idempotent?: boolean;
  /** The route starts or signals a Temporal workflow (its 503 says so). */
  temporal?: boolean;
  /**
   * The route calls the operator's model endpoint (services/generate.ts): its 501 says which
   * settings are missing, its 503 that the endpoint failed.
   */
  generator?: { settings: string[] };
  /** Description (string) or schema keywords per path parameter / query parameter / body field. */
  params?: Record<string, string | SchemaPatch>;
  query?: Record<string, string | SchemaPatch>;
  /** `schema`: keywords of the whole body (rules that tie fields together, e.g. a size limit per type). */
  body?: { name: string; description?: string; fields?: Record<string, string | SchemaPatch>; schema?: SchemaPatch };
  /** The body's media type when not JSON (`text/csv`: POST /v1/posts/import). */
  bodyMediaType?: string;
  /** The success answer's media type when not JSON (`text/csv`: GET /v1/posts/export). */
  successMediaType?: string;
}

export const OPERATION_DOC = 'x-postpilot-operation';

/** The route's `detail`: summary, tags and operationId as Elysia expects them, plus ours. */
export function doc(op: OperationDoc): DocumentDecoration {
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    ...(op.description ? { description: op.description } : {}),
    [OPERATION_DOC]: op,
  } as DocumentDecoration;
}

export function operationDoc(detail: unknown): OperationDoc | undefined {
  return (detail as Record<string, unknown> | undefined)?.[OPERATION_DOC] as OperationDoc | undefined;
}
