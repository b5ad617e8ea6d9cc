/**
 * One error class for everything the tool refuses or cannot do. `code` is
 * stable (scripts match on it), `exitCode` follows docs/exit-codes.md, and
 * `hint` is the exact command that fixes it when there is one.
 */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  history: 3,
  conflict: 4,
  runner: 5,
  notVerified: 6,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class TuneError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  readonly details: string[];

  constructor(
    code: string,
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

export const usageError = (code: string, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.usage, hint, details });

export const historyError = (code: string, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.history, hint, details });

export const conflictError = (code: string, message: string, hint?: string, details?: string[]) =>
  new TuneError(code, message, { exitCode: EXIT.conflict, hint, details });
