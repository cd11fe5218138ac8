// A webhook endpoint that accepts every event and keeps it, by the path it was sent to (tests give
// each of their endpoints a path of its own).

export interface ReceivedEvent {
  path: string;
  type: string;
  data: Record<string, any>;
}

export function startEventReceiver() {
  const events: ReceivedEvent[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { type: string; data: Record<string, any> };
      events.push({ path: new URL(req.url).pathname, type: body.type, data: body.data });
      return new Response('ok');
    },
  });
  return { port: server.port, events, stop: () => server.stop(true) };
}
