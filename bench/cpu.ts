// CPU time per request: user+system time from /proc/<pid>/stat of the API
// process and of every Postgres process under this benchmark, read before and after a timed run.
// Throughput moves with whatever else the machine runs; CPU per request much less so.
import { readFileSync } from 'node:fs';
import { childrenOf, procCpuMs } from './stack.ts';

function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  for (let guard = 0; queue.length && guard < 10_000; guard++) {
    const kids = childrenOf(queue.shift()!);
    out.push(...kids);
    queue.push(...kids);
  }
  return out;
}

/**
 * CPU ms so far of every `postgres` process below this one (the postmaster's figure includes its
 * reaped children: backends that came and went between two readings are counted too).
 */
export function postgresCpuMs(): number {
  let total = 0;
  for (const pid of descendants(process.pid)) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += procCpuMs(pid);
    } catch {}
  }
  return total;
}

export interface CpuReading {
  api: number;
  postgres: number;
}

/** A reading of the API process (`apiPid`, this process by default) and of Postgres. */
export function readCpu(apiPid = process.pid): CpuReading {
  return { api: procCpuMs(apiPid), postgres: postgresCpuMs() };
}

/** CPU ms per request between two readings. */
export function cpuPerRequest(before: CpuReading, after: CpuReading, requests: number): CpuReading {
  return { api: (after.api - before.api) / requests, postgres: (after.postgres - before.postgres) / requests };
}

export const cpuNote = (c: CpuReading, apiLabel = 'API') =>
  `CPU/request ${apiLabel} ${c.api.toFixed(3)} ms + Postgres ${c.postgres.toFixed(3)} ms = ${(c.api + c.postgres).toFixed(3)} ms`;
