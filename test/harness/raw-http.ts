// A bare HTTP/1.1 client over a TCP socket, for bodies no fetch() sends the way an attacker does:
// chunked without Content-Length (or with a declared one), written as fast as
// the server takes them, and stopped as soon as an answer arrives.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
  msToAnswer: number;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** The body: its first bytes, then `fillByte` until `totalBytes` (or the whole of `prefix`). */
  prefix?: string | Buffer;
  totalBytes?: number;
  fillByte?: number;
  /** Send this Content-Length instead of chunked framing (the body is then sent as declared). */
  contentLength?: number;
}

const CHUNK = 64 * 1024;

export function sendRaw(port: number, r: RawRequest): Promise<RawAnswer> {
  const prefix = typeof r.prefix === 'string' ? Buffer.from(r.prefix) : (r.prefix ?? Buffer.alloc(0));
  const total = r.totalBytes ?? prefix.length;
  const fill = Buffer.alloc(CHUNK, r.fillByte ?? 0x78);
  const chunked = r.contentLength === undefined;
  const head = [
    `${r.method} ${r.path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    chunked ? 'transfer-encoding: chunked' : `content-length: ${r.contentLength}`,
    ...Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');

  return new Promise<RawAnswer>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const started = performance.now();
    let received = Buffer.alloc(0);
    let answered: { ms: number } | undefined;
    let finished = false;
    let wake: (() => void) | undefined;
    const poke = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };

    const finish = (err?: Error, answer?: RawAnswer) => {
      if (finished) return;
      finished = true;
      sock.destroy();
      poke();
      if (err) reject(err);
      else resolve(answer!);
    };

    sock.on('data', (data: Buffer) => {
      if (!answered) answered = { ms: performance.now() - started };
      poke();
      received = Buffer.concat([received, data]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let body = received.subarray(end + 4);
      const length = headers.get('content-length');
      if (length !== undefined) {
        if (body.length < Number(length)) return;
        body = body.subarray(0, Number(length));
      } else if (headers.get('transfer-encoding') === 'chunked') {
        if (!body.includes('0\r\n\r\n')) return;
        const parts: Buffer[] = [];
        let at = 0;
        for (;;) {
          const eol = body.indexOf('\r\n', at);
          const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
          if (!size) break;
          parts.push(body.subarray(eol + 2, eol + 2 + size));
          at = eol + 2 + size + 2;
        }
        body = Buffer.concat(parts);
      }
      finish(undefined, {
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: body.toString('utf8'),
        msToAnswer: answered.ms,
      });
    });
    sock.on('error', (err) => {
      // A server that stops reading may reset the connection under a write: the answer counts.
      if (!answered) finish(err);
    });
    sock.on('close', () => finish(new Error(`connection closed before a complete answer (${received.length} bytes received)`)));
    sock.on('drain', poke);

    sock.once('connect', async () => {
      sock.write(head);
      let offset = 0;
      while (offset < total && !answered && !finished) {
        const n = Math.min(CHUNK, total - offset);
        let data: Buffer;
        if (offset < prefix.length) data = prefix.subarray(offset, Math.min(prefix.length, offset + n));
        else data = fill.subarray(0, n);
        offset += data.length;
        const ok = sock.write(chunked ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data);
        // Backpressure: wait until the server takes more (or answers).
        if (!ok) await new Promise<void>((w) => (wake = w));
      }
      if (!answered && !finished && chunked) sock.write('0\r\n\r\n');
    });
  });
}
