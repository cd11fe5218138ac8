// The ceiling of an HTTP figure: a bare Elysia route in a Bun process of its own, as the API's
// own process would serve it. Prints `listening <port>` once it listens.
//   GET /bare            a small JSON object (the ceiling of GET /v1/me)
//   GET /bare-bytes/:n   n bytes of JSON made once (the ceiling of an answer of that size, e.g. a page)
import { Elysia } from 'elysia';

const bodies = new Map<number, Blob>();
const bytes = (n: number) => {
  let b = bodies.get(n);
  if (!b) bodies.set(n, (b = new Blob([JSON.stringify({ data: 'x'.repeat(Math.max(0, n - 11)) })])));
  return b;
};

const app = new Elysia()
  .get('/bare', () => ({ ok: true }))
  .get(
    '/bare-bytes/:n',
    ({ params }) => new Response(bytes(Number(params.n)), { headers: { 'content-type': 'application/json;charset=utf-8' } }),
  )
  .listen({ port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' });
console.log(`listening ${app.server!.port}`);
