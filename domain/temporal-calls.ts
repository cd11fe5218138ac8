// Temporal calls made while an HTTP request waits (a workflow start, an Update). Without a bound,
// the SDK retries an unreachable server for ~20 s and an Update with no worker polling waits on,
// all that time holding the request and a pool connection. Here every such call has a
// deadline (TEMPORAL_REQUEST_TIMEOUT_MS), and an outage becomes a 503 with the spec's error body.
import {
  ApplicationFailure,
  isGrpcServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
  type Client,
  type UpdateDefinition,
} from '@temporalio/client';
import { ApiError } from '../lib/errors.ts';

export const DEFAULT_TEMPORAL_REQUEST_TIMEOUT_MS = 5000;
/** What the 503 asks clients to wait before retrying. */
export const TEMPORAL_RETRY_AFTER_SECONDS = 5;

export interface TemporalDeps {
  client: Client;
  taskQueue: string;
  /** Deadline of each Temporal call made inside a request; DEFAULT_TEMPORAL_REQUEST_TIMEOUT_MS if unset. */
  requestTimeoutMs?: number;
}

/** gRPC statuses that mean "not now": UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, CANCELLED. */
const OUTAGE_CODES = new Set([14, 4, 8, 1]);

class TemporalTimeout extends Error {
  override name = 'TemporalTimeout';
}

/** The Temporal service is unreachable, overloaded, or did not answer in time (no worker, for an Update). */
export function isTemporalOutage(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof TemporalTimeout || e instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
    if (isGrpcServiceError(e) && OUTAGE_CODES.has(e.code)) return true;
  }
  return false;
}

/**
 * The 503 for an outage: code internal_error (SPEC.md §7 has no other), a Retry-After header, and
 * no gRPC text. The cause goes to the log line of the request (http/errors.ts), never to the client.
 */
export function temporalUnavailable(message: string, cause: unknown): ApiError {
  return Object.assign(
    new ApiError('internal_error', message, { headers: { 'retry-after': String(TEMPORAL_RETRY_AFTER_SECONDS) }, status: 503 }),
    {
      cause,
    },
  );
}

/**
 * Runs `fn` (Temporal calls only) with every gRPC call under one deadline, and gives up at that
 * deadline even when the SDK has a retry pending (its backoff can sleep past the deadline).
 */
export async function withTemporalDeadline<T>(temporal: TemporalDeps, fn: () => Promise<T>): Promise<T> {
  const ms = temporal.requestTimeoutMs ?? DEFAULT_TEMPORAL_REQUEST_TIMEOUT_MS;
  const call = temporal.client.withDeadline(Date.now() + ms, fn);
  call.catch(() => {}); // it may settle after the timer has already answered
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TemporalTimeout(`Temporal did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Best effort, bounded, not awaited: the request's answer does not wait for it. */
export function terminateInBackground(temporal: TemporalDeps, workflowId: string, reason: string): void {
  void withTemporalDeadline(temporal, () => temporal.client.workflow.getHandle(workflowId).terminate(reason)).catch(() => {});
}

/**
 * Sends a workflow Update (its definition from the workflow's contract) and waits for its result.
 * An outage (including no worker polling, which the server only shows as a timeout) → 503 with
 * `unavailable` as its message; other failures are thrown for the caller to map (a refused
 * Update: updateFailureType; a finished workflow: WorkflowNotFoundError).
 *
 * bound 'all': the whole call is within the deadline (a quick handler: an edit).
 * bound 'acceptance': only reaching a worker is (the validator has run, the Update is accepted);
 * the handler's own work may then take as long as it takes (processing an upload), and only an
 * outage while waiting for it ends the wait early.
 */
export async function executeUpdateInRequest<Ret, Args extends unknown[]>(
  temporal: TemporalDeps,
  workflowId: string,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  unavailable: string,
  bound: 'all' | 'acceptance' = 'all',
): Promise<Ret> {
  const handle = temporal.client.workflow.getHandle(workflowId);
  // The SDK's overloads tell Updates with and without arguments apart; one path serves both here.
  const def = update as unknown as UpdateDefinition<Ret, [unknown]>;
  const updateArgs = args as unknown as [unknown];
  try {
    if (bound === 'all') return await withTemporalDeadline(temporal, () => handle.executeUpdate(def, { args: updateArgs }));
    const accepted = await withTemporalDeadline(temporal, () =>
      handle.startUpdate(def, { args: updateArgs, waitForStage: WorkflowUpdateStage.ACCEPTED }),
    );
    return await accepted.result();
  } catch (err) {
    if (isTemporalOutage(err)) throw temporalUnavailable(unavailable, err);
    throw err;
  }
}

/** The type (ApplicationFailure.type, the contract's *FAILURE) of an Update its workflow refused or failed. */
export function updateFailureType(err: unknown): string | undefined {
  return err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure ? (err.cause.type ?? undefined) : undefined;
}

/**
 * A workflow's result when it comes within `ms`, else undefined (also when it cannot be read
 * now): for a request that answers at once with the outcome when the work is quick, and with
 * "under way" (202) when it is not. Never throws; the wait ends at `ms` whatever Temporal does.
 */
export async function resultWithin<T>(temporal: TemporalDeps, workflowId: string, ms: number): Promise<T | undefined> {
  const call = temporal.client.withDeadline(Date.now() + ms, () => temporal.client.workflow.getHandle(workflowId).result() as Promise<T>);
  const quiet = call.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([quiet, late]);
  } finally {
    clearTimeout(timer);
  }
}
