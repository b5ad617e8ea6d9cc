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

export function nextFor(tuning: Tuning): NextStep {
  return decideNext(nextInputFor(tuning));
}
