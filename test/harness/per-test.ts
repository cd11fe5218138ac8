// Things a test starts for itself (a platform's fake, a local server) and that must not outlive
// it: `perTest(start)` returns `start` as is, and registers every thing it returns to be stopped
// after the test that started it, failed or not. `perTestServer()` does the same for plain
// `Bun.serve` servers.
import { afterEach } from 'bun:test';

interface Stoppable {
  stop(): unknown;
}

/** Registers one afterEach that ends, with `stop`, everything handed to the returned function during the test. */
function stoppedAfterEach<T>(stop: (thing: T) => unknown): (thing: T) => T {
  const started: T[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((thing) => stop(thing)));
  });
  return (thing) => {
    started.push(thing);
    return thing;
  };
}

/** `start`, with what it returns stopped after each test (registers one afterEach in the calling file). */
export function perTest<A extends unknown[], T extends Stoppable>(start: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  const keep = stoppedAfterEach<T>((s) => s.stop());
  return async (...args: A) => keep(await start(...args));
}

/**
 * A function that starts a `Bun.serve` server on a free port of 127.0.0.1 answering with `fetch`,
 * each server stopped after the test with its open connections dropped, so a request left
 * hanging does not hold the test up (registers one afterEach in the calling file).
 */
export function perTestServer() {
  const keep = stoppedAfterEach<Bun.Server<undefined>>((s) => s.stop(true));
  return (fetch: (req: Request) => Response | Promise<Response>) => keep(Bun.serve({ port: 0, hostname: '127.0.0.1', fetch }));
}
