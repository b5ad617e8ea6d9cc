import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import { packageVersion } from '../app/version.js';
import type { Env } from '../git/identity.js';

/**
 * What a command may touch of the outside world, read once at the CLI
 * boundary and passed down: the working directory, the environment, the
 * clock, and the two output streams (stdout is data, stderr is narration).
 */
export interface CommandIO {
  cwd: string;
  env: Env;
  now: Date;
  /** The live clock, for durations and for commits made long after the command started. */
  clock: () => Date;
  out: (text: string) => void;
  err: (text: string) => void;
  isTTY: boolean;
  /** The command's `--dry-run`: its steps are planned instead of written (src/app/plan.ts). */
  dryRun?: boolean;
}

/** Text as one line of output or more: ended by a newline (added when it has none). */
export const asLines = (text: string): string => (text.endsWith('\n') ? text : `${text}\n`);

/** A value as every `--json` prints it. */
export const jsonText = (value: unknown): string => JSON.stringify(value, null, 2);

export function processIO(): CommandIO {
  return {
    cwd: process.cwd(),
    env: process.env,
    now: new Date(),
    clock: () => new Date(),
    out: (text) => writeStdout(asLines(text)),
    err: (text) => writeStderr(asLines(text)),
    isTTY: isatty(1) && !process.env.NO_COLOR,
  };
}

/** `--version` alone answers before commander and the program load (BENCHMARKS.md: start-up). */
export function answeredVersion(args: readonly string[]): boolean {
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  writeStdout(`${packageVersion()}\n`);
  return true;
}

/**
 * What the program writes to stdout (fd 1) and stderr (fd 2), in order,
 * written to the file descriptor itself: process.stdout and process.stderr
 * are streams, and making stdout cost a start ~1.5 ms on a pipe (stderr is
 * made anyway once a child process ran: net's socket teardown reads it). The
 * commands' io, commander's help and usage errors, auto's live views and the
 * kept `next` all write here. A reader that stops early (`git tune log | head`)
 * closes the output: the command goes on to its end, writing nothing more
 * there (a step is never cut short because its narration lost its reader),
 * instead of dying on EPIPE with a stack trace. An output that would block (a
 * non-blocking pipe that is full) takes the rest, and every later write,
 * through the stream, which waits for it.
 */
function fdOutput(fd: 1 | 2): (text: string) => void {
  let closed = false;
  let stream: NodeJS.WriteStream | null = null;
  return (text) => {
    if (closed) return;
    if (stream) {
      stream.write(text);
      return;
    }
    let rest = Buffer.from(text);
    try {
      while (rest.length > 0) rest = rest.subarray(writeSync(fd, rest));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') {
        closed = true;
        return;
      }
      if (code !== 'EAGAIN') throw err;
      stream = fd === 1 ? process.stdout : process.stderr;
      stream.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
      });
      stream.write(rest);
    }
  };
}

export const writeStdout = fdOutput(1);
export const writeStderr = fdOutput(2);

export function printJson(io: CommandIO, value: unknown): void {
  io.out(jsonText(value));
}

/** Renders rows as an aligned plain-text table. */
export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n');
}
