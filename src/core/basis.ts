import { batchNumbered, halfRuns, isVoidRun, type EditState, type RunState, type TuningState } from './fold.js';

/**
 * No verdict on prose no run has seen (docs/method.md#noise). A grade can
 * revert the edits its run tried (docs/grading.md, "Edits settle at
 * grading"), and then the branch holds prose that run did not run. A half
 * passes only on a run of the prose the branch holds: the run itself when
 * nothing it ran was reverted, else an earlier run of the same half that ran
 * exactly that prose (`Tune-Prose` of its run commit against the grade's).
 * That run is the half's *basis*: its wrong cases are the ones the difficult
 * list must hold, and the candidate memory is built from what its cases
 * wrote. Pure.
 */

/**
 * The run of `run`'s batch and half whose prose is `held` (by default the
 * prose `run`'s latest grade left on the branch): `run` itself, or the latest
 * earlier finished, graded, not VOID run of the half on exactly that prose;
 * null when no run of the half has seen it. A history without the prose
 * recorded (written before it was, or imported), or one where none of the
 * edits `run` tried was reverted after it, reads as today: `run`.
 */
export function basisRun(state: TuningState, run: RunState, prose?: string | null): RunState | null {
  const held = prose !== undefined ? prose : (run.grade?.prose ?? null);
  if (run.half === null || held === null || run.prose === null || run.prose === held) return run;
  // On the recorded history, only a revert of what `run` tried makes its prose
  // one the half left behind; an edit kept on purpose (`grade --keep`) is a
  // person's choice on record, and the final check runs the prose it leaves.
  // (A grade being decided passes `prose`: its reverts are not folded yet.)
  if (prose === undefined && revertedAfter(state, run).length === 0) return run;
  const earlier = halfRuns(state, run.batch, run.half)
    .filter((r) => r !== run && r.startIndex < run.startIndex && r.finished && !isVoidRun(r) && r.grade !== null && r.prose === held);
  return earlier[earlier.length - 1] ?? null;
}

/**
 * The passing no-memory run of a batch: its latest PASSED no-memory run's
 * basis (the run the candidate memory comes from), or null.
 */
export function passingNomemRun(state: TuningState, batch: number): RunState | null {
  const runs = batchNumbered(state, batch)?.runs ?? [];
  const passed = [...runs].reverse().find((r) => r.half === 'nomem' && r.grade?.verdict === 'PASSED');
  return passed ? (basisRun(state, passed) ?? passed) : null;
}

/** The edits of `run`'s half that were reverted after `run` tried them: why the branch no longer holds its prose. */
export function revertedAfter(state: TuningState, run: RunState): EditState[] {
  return state.edits.filter((e) => e.batch === run.batch && e.half === run.half && e.status === 'reverted' && e.triedBy === run.name);
}
