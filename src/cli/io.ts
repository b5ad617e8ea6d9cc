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
    out: (text) => process.stdout.write(asLines(text)),
    err: (text) => process.stderr.write(asLines(text)),
    isTTY: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
  };
}

/** `--version` alone answers before commander and the program load (BENCHMARKS.md: start-up). */
export function answeredVersion(args: readonly string[]): boolean {
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  ignoreClosedOutput();
  process.stdout.write(`${packageVersion()}\n`);
  return true;
}

/**
 * A reader that stops early (`git tune log | head`) closes our stdout: the
 * command goes on to its end, writing nothing more there (a step is never
 * cut short because its narration lost its reader), instead of dying on
 * EPIPE with a stack trace. The entries call it once, before anything
 * writes to the streams.
 */
export function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
}

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
