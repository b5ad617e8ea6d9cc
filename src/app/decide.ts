import type { Config } from '../contracts/config.js';
import type { Selection } from '../contracts/files.js';
import type { TuningState } from '../core/fold.js';
import { decideNext, type NextInput, type NextStep } from '../core/next.js';
import { extractHandSection, isHandPlaceholder } from '../core/readme.js';
import type { Tuning } from './tuning.js';
import { MEMO } from './tip-memo.js';

/** What the decision reads of a tuning: its fold and tip files (the README's, when known, for its note). */
export interface NextParts {
  state: TuningState;
  config: Config | null;
  selection: Selection | null;
  dir: string;
  readme?: string | null;
}

/** The pure decision's input (no dataset read needed). */
export function nextInputOf(tuning: NextParts): NextInput {
  const complex = new Set(tuning.selection?.complex ?? []);
  const stale =
    tuning.selection !== null && tuning.state.dataset !== null && tuning.selection.datasetRev !== tuning.state.dataset.rev;
  return {
    state: tuning.state,
    config: tuning.config,
    selection: stale ? [] : (tuning.selection?.ids ?? []),
    complexity: (id) => (complex.has(id) ? 'complex' : 'medium'),
    dir: tuning.dir,
    readmePlaceholder: typeof tuning.readme === 'string' && isHandPlaceholder(extractHandSection(tuning.readme)),
  };
}

export function nextInputFor(tuning: Tuning): NextInput {
  return nextInputOf(tuning);
}

/** Kept per branch tip in the cache (src/app/cache.ts): every input above is read at the tip. */
export function nextFor(tuning: Tuning): NextStep {
  return tuning.memo ? tuning.memo(MEMO.next, () => decideNext(nextInputFor(tuning))) : decideNext(nextInputFor(tuning));
}
