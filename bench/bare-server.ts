// The ceiling of an HTTP figure: a bare Elysia route in a Bun process of its own, as the API's
// own process would serve it. Prints `listening <port>` once it listens.
import { Elysia } from 'elysia';

const app = new Elysia().get('/bare', () => ({ ok: true })).listen({ port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' });
console.log(`listening ${app.server!.port}`);
