import { handEditRun, latestGradedRun, type EditState, type TuningState } from './fold.js';
import { parseAims } from './edit.js';
import { latestBatchRun } from './next.js';
import { formatStep, SEAL_TRAILER, type Step } from './steps.js';
import { parseMessage, type Trailer } from './trailers.js';

/**
 * The step a hand commit on the tuning branch is, from its message and what
 * it stages (docs/method.md#edits, docs/git-model.md), for the commit hooks to write as its trailers: a
 * revert of an edit is a `revert`; a commit that touches prose after a
 * graded run is an `edit` of that run (the fold's rule, `handEditRun`);
 * anything else is a `note`. Pure: the hook reads the staged files.
 */
export interface HandCommitPlan {
  step: Step;
  /** Our trailers, without the seal. */
  trailers: Trailer[];
  summary: string;
  warnings: string[];
}

const REVERTS = /This reverts commit ([0-9a-f]{40})/;

/** The edit `git revert`'s message says it reverts, while it stands. */
export function revertedEdit(state: TuningState, message: string): EditState | undefined {
  const reverted = REVERTS.exec(message)?.[1];
  return reverted ? state.edits.find((e) => e.oid === reverted && e.status !== 'reverted') : undefined;
}

export interface HandCommitInput {
  tuning: string;
  state: TuningState;
  message: string;
  /** The staged files that are prose or memory policy (none read for a revert). */
  prose: readonly string[];
  isMemoryPolicy: (file: string) => boolean;
  /** changes.md of the run the edit follows, as staged (`handEditRun` names the run). */
  changes: string | null;
}

export function planHandCommit(input: HandCommitInput): HandCommitPlan {
  const { state, prose } = input;
  const base = { tuning: input.tuning, difficult: [] };
  const warnings: string[] = [];
  const edit = revertedEdit(state, input.message);
  let step: Step;
  let summary: string;
  if (edit) {
    step = { ...base, step: 'revert', reverts: [edit.oid] };
    summary = `a revert of the edit ${edit.oid.slice(0, 7)}`;
  } else {
    const run = handEditRun(latestGradedRun(state), prose.length > 0);
    if (run) {
      const latest = latestBatchRun(state);
      if (latest && latest !== run && !latest.grade) warnings.push(`${latest.name} is not graded yet: this edit is recorded after ${run.name}`);
      if (run.half === 'mem') {
        const outside = prose.filter((f) => !input.isMemoryPolicy(f));
        if (outside.length > 0) warnings.push(`${run.name} is a with-memory run: only memory-policy files should change (also changed: ${outside.join(', ')})`);
      }
      step = { ...base, step: 'edit', run: run.name, aims: input.changes === null ? null : parseAims(input.changes) };
      summary = `an edit after ${run.name} (${prose.join(', ')})`;
    } else {
      step = { ...base, step: 'note' };
      summary = prose.length > 0 ? 'a note (prose changed before any run was graded)' : 'a note';
    }
  }
  const trailers = parseMessage(formatStep(step, 'x')).trailers.filter(([k]) => k !== SEAL_TRAILER);
  return { step, trailers, summary, warnings };
}
