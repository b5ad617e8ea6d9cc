/**
 * A decision that says no, as data: the rule's code, what was refused and the
 * command that fixes it. Core decides and never throws for a rule; the app
 * throws it as a TuneError (src/app/refuse.ts) with the exit code of its
 * kind: `usage` (2, the request is wrong), `history` (3, the history does
 * not allow it now) or `conflict` (what it would write no longer applies to
 * the files as they are).
 */
import type { ErrorCode } from './error-codes.js';

export interface Refusal {
  refused: true;
  kind: 'usage' | 'history' | 'conflict';
  code: ErrorCode;
  message: string;
  hint?: string;
  details?: string[];
}

export function refusal(kind: Refusal['kind'], code: ErrorCode, message: string, hint?: string, details?: string[]): Refusal {
  return { refused: true, kind, code, message, ...(hint !== undefined ? { hint } : {}), ...(details !== undefined ? { details } : {}) };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && (value as { refused?: unknown }).refused === true;
}
