/**
 * One error class for everything the tool refuses or cannot do. `code` is
 * stable (scripts match on it) and one of ERROR_CODES, `exitCode` one of
 * EXIT_CODES below (docs/design.md, "Exit codes", shows that table), and
 * `hint` is the exact command that fixes it when there is one.
 */

/**
 * The exit codes: the number, its name here (`EXIT.history`), its words in
 * `git tune --help`, what it means and what to do about it. docs/design.md
 * ("Exit codes") shows this table; a test keeps the two the same.
 */
export const EXIT_CODES = [
  { name: 'ok', code: 0, help: 'ok', meaning: 'ok', todo: 'nothing' },
  { name: 'unexpected', code: 1, help: 'unexpected', meaning: 'unexpected error (a bug, or git failed)', todo: 'a bug, or git failed under us: run again with `--debug` and report the stack trace' },
  { name: 'usage', code: 2, help: 'usage or bad input', meaning: 'usage or bad input (flags, config, dataset, findings)', todo: 'fix the flags, config.yaml, dataset or file named in `error:`, as `fix:` says' },
  { name: 'history', code: 3, help: 'not allowed by the history now', meaning: 'the history does not allow it now (e.g. no batch is due)', todo: 'run `git tune next`: it names the step that is due' },
  { name: 'conflict', code: 4, help: 'another command moved the branch', meaning: 'conflict: another command moved the branch, or a lock is held', todo: 'another command wrote first or holds the lock: wait for it, then `git tune next`' },
  { name: 'runner', code: 5, help: 'runner sandbox down', meaning: 'the runner failed in a way that stops the run (sandbox down)', todo: 'bring the runner\'s sandbox or service back, then run again (finished cases are kept)' },
  { name: 'notVerified', code: 6, help: 'final check not VERIFIED', meaning: 'the final check is not VERIFIED', todo: 'read the final check\'s summary; go on with the loop as `git tune next` says' },
  { name: 'space', code: 7, help: 'disk full', meaning: 'the file system is full (ENOSPC) or over quota (EDQUOT)', todo: 'free space on the file system `error:` names, then `git tune next` (the interrupted step is finished, nothing half-written is kept)' },
  { name: 'interrupted', code: 130, help: 'interrupted', meaning: 'interrupted (Ctrl-C)', todo: 'finished cases are kept: run the command again (`git tune run` resumes)' },
] as const;

type ExitEntry = (typeof EXIT_CODES)[number];

/** Exit codes by name: `EXIT.history` is 3. */
export const EXIT = Object.fromEntries(EXIT_CODES.map((e) => [e.name, e.code])) as { readonly [E in ExitEntry as E['name']]: E['code'] };

export type ExitCode = ExitEntry['code'];

/** The table as docs/design.md shows it (Markdown). */
export function exitCodesTable(): string {
  const rows = EXIT_CODES.map((e) => `| ${e.code} | \`${e.name}\` | ${e.meaning} | ${e.todo} |`);
  return ['| code | name | meaning | what to do |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The lines of `git tune --help` that list the exit codes, wrapped between entries. */
export function exitCodesHelp(width = 104): string {
  const lines: string[] = [];
  let line = 'Exit codes:';
  EXIT_CODES.forEach((e, i) => {
    const item = ` ${e.code} ${e.help}${i === EXIT_CODES.length - 1 ? '.' : ','}`;
    if (line.length + item.length > width) {
      lines.push(line);
      line = item.slice(1);
    } else line += item;
  });
  return [...lines, line].join('\n');
}

export { ERROR_CODES, type ErrorCode } from './core/error-codes.js';
import type { ErrorCode } from './core/error-codes.js';

export class TuneError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  readonly details: string[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { exitCode?: ExitCode; hint?: string; details?: string[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TuneError';
    this.code = code;
    this.exitCode = options.exitCode ?? EXIT.usage;
    this.hint = options.hint;
    this.details = options.details ?? [];
  }
}

export const usageError = (code: ErrorCode, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.usage, hint, details });

export const historyError = (code: ErrorCode, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.history, hint, details });

export const conflictError = (code: ErrorCode, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.conflict, hint, details });
