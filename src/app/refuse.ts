import { isRefusal, type Refusal } from '../core/refusal.js';
import { conflictError, historyError, usageError, type TuneError } from '../errors.js';

/** A core refusal as the error the CLI prints (its exit code from its kind). */
export function refusalError(r: Refusal): TuneError {
  const error = { usage: usageError, history: historyError, conflict: conflictError }[r.kind];
  return error(r.code, r.message, r.hint, r.details);
}

/** The decision, or its refusal thrown. */
export function orRefuse<T>(decision: T | Refusal): T {
  if (isRefusal(decision)) throw refusalError(decision);
  return decision;
}

/** Throws the refusal, when there is one. */
export function refuseIf(refused: Refusal | null): void {
  if (refused) throw refusalError(refused);
}
