// Telling "Postgres dropped or refused the connection" apart from errors of the query itself.
// Used to retry a statement on a fresh connection (db/orm.ts, services/rate-limit.ts) and to
// answer 503 instead of a bare 500 while the database is away (http/errors.ts).

/**
 * Server-declared ends of a session: admin_shutdown (pg_terminate_backend, a restart) and
 * crash_shutdown. The server sends them instead of running or committing the statement.
 */
const SESSION_ENDED_BY_SERVER = new Set(['57P01', '57P02']);
/** pg's messages for a client whose socket was already gone: the statement was never sent. */
const NEVER_SENT = /not queryable|Client was closed/i;
/** A socket that worked and then broke. */
const BROKEN = /Connection terminated|Connection ended unexpectedly/i;
const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE']);
/** Postgres cannot be reached or is not accepting connections (yet). */
const UNREACHABLE_CODES = new Set([
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
const UNREACHABLE = /timeout exceeded when trying to connect/i;

function some(err: unknown, test: (code: string, message: string) => boolean): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (test(typeof code === 'string' ? code : '', typeof message === 'string' ? message : '')) return true;
  }
  return false;
}

/**
 * A pooled connection that had worked turned out to be dead (its session was ended while it sat
 * idle). pg-pool discards such a client, so the next attempt gets a fresh connection. Failures
 * to open a connection are not this: Postgres is away, and retrying at once would not help.
 */
export function isStaleConnection(err: unknown): boolean {
  return some(
    err,
    (code, message) => SESSION_ENDED_BY_SERVER.has(code) || BROKEN_CODES.has(code) || NEVER_SENT.test(message) || BROKEN.test(message),
  );
}

/** ...and it is certain the statement did not take effect, so even a write may be sent again. */
export function isStaleBeforeEffect(err: unknown): boolean {
  return some(err, (code, message) => SESSION_ENDED_BY_SERVER.has(code) || NEVER_SENT.test(message));
}

/** Postgres is unreachable or dropped the connection: the request may succeed if retried shortly. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return isStaleConnection(err) || some(err, (code, message) => UNREACHABLE_CODES.has(code) || UNREACHABLE.test(message));
}
