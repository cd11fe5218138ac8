// Sends what services/idempotency.ts `idempotent()` returned — the first answer or its replay —
// with its status, Location and the Idempotent-Replayed header, the same way on every route.
import type { StoredResponse } from '../services/idempotency.ts';

export function answerStored(
  set: { status?: unknown; headers: Record<string, unknown> },
  result: StoredResponse & { replayed: boolean },
): unknown {
  set.status = result.status;
  if (result.location) set.headers.location = result.location;
  if (result.replayed) set.headers['idempotent-replayed'] = 'true';
  return result.body;
}
