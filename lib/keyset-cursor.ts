// The opaque cursor of a list read newest first in keyset pages (the audit log, a feed's items):
// the last row's instant and id, as base64url JSON. Only what encodeKeyset writes decodes.
import { errors } from './errors.ts';

export function encodeKeyset(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');
}

/** The cursor's instant and id; `idPattern` is what the list's ids look like. A cursor this API did not write is a 422 at `cursor`. */
export function decodeKeyset(cursor: string, idPattern: RegExp): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at !== 'string' || typeof id !== 'string' || !idPattern.test(id)) throw new Error('bad');
    const when = new Date(at);
    // An instant Postgres can hold.
    const year = when.getUTCFullYear();
    if (Number.isNaN(year) || year < 1 || year > 9999) throw new Error('bad');
    return { at: when, id };
  } catch {
    throw errors.validation([{ path: 'cursor', message: 'is not a cursor returned by this API' }]);
  }
}
