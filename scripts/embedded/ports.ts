import { createServer } from 'node:net';

/** True when nothing listens on host:port (we can bind it ourselves). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

export async function assertPortsFree(ports: Record<string, number>): Promise<void> {
  const busy: string[] = [];
  for (const [what, port] of Object.entries(ports)) if (!(await portIsFree(port))) busy.push(`${port} (${what})`);
  if (busy.length) {
    throw new Error(
      `port(s) already in use: ${busy.join(', ')}. Is another copy of the service running? ` +
        'Stop it, or choose other ports (PORT, EMBEDDED_PG_PORT, TEMPORAL_ADDRESS, TEMPORAL_UI_PORT).',
    );
  }
}
