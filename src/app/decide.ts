import { decideNext, type NextInput, type NextStep } from '../core/next.js';
import type { Tuning } from './tuning.js';

/** The pure decision's input, read from a tuning (no dataset read needed). */
export function nextInputFor(tuning: Tuning): NextInput {
  const complex = new Set(tuning.selection?.complex ?? []);
  const stale =
    tuning.selection !== null && tuning.state.dataset !== null && tuning.selection.datasetRev !== tuning.state.dataset.rev;
  return {
    state: tuning.state,
    config: tuning.config,
    selection: stale ? [] : (tuning.selection?.ids ?? []),
    complexity: (id) => (complex.has(id) ? 'complex' : 'medium'),
    dir: tuning.dir,
  };
}

/** Kept per branch tip in the cache (src/app/cache.ts): every input above is read at the tip. */
export function nextFor(tuning: Tuning): NextStep {
  return tuning.memo ? tuning.memo('next', () => decideNext(nextInputFor(tuning))) : decideNext(nextInputFor(tuning));
}
