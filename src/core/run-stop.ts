/**
 * Why a run stopped launching cases before all of them ran: one typed value
 * from where it is decided (src/app/run.ts) to where it becomes an error and
 * an exit code (src/app/run-stop.ts), instead of a string read by its first
 * word. `text` is the words the history keeps (the run-stop step's reason,
 * a `Tune-Stopped` trailer) and messages show.
 *
 * - `budget`: the configured budget is spent (its text says how much);
 * - `sandbox`: the runner reported its sandbox down (no case tells anything about the prose until it is back);
 * - `interrupted`: stopped from outside: Ctrl-C, a signal, a stop request (`by` says which when known).
 */
export type RunStop =
  | { kind: 'budget'; text: string }
  | { kind: 'sandbox'; text: string }
  | { kind: 'interrupted'; text: string; by?: 'signal' | 'stop' | 'limit' };

export type RunStopKind = RunStop['kind'];

/** The budget is spent; `spent` is src/core/run-due.ts's `budgetLeft` line (`budget spent: …`). */
export const budgetStop = (spent: string): RunStop => ({ kind: 'budget', text: spent });

/** The runner said its sandbox is down. */
export const sandboxStop = (said: string): RunStop => ({ kind: 'sandbox', text: `sandbox down: ${said}` });

/** Stopped from outside, with no other reason. */
export const interruptedStop = (by?: 'signal' | 'stop' | 'limit'): RunStop => ({ kind: 'interrupted', text: 'interrupted', ...(by ? { by } : {}) });

/**
 * The stop a history's text records (a run-stop step's reason or a
 * `Tune-Stopped` trailer, written by this or an earlier version), or null
 * for none. The one place that reads a reason's words.
 */
export function runStopOf(text: string | null | undefined): RunStop | null {
  if (!text) return null;
  if (text.startsWith('budget')) return { kind: 'budget', text };
  if (text.startsWith('sandbox')) return { kind: 'sandbox', text };
  return { kind: 'interrupted', text };
}

/** Whether a run's recorded stop (its text in the folded state) was the budget. */
export const stoppedForBudget = (text: string | null | undefined): boolean => runStopOf(text)?.kind === 'budget';
