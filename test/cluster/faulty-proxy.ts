// A proxy in front of a platform fake for the chaos test (test/cluster/chaos.ts): the fake keeps
// speaking its platform's HTTP contract and counting what it received, the proxy makes it slow or
// flaky the way a platform is under load.
//  - slow: the fake has accepted the request (the post exists) and the answer takes `delayMs`
//    longer — the window in which a killed worker leaves a post out with its answer lost;
//  - flaky: every `failEvery`-th matching request is answered 503 before it reaches the fake (a
//    transient outage at the platform's edge; nothing was created).
// It also records, for every matching request it forwarded, whether the client was still there
// when the fake's answer came back: one that was not (a killed worker, a timeout) lost the answer
// to a request the platform may have carried out, the one case in which a re-send is expected.

/** A matching request forwarded to the fake, and what became of its answer. */
export interface Exchange {
  body: string;
  answeredAt: number;
  /** false: the client had gone (connection closed, request aborted) before the answer. */
  delivered: boolean;
}

export interface FaultyProxy {
  url: string;
  /** Matching requests forwarded to the fake and not yet answered. */
  inFlight: () => number;
  /** Matching requests refused with 503 so far. */
  refused: () => number;
  exchanges: Exchange[];
  stop: () => Promise<void>;
}

export function startFaultyProxy(opts: {
  target: string;
  /** Which requests get the faults (the publish calls); others pass through untouched. */
  match: (method: string, path: string) => boolean;
  delayMs?: number;
  failEvery?: number;
  failBody?: unknown;
}): FaultyProxy {
  let inFlight = 0;
  let seen = 0;
  let refused = 0;
  const exchanges: Exchange[] = [];
  const target = new URL(opts.target);
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const faulty = opts.match(req.method, url.pathname);
      if (faulty && opts.failEvery && ++seen % opts.failEvery === 0) {
        refused++;
        return Response.json(opts.failBody ?? { message: 'Service Unavailable' }, { status: 503 });
      }
      const headers = new Headers(req.headers);
      headers.delete('host');
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
      if (faulty) inFlight++;
      try {
        const res = await fetch(new URL(url.pathname + url.search, target), { method: req.method, headers, body, redirect: 'manual' });
        const bytes = await res.arrayBuffer();
        if (faulty && opts.delayMs) await Bun.sleep(opts.delayMs);
        if (faulty) {
          exchanges.push({ body: body ? new TextDecoder().decode(body) : '', answeredAt: Date.now(), delivered: !req.signal.aborted });
        }
        const out = new Headers(res.headers);
        out.delete('content-encoding');
        out.delete('content-length');
        out.delete('transfer-encoding');
        return new Response(bytes, { status: res.status, headers: out });
      } finally {
        if (faulty) inFlight--;
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    inFlight: () => inFlight,
    refused: () => refused,
    exchanges,
    stop: async () => void (await server.stop(true)),
  };
}
