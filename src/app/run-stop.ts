import type { RunStop } from '../core/run-stop.js';
import { EXIT, TuneError, type ErrorCode, type ExitCode } from '../errors.js';

/** Each way a run stops, as an error: its code and exit code (docs/design.md#exit-codes). */
const AS_ERROR: Record<RunStop['kind'], { code: ErrorCode; exit: ExitCode }> = {
  budget: { code: 'budget-spent', exit: EXIT.history },
  sandbox: { code: 'sandbox-down', exit: EXIT.runner },
  interrupted: { code: 'interrupted', exit: EXIT.interrupted },
};

/**
 * The error for work that did not finish because its run stopped (`git tune
 * run`, `final`, `baseline`): `<what> did not finish: <why><after>`, with the
 * command that carries on as the fix. The one mapping from a stop to an exit code.
 */
export function runStopError(stop: RunStop, what: string, hint: string | undefined, after = ''): TuneError {
  const { code, exit } = AS_ERROR[stop.kind];
  return new TuneError(code, `${what} did not finish: ${stop.text}${after}`, { exitCode: exit, ...(hint ? { hint } : {}) });
}
