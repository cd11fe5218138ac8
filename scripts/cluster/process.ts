// One supervised child process of the cluster (scripts/cluster/stack.ts): started in a session of
// its own (a terminal's Ctrl-C reaches only the launcher, which stops the children in order), its
// output appended to a log file, and killable or restartable on purpose (the chaos test).
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import type { Subprocess } from 'bun';

export interface ChildSpec {
  name: string;
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  logFile: string;
  /** Resolves once the process serves (it has been started; the log from its start is given). */
  ready: (log: () => string) => Promise<boolean>;
  /** Grace for a SIGTERM stop before SIGKILL. */
  stopGraceMs?: number;
  stopSignal?: NodeJS.Signals;
}

/** Every running child, SIGKILLed (whole group) if the launcher exits without stopping them. */
const running = new Set<Subprocess>();
process.once('exit', () => {
  for (const p of running) killGroup(p, 'SIGKILL');
});

function killGroup(p: Subprocess, signal: NodeJS.Signals): void {
  if (p.exitCode !== null || p.signalCode !== null) return;
  try {
    process.kill(-p.pid, signal);
  } catch {
    try {
      p.kill(signal);
    } catch {
      // already gone
    }
  }
}

export class Child {
  private proc?: Subprocess;
  constructor(readonly spec: ChildSpec) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  alive(): boolean {
    return !!this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Starts it and waits until `ready` says so (60 s at most, or `timeoutMs`). */
  async start(timeoutMs = 90_000): Promise<void> {
    const { spec } = this;
    const offset = (() => {
      try {
        return statSync(spec.logFile).size;
      } catch {
        return 0;
      }
    })();
    const out = openSync(spec.logFile, 'a');
    const proc = Bun.spawn(spec.argv, {
      cwd: spec.cwd,
      env: spec.env as Record<string, string>,
      stdin: 'ignore',
      stdout: out,
      stderr: out,
      detached: true,
    });
    closeSync(out);
    this.proc = proc;
    running.add(proc);
    void proc.exited.then(() => running.delete(proc));
    const log = () => {
      try {
        return readFileSync(spec.logFile, 'utf8').slice(offset);
      } catch {
        return '';
      }
    };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(`${spec.name} exited while starting (${proc.exitCode ?? proc.signalCode}):\n${tail(log())}`);
      }
      if (await spec.ready(log).catch(() => false)) return;
      if (Date.now() > deadline) {
        killGroup(proc, 'SIGKILL');
        throw new Error(`${spec.name} did not become ready in ${timeoutMs / 1000} s:\n${tail(log())}`);
      }
      await Bun.sleep(250);
    }
  }

  /** SIGKILL: a crash, not a shutdown. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    killGroup(p, 'SIGKILL');
    await p.exited;
  }

  /** An orderly stop (SIGTERM or the spec's signal), SIGKILL after the grace. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    killGroup(p, this.spec.stopSignal ?? 'SIGTERM');
    const done = await Promise.race([p.exited.then(() => true), Bun.sleep(this.spec.stopGraceMs ?? 30_000).then(() => false)]);
    if (!done) killGroup(p, 'SIGKILL');
    await p.exited;
  }
}

export function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}
