import { spawn as nodeSpawn } from 'node:child_process';
import { createWriteStream, promises as fs } from 'node:fs';
import { EXIT, TuneError } from '../errors.js';

/**
 * Runs one command of a contract (runner, judge, check, editor): no shell
 * unless asked, its own process group so a timeout kills the whole tree,
 * stdout and stderr captured to files (capped), never thrown on failure.
 */
export interface ProcessSpec {
  command: readonly string[];
  shell: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  timeoutMs: number;
  stdoutFile: string;
  stderrFile: string;
  /** Bytes kept of each stream; the rest is counted and noted. */
  maxLogBytes?: number;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError: string | null;
  /** The errno code of a failed spawn (ENOENT, ENOMEM, EAGAIN, …). */
  spawnCode: string | null;
  /** The last STDERR_TAIL_BYTES of stderr, whatever the cap kept (an out-of-memory death prints its reason last). */
  stderrTail: string;
  durationMs: number;
  /**
   * git-tune ended it on the user's request (a second Ctrl-C, `git tune stop
   * --now`): not the process's doing, so never read as a memory death or a
   * failure; what it was doing is left undone (a case leaves no result).
   */
  requested?: boolean;
}

/** Bytes of stderr's end kept in memory per process. */
export const STDERR_TAIL_BYTES = 8 * 1024;

/** Bytes kept of each output stream, and of each transcript or workspace file the logs ref keeps. */
export const MAX_LOG_BYTES = 1024 * 1024;

/** The line that ends a kept log cut short: where it was cut and how much was not kept. */
export const cutMarker = (kept: number, dropped: number) => `[git-tune: cut here after ${kept} bytes; ${dropped} more bytes not kept]\n`;
const running = new Set<number>();
/** Groups killed on the user's request (killAll): their outcome says `requested`. */
const requested = new Set<number>();

/**
 * Where the process groups this process starts are recorded while they run
 * (src/run/groups.ts), so a command that finds their starter dead ends them.
 */
export interface GroupLog {
  started(pgid: number): void;
  ended(pgid: number): void;
}
let groupLog: GroupLog | null = null;

/** Records every process group started from now on in `log` (null: none). */
export function recordGroups(log: GroupLog | null): void {
  groupLog = log;
}

/** Kills every process group we started, on the user's request (a second Ctrl-C, `git tune stop --now`). */
export function killAll(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const pid of running) {
    requested.add(pid);
    try {
      process.kill(-pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * What a judge, editor or memory merge killed on the user's request throws:
 * nothing it did is recorded, and the command that started it ends as an
 * interrupted one (exit 130; the next `git tune auto` does the step again).
 */
export const interruptedError = (what: string): TuneError =>
  new TuneError('interrupted', `${what} was stopped (Ctrl-C twice or \`git tune stop --now\`); nothing of it was recorded`, {
    exitCode: EXIT.interrupted,
    hint: 'git tune auto   # carries on from here',
  });

function cappedSink(file: string, max: number, tailBytes = 0) {
  const stream = createWriteStream(file);
  // A log that cannot be written (its scratch dir removed under it) is not worth the process.
  stream.on('error', () => undefined);
  let kept = 0;
  let dropped = 0;
  let tail = Buffer.alloc(0);
  return {
    tail: () => tail.toString('utf8'),
    write(chunk: Buffer) {
      if (tailBytes > 0) {
        tail = Buffer.concat([tail, chunk]);
        // A copy of the end alone, so a large chunk is not held through a view of it.
        if (tail.length > tailBytes) tail = Buffer.from(tail.subarray(-tailBytes));
      }
      if (kept < max) {
        const part = chunk.subarray(0, max - kept);
        stream.write(part);
        kept += part.length;
        dropped += chunk.length - part.length;
      } else dropped += chunk.length;
    },
    async close() {
      if (dropped > 0) stream.write(`\n${cutMarker(kept, dropped)}`);
      await new Promise<void>((resolve) => stream.end(resolve));
    },
  };
}

/**
 * Never throws: a spawn that fails, at once (ENOMEM is thrown by Node) or as
 * an event (ENOENT, EAGAIN), is an outcome with its errno code. `spawn` is
 * for tests that make the system refuse a process.
 */
export async function runProcess(spec: ProcessSpec, now: () => number = Date.now, spawn: typeof nodeSpawn = nodeSpawn): Promise<ProcessOutcome> {
  const max = spec.maxLogBytes ?? MAX_LOG_BYTES;
  const out = cappedSink(spec.stdoutFile, max);
  const err = cappedSink(spec.stderrFile, max, STDERR_TAIL_BYTES);
  const started = now();
  const [program, ...args] = spec.shell ? [spec.command.join(' ')] : spec.command;
  return new Promise<ProcessOutcome>((resolve) => {
    let timedOut = false;
    let settled = false;
    const failed = async (e: NodeJS.ErrnoException) => {
      await out.close();
      await err.close();
      resolve({ exitCode: null, signal: null, timedOut, spawnError: e.message, spawnCode: e.code ?? null, stderrTail: '', durationMs: now() - started });
    };
    let child: ReturnType<typeof nodeSpawn>;
    try {
      child = spawn(program!, args, {
        cwd: spec.cwd,
        env: spec.env as NodeJS.ProcessEnv,
        shell: spec.shell,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      void failed(e as NodeJS.ErrnoException);
      return;
    }
    if (child.pid) {
      running.add(child.pid);
      groupLog?.started(child.pid);
    }
    child.stdout?.on('data', (c: Buffer) => out.write(c));
    child.stderr?.on('data', (c: Buffer) => err.write(c));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }, spec.timeoutMs);
    const finish = async (exitCode: number | null, signal: string | null, spawnFailed: NodeJS.ErrnoException | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const killed = child.pid !== undefined && requested.delete(child.pid);
      if (child.pid) {
        running.delete(child.pid);
        // The leader is gone; a child it left in the group goes with it (a timeout or a kill already sent SIGKILL).
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* the group is empty */
        }
        groupLog?.ended(child.pid);
      }
      await out.close();
      await err.close();
      resolve({
        exitCode, signal, timedOut, spawnError: spawnFailed?.message ?? null, spawnCode: spawnFailed ? spawnFailed.code ?? null : null,
        stderrTail: err.tail(), durationMs: now() - started, ...(killed && !timedOut ? { requested: true } : {}),
      });
    };
    child.on('error', (e) => void finish(null, null, e));
    child.on('close', (code, signal) => void finish(code, signal, null));
  });
}

export async function readCapped(file: string, max: number): Promise<{ text: string | null; tooBig: boolean; size: number }> {
  const st = await fs.stat(file).catch(() => null);
  if (!st) return { text: null, tooBig: false, size: 0 };
  if (st.size > max) return { text: null, tooBig: true, size: st.size };
  return { text: await fs.readFile(file, 'utf8'), tooBig: false, size: st.size };
}

/** The first `max` bytes of a file and its whole size (null: no such file). */
export async function readHead(file: string, max: number): Promise<{ bytes: Buffer; size: number } | null> {
  const handle = await fs.open(file, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const st = await handle.stat();
    if (!st.isFile()) return null;
    const size = st.size;
    const bytes = Buffer.alloc(Math.min(size, max));
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    return { bytes: bytes.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}
