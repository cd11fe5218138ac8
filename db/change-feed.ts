// What other sessions commit, told to this process's caches: one Postgres connection LISTENing on
// every channel a cache subscribes to (triggers NOTIFY them). Rules:
//
// 1. Kept only while up. A subscription is up once its LISTEN has run on the live connection. When
//    the connection is lost, every subscription is down and reset (its cache drops everything:
//    the notifications until the next connection are missed); the feed connects again every second.
// 2. The barrier (sync). A statement on the LISTEN connection: Postgres sends a session the
//    notifications it holds for it before that statement's answer, and a committing session
//    signals the listeners before its commit is answered. So once sync() resolves true, every
//    change committed before it was called has been delivered. A call made while one is in flight
//    waits for the next one (the one in flight may have been sent before the change committed);
//    the calls that wait together share it, and barriers are at least BARRIER_GAP_MS apart, so
//    under load one statement answers many requests (each waits at most the gap and a round
//    trip). False when the feed is down.
// 3. A payload reaches the subscriptions of its channel, in the order Postgres sends them.
import pgDriver from 'pg';

export interface ChangeHandlers {
  /** A change announced on the channel (its payload, as the trigger wrote it). */
  change(payload: string): void;
  /** Everything kept must go: the feed lost its connection or connected again. */
  reset(): void;
}

export interface Subscription {
  /** Whether the cache may keep what it reads now. */
  up(): boolean;
  /** Settles once the first attempt to listen has ended (up, or retrying). */
  ready: Promise<void>;
  /** The barrier (rule 2). */
  sync(): Promise<boolean>;
  close(): void;
}

export interface ChangeFeed {
  listen(channel: string, handlers: ChangeHandlers): Subscription;
  close(): Promise<void>;
}

interface Sub {
  channel: string;
  handlers: ChangeHandlers;
  /** The connection its LISTEN ran on; up while that is the live one. */
  on: pgDriver.Client | null;
}

const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;
/** The feed's session in pg_stat_activity. */
const FEED_APPLICATION = 'postpilot change feed';
const RECONNECT_MS = 1000;
/** A round trip costs the process 0.1-0.2 ms of CPU: at most one per this many ms. */
const BARRIER_GAP_MS = 1;

export function createChangeFeed(o: {
  connectionString: string;
  onError?: (message: string, err: unknown) => void;
  /** Its session's name in pg_stat_activity (FEED_APPLICATION by default). */
  applicationName?: string;
}): ChangeFeed {
  const report = o.onError ?? (() => {});
  const subs = new Set<Sub>();
  let client: pgDriver.Client | null = null;
  let connecting: Promise<void> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  function down(c: pgDriver.Client, err?: unknown): void {
    if (client !== c) return;
    client = null;
    for (const s of subs) {
      s.on = null;
      s.handlers.reset();
    }
    if (err) report('change feed: the LISTEN connection was lost; caches read Postgres until it is back', err);
    c.end().catch(() => {});
    schedule();
  }

  function schedule(): void {
    if (closed || retry || !subs.size) return;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, RECONNECT_MS);
  }

  async function listenOn(c: pgDriver.Client, s: Sub): Promise<void> {
    await c.query(`listen ${s.channel}`);
    if (client !== c || !subs.has(s)) return;
    s.on = c;
    s.handlers.reset(); // Changes before this LISTEN were not heard.
  }

  function connect(): Promise<void> {
    return (connecting ??= (async () => {
      const c = new pgDriver.Client({ connectionString: o.connectionString, application_name: o.applicationName ?? FEED_APPLICATION });
      c.on('error', (err) => down(c, err));
      c.on('end', () => down(c, new Error('connection ended')));
      c.on('notification', (msg) => {
        for (const s of subs) if (s.on === c && s.channel === msg.channel) s.handlers.change(msg.payload ?? '');
      });
      try {
        await c.connect();
        if (closed) {
          await c.end();
          return;
        }
        client = c;
        for (const s of [...subs]) await listenOn(c, s);
      } catch (err) {
        report('change feed: could not LISTEN; caches read Postgres until it can', err);
        if (client === c) client = null;
        c.end().catch(() => {});
        schedule();
      }
    })().finally(() => (connecting = null)));
  }

  // The barrier: the statement in flight, and the next one, which the calls since share.
  let inFlight: Promise<boolean> | null = null;
  let next: Promise<boolean> | null = null;
  let lastSent = 0;
  function send(c: pgDriver.Client): Promise<boolean> {
    lastSent = performance.now();
    const answered: Promise<boolean> = c.query('select 1').then(
      () => client === c,
      () => false,
    );
    inFlight = answered;
    void answered.then(() => {
      if (inFlight === answered) inFlight = null;
    });
    return answered;
  }
  function sync(): Promise<boolean> {
    if (next) return next;
    // While `next` is set every call shares it, so no other barrier starts until this one clears it.
    next = (async () => {
      await null; // `next` is this barrier before any of the below runs
      if (inFlight) await inFlight;
      const wait = lastSent + BARRIER_GAP_MS - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      // From here a caller waits for the barrier after this one: this one may be sent before its change committed.
      next = null;
      const c = client;
      return c ? send(c) : false;
    })();
    return next;
  }

  return {
    listen(channel, handlers) {
      if (!CHANNEL_NAME.test(channel)) throw new Error(`not a channel name: ${channel}`);
      const s: Sub = { channel, handlers, on: null };
      subs.add(s);
      const c = client;
      const ready = c ? listenOn(c, s).catch((err) => down(c, err)) : connect();
      return {
        up: () => s.on !== null && s.on === client,
        ready,
        sync: () => (s.on !== null && s.on === client ? sync() : Promise.resolve(false)),
        close: () => {
          subs.delete(s);
          s.on = null;
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (retry) clearTimeout(retry);
      for (const s of subs) s.on = null;
      subs.clear();
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
