// Elysia reads the source of every hook to decide what it builds for each request. A hook that
// hands its whole context on (or spreads it) makes every request of the app parse its cookies,
// copy its headers and parse its query, wanted or not; this holds the app to hooks that name what
// they read (server/app.ts).
import { expect, test } from 'bun:test';
import { createApp } from '../server/app.ts';

test('no hook of the app makes every request parse its cookies, headers, query or body', () => {
  const app = createApp({ orm: {} as never, temporal: {} as never });
  expect((app as unknown as { inference: Record<string, boolean> }).inference).toMatchObject({
    body: false,
    cookie: false,
    headers: false,
    query: false,
    url: false,
    path: false,
  });
});
