import type { Config } from '../contracts/config.js';
import { editFate } from './edits.js';
import { batchNumbered, type TuningState } from './fold.js';
import { FINAL_RUN, finalRunName, isFinalRun, parseRunName } from './names.js';
import { unconfirmedEdits, type NextStep } from './next.js';
import { refusal, type Refusal } from './refusal.js';

/**
 * Which run `git tune run` (or `final`) starts or resumes, and whether the
 * budget lets it: decided from the state and `next`'s step (docs/method.md#halves, docs/contracts.md).
 */
const RUN_KINDS = new Set(['run', 'resume', 'confirm', 'mem-run', 'void-rerun', 'rerun']);

export interface DueRun {
  name: string;
  resume: boolean;
}

/** Which run `git tune run` (or `final`) starts or resumes now, from `next`. */
export function dueRun(state: TuningState, step: NextStep, final: boolean): DueRun | Refusal {
  if (final) {
    const last = state.final[state.final.length - 1];
    if (last && !last.finished) return { name: last.name, resume: true };
    if (step.kind === 'final') return unconfirmedEditsRefusal(state, step) ?? { name: FINAL_RUN, resume: false };
    // A VOID final check says nothing: it runs again, as a new run of the final check (at the lower concurrency next gives).
    if (last && step.kind === 'void-rerun') return { name: finalRunName(state.final.length + 1), resume: false };
    return refusal('history', 'final-not-due', `the final check is not due: ${step.message}`, step.command ?? undefined);
  }
  if (!RUN_KINDS.has(step.kind) || step.run === null || isFinalRun(step.run)) {
    return refusal('history', 'run-not-due', `no run is due: ${step.message}`, step.command ?? undefined);
  }
  if (step.kind === 'resume') return { name: step.run, resume: true };
  if (step.kind === 'void-rerun') {
    const id = parseRunName(step.run);
    if (id?.kind !== 'batch') return refusal('history', 'run-not-due', step.message);
    const numbers = batchNumbered(state, id.batch)!.runs.filter((r) => r.half === id.half).map((r) => r.number);
    return { name: `batch${String(id.batch).padStart(2, '0')}-${id.half}-run${Math.max(...numbers) + 1}`, resume: false };
  }
  return { name: step.run, resume: false };
}

/** At `done` no edit is unconfirmed: one no run will confirm is reverted (or kept) before the final check is recorded. */
export function unconfirmedEditsRefusal(state: TuningState, step: NextStep): Refusal | null {
  const standing = unconfirmedEdits(state);
  if (standing.length === 0) return null;
  return refusal('history', 'unconfirmed-edits', `the final check does not start while edits stand unconfirmed: ${standing.map((e) => `${e.oid.slice(0, 7)} (${editFate(e)})`).join(', ')}`,
    `${step.command ?? 'git tune next'}   # or keep one on purpose: git tune grade --keep <commit> --why "…"`);
}

export interface Spent {
  tokens: number;
  costUsd: number;
}

/** Why the budget stops a run now (null: it does not): `spent` reached a limit. */
export function budgetLeft(budget: Config['budget'], spent: Spent): string | null {
  const { maxCostUsd, maxTokens } = budget;
  if (maxCostUsd !== null && spent.costUsd >= maxCostUsd) return `budget spent: $${spent.costUsd.toFixed(4)} of $${maxCostUsd}`;
  if (maxTokens !== null && spent.tokens >= maxTokens) return `budget spent: ${spent.tokens} of ${maxTokens} tokens`;
  return null;
}

/** What a run of `name` has spent before its next case: the tuning's usage, the run's recorded part replaced by the cases kept so far. */
export function spentBeforeRun(state: TuningState, name: string, kept: Spent): Spent {
  const run = state.runs.get(name);
  return {
    tokens: state.usage.tokens - (run?.tokens ?? 0) + kept.tokens,
    costUsd: state.usage.costUsd - (run?.costUsd ?? 0) + kept.costUsd,
  };
}

/** A run that would start with the budget spent is refused; the hint doubles the limit that stops it. */
export function budgetRefusal(what: string, budget: Config['budget'], spent: Spent): Refusal | null {
  const reason = budgetLeft(budget, spent);
  if (reason === null) return null;
  return refusal('history', 'budget-spent', `${what} cannot start: ${reason}`,
    budget.maxCostUsd !== null ? `git tune config set budget.maxCostUsd ${Number((budget.maxCostUsd * 2).toFixed(2))}` : `git tune config set budget.maxTokens ${(budget.maxTokens ?? 0) * 2}`);
}
