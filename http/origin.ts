// Where a request came from, for the audit log (domain/audit.ts): the client's address (the
// socket's peer, or with TRUST_PROXY the trusted X-Forwarded-For entry, read as the sign-in
// throttle reads it) and its User-Agent.
import { isIP } from 'node:net';
import type { AuditOrigin } from '../domain/audit.ts';
import { requestAddress } from '../services/sign-in-throttle.ts';

/** Elysia's `server`: null under app.handle (most tests), where no socket exists. */
export type SocketServer = { requestIP(request: Request): { address: string } | null } | null | undefined;

export function requestOrigin(request: Request, server: SocketServer, trustProxyHops = 0): AuditOrigin {
  const socket = server?.requestIP(request)?.address ?? null;
  return {
    ip: plainAddress(requestAddress(request, socket, trustProxyHops)) ?? plainAddress(socket),
    userAgent: request.headers.get('user-agent'),
  };
}

/** An IP address without port or brackets (an IPv4-mapped IPv6 address as IPv4); anything else is null. */
function plainAddress(raw: string | null): string | null {
  if (!raw) return null;
  const a = raw
    .trim()
    .replace(/^\[([^\]]+)\](?::\d+)?$/, '$1')
    .replace(/^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/, '$1');
  const address = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(a)?.[1] ?? a;
  return isIP(address) ? address : null;
}
