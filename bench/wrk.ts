// The benchmarks' HTTP load generator: wrk (C, its own process and threads; installed into .tools
// by `sh scripts/setup.sh --bench`), so a figure and its ceiling never share the server's event
// loop. A Lua script per run rotates API keys (the per-key rate limit) and numbers POST bodies
// (`{n}` in the body becomes a number unique within the run: duplicate_post).
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const WRK = resolve(import.meta.dir, '../.tools/bin/wrk');

export interface WrkRun {
  url: string;
  seconds: number;
  connections: number;
  /** wrk threads (default 2: the machines have 2 cores, and the server needs them too). */
  threads?: number;
  method?: 'GET' | 'POST';
  /** Bearer keys, used in turn. */
  keys?: string[];
  /** A JSON body; `{n}` becomes a number unique within the run. */
  body?: string;
}

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Answers outside 2xx/3xx. */
  non2xx: number;
  socketErrors: number;
  /** Latency in ms. */
  latency: { p50: number; p90: number; p99: number; max: number };
}

const lua = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string literal for what we pass

function script(run: WrkRun): string {
  const keys = run.keys ?? [];
  return `
local keys = { ${keys.map(lua).join(', ')} }
local method = ${lua(run.method ?? 'GET')}
local body = ${run.body === undefined ? 'nil' : lua(run.body)}
local threadCount = 0
function setup(thread)
  threadCount = threadCount + 1
  thread:set("tid", threadCount)
end
local counter = 0
request = function()
  counter = counter + 1
  local headers = {}
  if #keys > 0 then headers["Authorization"] = "Bearer " .. keys[((counter + (tid or 0) * 7919) % #keys) + 1] end
  local b = nil
  if body ~= nil then
    headers["Content-Type"] = "application/json"
    b = string.gsub(body, "{n}", (tid or 0) .. "-" .. counter)
  end
  return wrk.format(method, nil, headers, b)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"socket":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;
}

export function wrkAvailable(): boolean {
  return existsSync(WRK);
}

export async function wrk(run: WrkRun): Promise<WrkResult> {
  if (!wrkAvailable()) throw new Error(`${WRK} is missing: run \`sh scripts/setup.sh --bench\``);
  const dir = mkdtempSync(join(tmpdir(), 'postpilot-wrk-'));
  try {
    const file = join(dir, 'run.lua');
    writeFileSync(file, script(run));
    const proc = Bun.spawn(
      [
        WRK,
        '-t',
        String(run.threads ?? 2),
        '-c',
        String(run.connections),
        '-d',
        `${run.seconds}s`,
        '--timeout',
        '10s',
        '-s',
        file,
        run.url,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    const line = /WRK_RESULT (\{.*\})/.exec(out)?.[1];
    if (!line) throw new Error(`wrk gave no result (exit ${proc.exitCode}): ${out.slice(-500)} ${err.slice(-500)}`);
    const r = JSON.parse(line) as Record<string, number>;
    const seconds = r.duration_us! / 1e6;
    return {
      requests: r.requests!,
      seconds,
      rps: r.requests! / seconds,
      non2xx: r.non2xx!,
      socketErrors: r.socket!,
      latency: { p50: r.p50! / 1000, p90: r.p90! / 1000, p99: r.p99! / 1000, max: r.max! / 1000 },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
