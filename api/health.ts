// Liveness and readiness, outside /v1 and without a key (for load balancers and orchestrators):
// - GET /health: the process is up and serving (no dependency is touched).
// - GET /ready: Postgres answers `select 1` and the Temporal frontend answers GetSystemInfo, each
//   within READY_CHECK_TIMEOUT_MS; 503 names the one that failed. The reason stays in the log:
//   the answer is public, so it says only ok / unavailable / timeout.
import { router } from '../http/router.ts';
import type { AppDeps } from '../http/deps.ts';
import type { LogSink } from '../lib/log.ts';

export const READY_CHECK_TIMEOUT_MS = 2000;

export type CheckResult = { status: 'ok'; latencyMs: number } | { status: 'unavailable' | 'timeout' | 'not_configured'; latencyMs: number };

class CheckTimeout extends Error {}

async function timed(
  fn: () => Promise<unknown>,
  timeoutMs: number,
): Promise<{ ok: true; ms: number } | { ok: false; ms: number; timeout: boolean; error: unknown }> {
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - t0) };
  } catch (error) {
    return {
      ok: false,
      ms: Math.round(performance.now() - t0),
      timeout: error instanceof CheckTimeout || isDeadlineExceeded(error),
      error,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** gRPC status 4 (DEADLINE_EXCEEDED), as @temporalio/client surfaces it. */
function isDeadlineExceeded(error: unknown): boolean {
  return (error as { code?: unknown })?.code === 4;
}

/** gRPC status 12 (UNIMPLEMENTED): the server answered, it just lacks the call (e.g. a test server). */
function isUnimplemented(error: unknown): boolean {
  return (error as { code?: unknown })?.code === 12;
}

export async function checkPostgres(deps: AppDeps, timeoutMs = READY_CHECK_TIMEOUT_MS) {
  return timed(() => deps.orm.em.getConnection().execute('select 1'), timeoutMs);
}

export async function checkTemporal(deps: AppDeps, timeoutMs = READY_CHECK_TIMEOUT_MS) {
  const client = deps.temporal?.client;
  if (!client) return null;
  return timed(async () => {
    try {
      // The deadline bounds the SDK's own retries of an unreachable address too.
      await client.connection.withDeadline(Date.now() + timeoutMs, () => client.workflowService.getSystemInfo({}));
    } catch (error) {
      if (!isUnimplemented(error)) throw error;
    }
  }, timeoutMs + 250);
}

export function healthRoutes(deps: AppDeps, log: LogSink) {
  return router()
    .get('/health', () => ({ status: 'ok' as const }), { detail: { hide: true } })
    .get(
      '/ready',
      async ({ set }) => {
        const [pg, temporal] = await Promise.all([checkPostgres(deps), checkTemporal(deps)]);
        const checks: Record<string, CheckResult> = {};
        const failed: string[] = [];
        for (const [name, result] of [
          ['postgres', pg],
          ['temporal', temporal],
        ] as const) {
          if (result === null) {
            checks[name] = { status: 'not_configured', latencyMs: 0 };
            failed.push(name);
          } else if (result.ok) {
            checks[name] = { status: 'ok', latencyMs: result.ms };
          } else {
            checks[name] = { status: result.timeout ? 'timeout' : 'unavailable', latencyMs: result.ms };
            failed.push(name);
            log({ time: new Date().toISOString(), level: 'warn', msg: 'readiness check failed', check: name, error: result.error });
          }
        }
        set.status = failed.length ? 503 : 200;
        set.headers['cache-control'] = 'no-store';
        return failed.length ? { status: 'unavailable', failed, checks } : { status: 'ready', checks };
      },
      { detail: { hide: true } },
    );
}
