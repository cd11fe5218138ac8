// The one guard for outbound calls to hosts a tenant chose (a Mastodon instance, a Bluesky PDS,
// later webhook URLs and media fetched by URL; DESIGN.md §7, docs/decisions.md "Outbound
// addresses"). The name is resolved once, every address it resolves to is checked, and the
// connection is made to a checked address itself, so a DNS answer that changes between the check
// and the connect (rebinding) cannot send the request elsewhere. https keeps SNI and the
// certificate check on the hostname (Bun's fetch `tls.serverName`). Redirects are never followed.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export interface OutboundPolicy {
  /**
   * Lets loopback, private (RFC 1918), shared (CGNAT) and unique-local addresses through
   * (OUTBOUND_ALLOW_PRIVATE), for an instance on the self-hoster's own network. Link-local
   * (cloud metadata), unspecified, multicast, broadcast and reserved addresses stay refused.
   */
  allowPrivate: boolean;
}

/** Every address a hostname resolves to (one lookup per request). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface OutboundOptions extends OutboundPolicy {
  /** Defaults to the system resolver (getaddrinfo, so /etc/hosts counts). */
  resolve?: Resolver;
  /** The transport underneath the guard; defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** The policy when nothing says otherwise: production's. */
export const DEFAULT_OUTBOUND: OutboundPolicy = { allowPrivate: false };

export type RefusalKind = 'scheme' | 'address' | 'redirect';

/** A request the guard will not make. Callers turn it into a 422 (channel form) or a permanent failure (publish). */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  readonly code = 'outbound_refused';
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
  }
}

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'unique-local'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/** Classes OUTBOUND_ALLOW_PRIVATE opens; every other non-public class is always refused. */
const PRIVATE_CLASSES = new Set<AddressClass>(['loopback', 'private', 'shared', 'unique-local']);

const DESCRIBE: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private-network address',
  shared: 'a shared (carrier-grade NAT) address',
  'unique-local': 'a unique-local IPv6 address',
  'link-local': 'a link-local address (where cloud metadata services answer)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved (special-purpose) address',
};

// IANA special-purpose IPv4 blocks (RFC 6890 and successors), most specific first.
const V4_BLOCKS: [string, number, Exclude<AddressClass, 'public'>][] = [
  ['0.0.0.0', 32, 'unspecified'],
  ['0.0.0.0', 8, 'reserved'], // "this network": Linux connects 0.x to the local host
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** Dotted-quad IPv4 (the only form DNS answers and WHATWG URL hostnames use) → 32-bit number. */
function parseV4(s: string): number | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    n = n * 256 + Number(p);
  }
  return n;
}

function v4Class(n: number): AddressClass {
  for (const [base, bits, cls] of V4_BLOCKS) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === parseV4(base)) return cls;
  }
  return 'public';
}

