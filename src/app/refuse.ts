import { isRefusal, type Refusal } from '../core/refusal.js';
import { historyError, usageError, type TuneError } from '../errors.js';

/** A core refusal as the error the CLI prints (its exit code from its kind). */
export function refusalError(r: Refusal): TuneError {
  return (r.kind === 'usage' ? usageError : historyError)(r.code, r.message, r.hint, r.details);
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
