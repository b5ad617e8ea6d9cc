import { basisRun } from './basis.js';
import { viewDifficult } from './difficult.js';
import { confirmsEdit, countedRuns, editsTriedBy, halfRuns, type RunState, type TuningState } from './fold.js';

/**
 * The rules a PASSED verdict must meet (docs/method.md#grading). Each broken rule names
 * itself and the command that fixes it; `grade` refuses with them and `next`
 * reports them as `refused` (or `confirm`, when edits wait for a run).
 */
export interface RuleBreak {
  rule: 'review' | 'pending' | 'unreverted' | 'unsettled' | 'wrong-not-difficult';
  message: string;
  fix: string;
  /** `wrong-not-difficult`: the cases to put on the list. */
  ids?: string[];
}

export interface PassedRuleInput {
  state: TuningState;
  run: RunState;
  maxRuns: number;
  maxRetries: number;
  /** Findings being graded, when they are not yet recorded (grade checks before writing). */
  review?: boolean;
  wrong?: readonly string[];
  /** Edits the grade being recorded reverts or keeps before its own commit (their ids): settled, whatever their status now. */
  settling?: readonly string[];
  /** The prose the branch holds once the grade being recorded is (its reverts applied); default: the recorded grade's. */
  prose?: string | null;
  /** Cases known flaky in this run (docs/method.md#noise): none unconfirms an edit that fixed its aim. */
  flaky?: readonly string[];
}

export function reviewHeading(run: RunState): string {
  return run.half === 'mem' ? '## Memory review' : '## Cost review';
}

export function passedRuleBreaks(input: PassedRuleInput): RuleBreak[] {
  const { state, run } = input;
  const breaks: RuleBreak[] = [];
  if (run.half === null) return breaks; // the final check is VERIFIED, never PASSED
  const review = input.review ?? run.grade?.review ?? false;
  const wrong = input.wrong ?? run.grade?.wrong ?? [];
  if (!review) {
    breaks.push({
      rule: 'review',
      message: `PASSED needs a \`${reviewHeading(run)}\` section in the findings`,
      fix: `git tune grade --draft --run ${run.name}`,
    });
  }
  // An edit made after the half closed (between batches) was never the half's to try: nothing waits for it.
  const settling = new Set(input.settling ?? []);
  const edits = state.edits.filter((e) => e.batch === run.batch && e.half === run.half && !e.untried && !settling.has(e.oid));
  // An edit made before this run started is settled by this run's grade; only later ones wait for a run.
  const pending = edits.filter((e) => e.status === 'pending' && e.index > run.startIndex);
  // A first grade settles the edits this run tried: judge them as it will record them.
  const tried = run.grade === null
    ? editsTriedBy(state, run).filter((e) => !settling.has(e.oid) && !confirmsEdit(state, e, run, wrong, 'PASSED', input.flaky ?? []))
    : [];
  const unconfirmed = [...edits.filter((e) => e.status === 'unconfirmed'), ...tried];
  const atLimit = countedRuns(halfRuns(state, run.batch, run.half)) >= input.maxRuns;
  if (!atLimit && unconfirmed.length > 0) {
    // Rule (b'): a half passes holding only confirmed edits, or ones a person kept on purpose.
    const ids = unconfirmed.map((e) => e.oid.slice(0, 7));
    breaks.push({
      rule: 'unsettled',
      message: `edit${ids.length === 1 ? '' : 's'} ${ids.join(', ')} of this half ${ids.length === 1 ? 'is' : 'are'} unconfirmed and neither reverted nor kept (to keep one on purpose: git tune grade --keep <commit> --why "…")`,
      fix: ids.map((id) => `git tune revert ${id}`).join(' && '),
    });
  }
  if (atLimit) {
    const left = [...pending, ...unconfirmed];
    if (left.length > 0) {
      breaks.push({
        rule: 'unreverted',
        message: `the half used all ${input.maxRuns} runs: PASSED needs every unconfirmed and pending edit reverted first (${left.map((e) => e.oid.slice(0, 7)).join(', ')})`,
        fix: 'git tune revert',
      });
    }
  } else if (pending.length > 0) {
    breaks.push({
      rule: 'pending',
      message: `an edit made after this run is pending (${pending.map((e) => e.oid.slice(0, 7)).join(', ')}): no run has tried it`,
      fix: 'git tune run',
    });
  }
  // Rule (c) on the run the half passes on: the run of the prose the branch holds (src/core/basis.ts).
  const basis = basisRun(state, run, input.prose !== undefined ? input.prose : (run.grade?.prose ?? null));
  const stillWrong = basis && basis !== run ? basis.grade!.wrong : wrong;
  const onList = new Set(viewDifficult(state, input.maxRetries).filter((e) => e.status !== 'fixed').map((e) => e.id));
  const missing = stillWrong.filter((id) => !onList.has(id));
  if (missing.length > 0) {
    breaks.push({
      rule: 'wrong-not-difficult',
      message: basis && basis !== run
        ? `PASSED on ${basis.name}, the run of the prose the branch holds, needs each case wrong there on the difficult list: ${missing.join(', ')}`
        : `PASSED with wrong cases needs each on the difficult list: ${missing.join(', ')}`,
      fix: missing.map((id) => `git tune difficult add ${id} --why wrong`).join(' && '),
      ids: missing,
    });
  }
  return breaks;
}
