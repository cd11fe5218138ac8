// A webhook endpoint that accepts every event and keeps it, by the path it was sent to (tests give
// each of their endpoints a path of its own). With `secret`, each request is verified first with
// the official `standardwebhooks` package (a request that does not verify is a 400 and not kept).
import { Webhook } from 'standardwebhooks';

export interface ReceivedEvent {
  path: string;
  type: string;
  data: Record<string, any>;
}

export function startEventReceiver(opts: { secret?: () => string } = {}) {
  const events: ReceivedEvent[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const text = await req.text();
      let body: { type: string; data: Record<string, any> };
      try {
        body = (opts.secret ? new Webhook(opts.secret()).verify(text, Object.fromEntries(req.headers)) : JSON.parse(text)) as typeof body;
      } catch {
        return new Response('not verified', { status: 400 });
      }
      events.push({ path: new URL(req.url).pathname, type: body.type, data: body.data });
      return new Response('ok');
    },
  });
  return { port: server.port, events, stop: () => server.stop(true) };
}
