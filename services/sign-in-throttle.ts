// The sign-in throttle: failed attempts are counted per (email, client address) and per client
// address, in Postgres (table sign_in_attempts), so every API process shares one count and nobody
// can lock a user out from elsewhere — failures from one address never block the same email
// from another. Limits and reasons: docs/decisions.md ("Signing in").
//
// Each attempt reserves its place in both counters before the password is checked (a conditional
// upsert under the row's lock), so concurrent guesses cannot slip past a limit; a successful
// sign-in gives its place back and clears its (email, address) count.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.ts';

export const SIGN_IN_LIMITS = {
  /** Failed attempts for one email from one address per window. */
  perEmailAndAddress: 10,
  /** Failed attempts from one address, over all emails, per window. */
  perAddress: 50,
  windowMs: 15 * 60 * 1000,
} as const;

export type SignInDecision = { allowed: true } | { allowed: false; retryAt: Date };

/** Counters are per address; an unknown one (no socket, e.g. app.handle in tests) shares one. */
export const UNKNOWN_ADDRESS = 'unknown';

function keysFor(email: string, address: string) {
  const who = createHash('sha256').update(email).digest('hex'); // no plain addresses of strangers at rest
  return { pair: `pair:${who}:${address}`, address: `addr:${address}` };
}

/** Thrown inside the transaction to roll back what it had counted. */
class Full {
  constructor(readonly retryAt: Date) {}
}

/**
 * Counts this attempt, or refuses it (nothing counted) when the (email, address) or the address
 * counter is full. `email` is the normalized email.
 */
export async function beginSignIn(em: EntityManager, email: string, address: string, now: Date): Promise<SignInDecision> {
  const keys = keysFor(email, address);
  const windowEnd = new Date(now.getTime() + SIGN_IN_LIMITS.windowMs);
  try {
    await em.fork().transactional(async (tx) => {
      for (const [key, limit] of [
        [keys.pair, SIGN_IN_LIMITS.perEmailAndAddress],
        [keys.address, SIGN_IN_LIMITS.perAddress],
      ] as const) {
        // A window that has ended starts over; a full one is not updated (no row returned).
        const counted = await sql<{ key: string }>(
          tx,
          `insert into sign_in_attempts (key, failures, window_ends_at) values (?, 1, ?)
           on conflict (key) do update set
             failures = case when sign_in_attempts.window_ends_at <= ? then 1 else sign_in_attempts.failures + 1 end,
             window_ends_at = case when sign_in_attempts.window_ends_at <= ? then excluded.window_ends_at else sign_in_attempts.window_ends_at end
           where sign_in_attempts.window_ends_at <= ? or sign_in_attempts.failures < ?
           returning key`,
          [key, windowEnd, now, now, now, limit],
        );
        if (counted.length === 0) {
          const [row] = await sql<{ window_ends_at: Date }>(tx, 'select window_ends_at from sign_in_attempts where key = ?', [key]);
          throw new Full(new Date(row!.window_ends_at));
        }
      }
      // Forget windows that ended long ago (a few per attempt: no scheduler needed).
      await sql(tx, `delete from sign_in_attempts where key in (select key from sign_in_attempts where window_ends_at < ? limit 20)`, [
        new Date(now.getTime() - SIGN_IN_LIMITS.windowMs),
      ]);
    });
  } catch (err) {
    if (err instanceof Full) return { allowed: false, retryAt: err.retryAt };
    throw err;
  }
  return { allowed: true };
}

/** The password was right: this attempt was no failure, and the (email, address) count starts over. */
export async function signInSucceeded(em: EntityManager, email: string, address: string): Promise<void> {
  const keys = keysFor(email, address);
  const fresh = em.fork();
  await sql(fresh, 'delete from sign_in_attempts where key = ?', [keys.pair]);
  await sql(fresh, 'update sign_in_attempts set failures = failures - 1 where key = ? and failures > 0', [keys.address]);
}

/**
 * The client's address: the socket's peer, or — when `trustProxyHops` proxies are trusted
 * (TRUST_PROXY) — the X-Forwarded-For entry that many hops from the right (the address the
 * outermost trusted proxy saw; entries further left are the client's own claims). IPv6 addresses
 * count per /64, the block one subscriber usually holds.
 */
export function clientAddress(request: Request, socketAddress: string | null | undefined, trustProxyHops: number): string {
  const address = requestAddress(request, socketAddress, trustProxyHops);
  return normalizeAddress(address) ?? (socketAddress ? normalizeAddress(socketAddress) : null) ?? UNKNOWN_ADDRESS;
}

/** The address clientAddress starts from, as given (a /64 is not made of it): the socket's peer or the trusted X-Forwarded-For entry. */
export function requestAddress(request: Request, socketAddress: string | null | undefined, trustProxyHops: number): string | null {
  if (trustProxyHops > 0) {
    const forwarded = (request.headers.get('x-forwarded-for') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (forwarded.length) return forwarded[Math.max(0, forwarded.length - trustProxyHops)]!;
  }
  return socketAddress ?? null;
}

export function normalizeAddress(raw: string | null): string | null {
  if (!raw) return null;
  let a = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a); // [v6]:port
  if (bracketed) a = bracketed[1]!;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':')); // v4:port
  a = a.replace(/%.*$/, ''); // zone id
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(a);
  if (mapped) a = mapped[1]!;
  const version = isIP(a);
  if (version === 4) return a;
  if (version !== 6) return null;
  return `${expandV6(a).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandV6(a: string): string[] {
  let text = a.toLowerCase();
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text); // trailing dotted quad
  if (v4) {
    const [b1, b2, b3, b4] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((b1 << 8) | b2).toString(16)}:${((b3 << 8) | b4).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => parseInt(g, 16).toString(16));
}
