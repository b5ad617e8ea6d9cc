import { DIFFICULT_REASONS } from '../contracts/values.js';
import type { DifficultEntry, TuningState } from './fold.js';

/**
 * The difficult list as the batch plan sees it (docs/method.md#batches): retries, and the
 * open / fixed / stuck groups with their orders.
 */
export type DifficultStatus = 'open' | 'fixed' | 'stuck';

export interface DifficultView extends DifficultEntry {
  retries: number;
  status: DifficultStatus;
}

/** How many batches numbered above the one `entry` was added in hold its id. */
export function retries(state: TuningState, entry: DifficultEntry): number {
  return state.batches.filter(
    (b) => b.plan.batch > entry.batch && (b.plan.new.includes(entry.id) || b.plan.recheck.includes(entry.id)),
  ).length;
}

export function viewDifficult(state: TuningState, maxRetries: number): DifficultView[] {
  // An id added again after it was fixed is a new entry; the latest one speaks for the id.
  const latest = new Map<string, DifficultEntry>();
  for (const entry of state.difficult) latest.set(entry.id, entry);
  return [...latest.values()].map((entry) => {
    const r = retries(state, entry);
    const status: DifficultStatus = entry.fixed ? 'fixed' : r >= maxRetries ? 'stuck' : 'open';
    // Never more than the maximum: past it the case is stuck (later batches may still hold it, e.g. as a recheck).
    return { ...entry, retries: Math.min(r, maxRetries), status };
  });
}

/** Retries as people read them: "1 of 3", "3 of 3 (stuck)". */
export const retriesText = (entry: Pick<DifficultView, 'retries' | 'status'>, maxRetries: number) =>
  `${Math.min(entry.retries, maxRetries)} of ${maxRetries}${entry.status === 'stuck' ? ' (stuck)' : ''}`;

const reasonRank = (reason: string) => DIFFICULT_REASONS.indexOf(reason as (typeof DIFFICULT_REASONS)[number]);

/** Open entries: worst reason first, then fewest retries, then id. */
export function openEntries(view: readonly DifficultView[]): DifficultView[] {
  return view
    .filter((e) => e.status === 'open')
    .sort((a, b) => reasonRank(a.reason) - reasonRank(b.reason) || a.retries - b.retries || compareIds(a.id, b.id));
}

/** Fixed entries, in list order. */
export function fixedEntries(view: readonly DifficultView[]): DifficultView[] {
  return view.filter((e) => e.status === 'fixed').sort((a, b) => a.index - b.index);
}

export function stuckEntries(view: readonly DifficultView[]): DifficultView[] {
  return view.filter((e) => e.status === 'stuck').sort((a, b) => a.index - b.index);
}

/** Byte order, the same on every machine and locale. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