/** IPv6 text (with ::, an embedded dotted quad, a zone id) → eight 16-bit groups. */
function parseV6(s: string): number[] | null {
  let text = s
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .toLowerCase();
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    const n = parseV4(tail[1]!);
    if (n === null) return null;
    text = `${text.slice(0, -tail[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h ? h.split(':') : []);
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

function v6Class(g: number[]): AddressClass {
  const v4At = (i: number) => v4Class(((g[i]! << 16) >>> 0) + g[i + 1]!);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  if (zeros(0, 5) && g[5] === 0xffff) return v4At(6); // IPv4-mapped ::ffff:a.b.c.d
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4At(6); // IPv4-translated ::ffff:0:a.b.c.d
  if (zeros(0, 6)) return v4At(6); // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4At(6); // NAT64 64:ff9b::/96 reaches the embedded IPv4
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'private'; // local-use NAT64 64:ff9b:1::/48
  if (g[0] === 0x2002) return v4At(1); // 6to4 2002:aabb:ccdd::/48 carries an IPv4
  if (g[0] === 0x2001 && g[1] === 0) return 'reserved'; // Teredo
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'reserved'; // documentation
  if (g[0] === 0x100 && zeros(1, 4)) return 'reserved'; // discard-only 100::/64
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique-local'; // fc00::/7
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if ((g[0]! & 0xffc0) === 0xfec0) return 'private'; // site-local fec0::/10 (deprecated)
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  return 'public';
}

/** What kind of address an IP literal is; anything that does not parse counts as reserved. */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseV4(ip);
  if (v4 !== null) return v4Class(v4);
  const v6 = parseV6(ip);
  return v6 ? v6Class(v6) : 'reserved';
}

/** Why the policy refuses this address, or null when it may be contacted. */
export function addressRefusal(ip: string, policy: OutboundPolicy): string | null {
  const cls = classifyAddress(ip);
  if (cls === 'public' || (policy.allowPrivate && PRIVATE_CLASSES.has(cls))) return null;
  return DESCRIBE[cls];
}

const systemResolve: Resolver = async (hostname) => (await lookup(hostname, { all: true })).map((a) => a.address);

export interface CheckedUrl {
  url: URL;
  /** The checked addresses, in the resolver's order; the request connects to one of these. */
  addresses: string[];
}

/**
 * Parses and checks a tenant-chosen URL: http(s) only, and every address its host resolves to
 * must pass the policy. Throws OutboundRefusedError when refused; a name that does not resolve
 * throws the resolver's own error (a network failure, not a refusal).
 */
export async function checkOutboundUrl(
  raw: string | URL,
  opts: OutboundPolicy & { resolve?: Resolver },
  signal?: AbortSignal,
): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusedError('scheme', `${String(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundRefusedError('scheme', `${url.protocol}// addresses are refused; use an http(s) URL`);
  }
  // WHATWG URL parsing already turned decimal, octal and hex IPv4 forms into dotted quads.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(literal) ? [literal] : await resolveWithin(opts.resolve ?? systemResolve, literal, signal);
  if (!addresses.length) throw Object.assign(new Error(`${literal} did not resolve to any address`), { code: 'ENOTFOUND' });
  // Every answer must pass: connecting to a checked one is then safe whichever is used.
  for (const address of addresses) {
    const why = addressRefusal(address, opts);
    if (why) {
      const hint = PRIVATE_CLASSES.has(classifyAddress(address))
        ? ' (a self-hosted service can allow private addresses with OUTBOUND_ALLOW_PRIVATE=true)'
        : '';
      const what = address === literal ? `${url.host} is` : `${url.host} resolves to ${address}, which is`;
      throw new OutboundRefusedError('address', `${what} ${why}; this service does not connect there${hint}`);
    }
  }
  return { url, addresses };
}

function resolveWithin(resolve: Resolver, hostname: string, signal?: AbortSignal): Promise<string[]> {
  if (!signal) return resolve(hostname);
  signal.throwIfAborted();
  return new Promise((ok, fail) => {
    const onAbort = () => fail(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    resolve(hostname)
      .then(ok, fail)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Connect errors after which no byte of the request left: the next checked address may be tried. */
const UNREACHED = new Set(['ConnectionRefused', 'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'FailedToOpenSocket']);

/**
 * A fetch for tenant-chosen hosts. Same signature as fetch; throws OutboundRefusedError for a
 * refused scheme or address and for any redirect (never followed: a caller that passes
 * `redirect: 'manual'` gets the 3xx answer instead).
 */
export function createOutboundFetch(opts: OutboundOptions): typeof fetch {
  const transport = opts.fetch ?? fetch;
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = input instanceof Request ? new Request(input, init) : new Request(String(input), init);
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
    const { url, addresses } = await checkOutboundUrl(req.url, opts, signal);
    const headers = new Headers(req.headers);
    headers.set('host', url.host);
    // Buffered once, so the same bytes can go to the next address when the first refuses the connection.
    const body = req.body ? await req.blob() : undefined;
    const https = url.protocol === 'https:';
    const named = !isIP(url.hostname.replace(/^\[|\]$/g, ''));
    let res: Response | undefined;
    for (const [i, address] of addresses.entries()) {
      const dial = new URL(url);
      dial.hostname = address.includes(':') ? `[${address}]` : address;
      try {
        res = await transport(dial, {
          method: req.method,
          headers,
          body,
          signal,
          redirect: 'manual',
          // SNI and the certificate's name stay the hostname although the URL names the address.
          ...(https && named ? { tls: { serverName: url.hostname.replace(/\.$/, '') } } : {}),
        } as RequestInit);
        break;
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        if (i === addresses.length - 1 || typeof code !== 'string' || !UNREACHED.has(code) || signal?.aborted) throw err;
      }
    }
    if (res!.status >= 300 && res!.status < 400 && res!.headers.has('location') && req.redirect !== 'manual') {
      await res!.body?.cancel().catch(() => {});
      const to = safeLocation(res!.headers.get('location')!, url);
      throw new OutboundRefusedError(
        'redirect',
        `${url.origin} answered ${res!.status} with a redirect${to ? ` to ${to}` : ''}; redirects are not followed, so enter the final address`,
      );
    }
    return res!;
  };
  return guarded as typeof fetch;
}

/** The redirect target's origin only (its path and query may carry anything). */
function safeLocation(location: string, base: URL): string | null {
  try {
    return new URL(location, base).origin;
  } catch {
    return null;
  }
}

/** An answer's body past the size its reader takes; `declared` when Content-Length said so before any byte was read. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
  constructor(
    readonly limitBytes: number,
    readonly declared: number | null,
  ) {
    super(`the answer is larger than ${limitBytes} bytes`);
  }
}

/**
 * An answer's body, refused (BodyTooLargeError, the stream cancelled) at a declared length over
 * `max` or at the first byte past it, so a tenant's host can never make the process hold more.
 */
export async function readBodyUpTo(res: Response, max: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'));
  if (res.headers.has('content-length') && Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(max, declared);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body ?? []) {
    total += chunk.byteLength;
    if (total > max) {
      await res.body?.cancel().catch(() => {});
      throw new BodyTooLargeError(max, null);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
