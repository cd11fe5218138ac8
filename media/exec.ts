// Running ffmpeg/ffprobe: Bun.spawn with a wall-clock timeout and bounded stdout/stderr.
//
// The binaries come from @ffmpeg-installer/ffmpeg and @ffprobe-installer/ffprobe (static Linux
// builds shipped inside the npm packages; nothing is downloaded at install time). FFMPEG_PATH /
// FFPROBE_PATH (lib/config.ts) override them, e.g. to use a system ffmpeg on a platform the
// packages don't cover: the worker hands them over at start (useMediaBinaries).
import { constants } from 'node:fs';
import { access, chmod, stat } from 'node:fs/promises';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import type { Config } from '../lib/config.ts';

const ready = new Map<string, Promise<string>>();

/**
 * The binary at `path`, made executable if needed. @ffprobe-installer/linux-x64 ships ffprobe
 * without the execute bit and sets it in a postinstall script, which Bun does not run unless the
 * package is in trustedDependencies; so do what that script does (chmod u+x) here, once.
 */
function executable(path: string, pkg: string): Promise<string> {
  let p = ready.get(path);
  if (!p) {
    p = (async () => {
      try {
        await access(path, constants.X_OK);
        return path;
      } catch {
        // fall through
      }
      try {
        const { mode } = await stat(path);
        await chmod(path, mode | 0o100);
        await access(path, constants.X_OK);
        return path;
      } catch (e) {
        throw new Error(
          `${path} is not executable and cannot be made so; add "${pkg}" to trustedDependencies (or set FFMPEG_PATH / FFPROBE_PATH)`,
          { cause: e },
        );
      }
    })();
    p.catch(() => ready.delete(path));
    ready.set(path, p);
  }
  return p;
}

let configured: Config['media'] = { ffmpegPath: undefined, ffprobePath: undefined };

/**
 * The binaries of the configuration (FFMPEG_PATH / FFPROBE_PATH), for every later run in this
 * process: the media activities and the connectors that cut a frame (Reddit). Called once at start
 * by the worker (worker/run.ts); unset paths mean the npm packages' binaries.
 */
export function useMediaBinaries(paths: Config['media']): void {
  configured = { ...paths };
}

export function ffmpegPath(): Promise<string> {
  const override = configured.ffmpegPath;
  return override ? Promise.resolve(override) : executable(ffmpegInstaller.path, '@ffmpeg-installer/linux-x64');
}

export function ffprobePath(): Promise<string> {
  const override = configured.ffprobePath;
  return override ? Promise.resolve(override) : executable(ffprobeInstaller.path, '@ffprobe-installer/linux-x64');
}

export interface RunOptions {
  /** Kill the process (SIGKILL) after this many milliseconds. Default 60 s. */
  timeoutMs?: number;
  /** Kill the process once stdout exceeds this many bytes. Default 8 MiB. */
  maxStdoutBytes?: number;
  /** Keep at most this many bytes of stderr (the rest is drained and dropped). Default 64 KiB. */
  maxStderrBytes?: number;
}

export interface RunResult {
  exitCode: number | null;
  stdout: Uint8Array;
  stderr: string;
  timedOut: boolean;
  /** stdout went over maxStdoutBytes and the process was killed. */
  overflow: boolean;
}

export const DEFAULT_TIMEOUT_MS = 60_000;

async function collect(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  onOverflow: (() => void) | null,
): Promise<{ bytes: Uint8Array; overflow: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflow = false;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (overflow) continue; // keep draining so the child never blocks on a full pipe
      if (size + value.byteLength > limit) {
        const room = limit - size;
        if (room > 0) chunks.push(value.subarray(0, room));
        size = limit;
        overflow = true;
        onOverflow?.();
        continue;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes, overflow };
}

/** Runs `cmd` (no shell), stdin closed. Never throws for a non-zero exit; see `RunResult`. */
export async function run(cmd: string[], opts: RunOptions = {}): Promise<RunResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const proc = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  let timedOut = false;
  const kill = () => {
    try {
      proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutMs);
  try {
    const [out, err] = await Promise.all([
      collect(proc.stdout, opts.maxStdoutBytes ?? 8 * 1024 * 1024, kill),
      collect(proc.stderr, opts.maxStderrBytes ?? 64 * 1024, null),
    ]);
    const exitCode = await proc.exited;
    return {
      exitCode: timedOut || out.overflow ? null : exitCode,
      stdout: out.bytes,
      stderr: new TextDecoder().decode(err.bytes),
      timedOut,
      overflow: out.overflow,
    };
  } finally {
    clearTimeout(timer);
  }
}
