import type { BatchPlan } from '../contracts/files.js';
import { formatRunName, parseRunName, type Half } from './names.js';
import { isSquashedMessage } from './rewritten.js';
import { parseStep, unsealedStep, type Keep, type Step, type Verdict } from './steps.js';
import {
  batchCases, batchIndex, batchNumbered, closedHalf, confirmsEdit, currentBatch, defaultAims, editsTriedBy, emptyState, isVoidRun, latestGradedRun,
  type BatchState, type EditState, type HistoryCommit, type RunState, type TuningState,
} from './tuning-state.js';

// The state's shape and the questions asked of it live in tuning-state.ts; every importer of the fold gets both.
export * from './tuning-state.js';

/*
 * The fold: applying each step commit, oldest first, from the tuning's init
 * commit to the branch tip, to the state (docs/git-model.md). Pure: no I/O.
 */

/**
 * What one fold keeps at hand so a step costs the same on any history (no
 * scan of every edit or run per step). Not part of the state: rebuilt from it
 * when a fold starts (a cached state goes on from where it was).
 */
interface FoldIndex {
  /** Every edit before this position is settled for good: an edit never becomes pending again. */
  settledBefore: number;
  /** The latest graded run of a batch: the one an edit made now responds to. */
  latestGraded: RunState | null;
}

function foldIndex(state: TuningState): FoldIndex {
  return { settledBefore: 0, latestGraded: latestGradedRun(state) };
}


/** The pending edits, oldest first. */
function pendingEdits(state: TuningState, ix: FoldIndex): EditState[] {
  const edits = state.edits;
  while (ix.settledBefore < edits.length && edits[ix.settledBefore]!.status !== 'pending') ix.settledBefore++;
  const out: EditState[] = [];
  for (let i = ix.settledBefore; i < edits.length; i++) if (edits[i]!.status === 'pending') out.push(edits[i]!);
  return out;
}

/** Pending edits of halves that just closed can never be tried: they count unconfirmed. */
function settleClosedHalves(state: TuningState, ix: FoldIndex): void {
  for (const edit of pendingEdits(state, ix)) {
    const why = closedHalf(state, edit.batch, edit.half);
    if (why) settleUntried(edit, why);
  }
}

function settleUntried(edit: EditState, why: string): void {
  edit.status = 'unconfirmed';
  edit.settledBy = `no run (${why})`;
  edit.untried = true;
}


function settleEdits(state: TuningState, run: RunState, ix: FoldIndex): void {
  if (!run.grade || run.half === null || isVoidRun(run)) return;
  for (const edit of editsTriedBy(state, run, pendingEdits(state, ix))) {
    edit.status = confirmsEdit(state, edit, run, run.grade.wrong) ? 'confirmed' : 'unconfirmed';
    edit.settledBy = run.name;
    edit.triedBy = run.name;
  }
}

/** A grade's `Tune-Keep` lines: the unconfirmed edits a person kept on purpose. */
function applyKeep(state: TuningState, keep: Keep, oid: string): void {
  for (const kept of keep.edits) {
    const edit = state.edits.find((e) => e.oid === kept);
    if (!edit || edit.status !== 'unconfirmed') {
      state.warnings.push(`grade ${oid.slice(0, 7)} keeps ${kept.slice(0, 7)}, which is ${edit ? edit.status : 'not an edit'}: ignored`);
      continue;
    }
    edit.status = 'kept';
    edit.kept = { by: keep.by, why: keep.why, commit: oid };
  }
}

/**
 * The edits that recording this grade of `run` leaves unconfirmed, oldest
 * first (docs/grading.md, "Edits settle at grading"): those the run tried
 * and did not confirm (a first grade only: a regrade settles nothing again),
 * and those a closed half left untried (made between batches). A VOID grade
 * and the final check's settle none: the grade then reverts these, or keeps
 * the ones a person names.
 */
export function unconfirmedAtGrade(state: TuningState, run: RunState, wrong: readonly string[], verdict: Verdict, flaky: readonly string[] = []): EditState[] {
  if (verdict === 'VOID') return [];
  return gradeCandidates(state, run).filter((e) => e.untried || !confirmsEdit(state, e, run, wrong, verdict, flaky));
}

/**
 * The edits a grade of `run` may leave unconfirmed, whatever its findings
 * say, oldest first: the edits its run tried (a first grade only) and the
 * untried ones standing unconfirmed. `unconfirmedAtGrade` is these less the
 * ones the run confirms; the grade reads them all before it decides.
 */
export function gradeCandidates(state: TuningState, run: RunState): EditState[] {
  if (run.half === null || run.void !== null) return [];
  const tried = run.grade === null ? editsTriedBy(state, run) : [];
  const untried = state.edits.filter((e) => e.untried && e.status === 'unconfirmed');
  return [...untried, ...tried].sort((a, b) => a.index - b.index);
}

/** What recording a grade does to edits: revert these, keep those; `problems` for a `--keep` that names no edit it could keep. */
export interface GradeSettlement {
  revert: EditState[];
  keep: EditState[];
  problems: string[];
}

/**
 * Which edits a grade reverts and which it keeps: every edit it leaves
 * unconfirmed is reverted unless `keep` names it (an id prefix); `keep` may
 * also name an edit already standing unconfirmed (a history written before
 * grades reverted). Pure: the grade applies it.
 */
export function settleAtGrade(state: TuningState, run: RunState, wrong: readonly string[], verdict: Verdict, keep: readonly string[], flaky: readonly string[] = []): GradeSettlement {
  const settling = unconfirmedAtGrade(state, run, wrong, verdict, flaky);
  const keepable = [...settling, ...state.edits.filter((e) => e.status === 'unconfirmed' && !settling.includes(e))];
  const kept: EditState[] = [];
  const problems: string[] = [];
  for (const prefix of keep) {
    const p = prefix.toLowerCase();
    const matches = state.edits.filter((e) => e.oid.startsWith(p));
    const edit = matches[0];
    if (matches.length !== 1 || !edit) {
      problems.push(matches.length === 0 ? `${prefix} is not an edit of tuning ${state.tuning}` : `${prefix} names ${matches.length} edits: give more of the id`);
    } else if (!keepable.includes(edit)) {
      const why = edit.status === 'pending' ? 'pending: no run has tried it yet'
        : edit.status === 'confirmed' ? `confirmed by ${edit.settledBy}: it stays without keeping`
        : edit.status === 'kept' ? `already kept by ${edit.kept?.by}`
        : `already reverted by ${edit.settledBy?.slice(0, 7)}`;
      problems.push(`${edit.oid.slice(0, 7)} is ${why}`);
    } else if (!kept.includes(edit)) {
      kept.push(edit);
    }
  }
  return { revert: settling.filter((e) => !kept.includes(e)), keep: kept, problems };
}

function applyDifficult(state: TuningState, step: Step, index: number): void {
  const batch = currentBatch(state)?.plan.batch ?? 0;
  for (const change of step.difficult) {
    const open = state.difficult.find((e) => e.id === change.id && !e.fixed);
    if (change.op === 'add') {
      if (open) open.reason = change.reason;
      else state.difficult.push({ id: change.id, reason: change.reason, batch, fixed: false, index });
    } else if (open) {
      open.fixed = true;
    } else {
      state.warnings.push(`difficult fix ${change.id}: not on the open list`);
    }
  }
}

function applyStep(state: TuningState, step: Step, commit: HistoryCommit, index: number, selection: readonly string[], ix: FoldIndex): void {
  switch (step.step) {
    case 'init':
    case 'config':
    case 'note':
    case 'difficult':
      break;
    case 'dataset':
      state.dataset = { cases: step.cases, rev: step.rev };
      state.heldOut = step.heldOut ?? null;
      break;
    case 'select':
      state.selection = { selected: step.selected, total: step.total };
      break;
    case 'plan': {
      const plan: BatchPlan = {
        batch: step.batch, size: step.size, why: '', kind: step.kind, new: step.new, recheck: step.recheck,
      };
      const existing = batchIndex(state, step.batch);
      if (existing >= 0) {
        // A batch is planned once; a second plan only replaces one no run has used.
        if (state.batches[existing]!.runs.length > 0) {
          state.warnings.push(`plan of batch ${step.batch} after its runs started: ignored`);
          break;
        }
        state.batches[existing] = { plan, index, runs: [] };
      } else {
        state.batches.push({ plan, index, runs: [] });
      }
      settleClosedHalves(state, ix);
      break;
    }
    case 'run-plan':
      state.planned = step.run;
      break;
    case 'run-start': {
      state.planned = null;
      const id = parseRunName(step.run);
      if (!id) {
        state.warnings.push(`run-start of unknown run name ${step.run}`);
        break;
      }
      const existing = state.runs.get(step.run);
      if (existing) {
        // A resumed run records its start again.
        existing.concurrency = step.concurrency;
        existing.stopped = null;
        break;
      }
      let cases: string[];
      let batchState: BatchState | undefined;
      if (id.kind === 'final') {
        cases = [...selection];
      } else {
        batchState = batchNumbered(state, id.batch);
        if (!batchState) {
          state.warnings.push(`run ${step.run} of a batch never planned`);
          break;
        }
        cases = batchCases(batchState.plan);
      }
      const run: RunState = {
        name: step.run, id,
        batch: id.kind === 'batch' ? id.batch : 0,
        half: id.kind === 'batch' ? id.half : null,
        number: id.kind === 'batch' ? id.number : state.final.length + 1,
        cases, startIndex: index, startOid: commit.oid, finished: false,
        concurrency: step.concurrency, void: null, stopped: null, tokens: 0, repeatTokens: 0, costUsd: 0,
        runOid: null, prose: null, grade: null,
      };
      state.runs.set(step.run, run);
      if (batchState) batchState.runs.push(run);
      else state.final.push(run);
      if (run.half !== 'nomem') settleClosedHalves(state, ix);
      break;
    }
    case 'run': {
      const run = state.runs.get(step.run);
      if (!run) {
        state.warnings.push(`run ${step.run} finished without a start`);
        break;
      }
      run.finished = true;
      run.concurrency = step.concurrency;
      run.void = step.void;
      run.stopped = step.stopped;
      // The run commit carries the whole run's usage; a stop may have counted part of it.
      state.usage.tokens += step.tokens - run.tokens;
      state.usage.costUsd += step.costUsd - run.costUsd;
      run.tokens = step.tokens;
      run.repeatTokens = step.repeatTokens ?? 0;
      run.costUsd = step.costUsd;
      run.runOid = commit.oid;
      run.prose = step.prose ?? null;
      break;
    }
    case 'run-stop': {
      const run = state.runs.get(step.run);
      if (!run || run.finished) {
        state.warnings.push(`run-stop of ${step.run}, which is not running`);
        break;
      }
      run.stopped = step.reason;
      state.usage.tokens += step.tokens - run.tokens;
      state.usage.costUsd += step.costUsd - run.costUsd;
      run.tokens = step.tokens;
      run.costUsd = step.costUsd;
      break;
    }
    case 'grade': {
      const run = state.runs.get(step.run);
      if (!run || !run.finished) {
        state.warnings.push(`grade of ${step.run}, which has not finished`);
        break;
      }
      const first = run.grade === null;
      const flaky = step.flaky ?? [];
      run.grade = {
        verdict: step.verdict, wrong: step.wrong, review: step.review, oid: commit.oid, index, prose: step.prose ?? null,
        ...(step.heldOut ? { heldOut: step.heldOut } : {}), ...(flaky.length > 0 ? { flaky } : {}),
      };
      // Graded last of all: what an edit made now responds to.
      if (run.half !== null) ix.latestGraded = run;
      if (first) settleEdits(state, run, ix);
      if (step.keep) applyKeep(state, step.keep, commit.oid);
      break;
    }
    case 'edit': {
      const run = state.runs.get(step.run) ?? ix.latestGraded;
      if (!run || run.half === null) {
        state.warnings.push(`edit ${commit.oid.slice(0, 7)} responds to no graded run`);
        break;
      }
      addEdit(state, run, commit.oid, index, step.aims ?? defaultAims(run), false);
      break;
    }
    case 'revert':
      for (const oid of step.reverts) {
        const edit = state.edits.find((e) => e.oid === oid);
        if (edit && edit.status !== 'reverted') {
          // Reverted by the grade that settles it (its revert commits come first), or by hand before that grade: the run tried it all the same.
          if (edit.status === 'pending') edit.triedBy = runThatTried(state, edit)?.name ?? null;
          edit.status = 'reverted';
          edit.settledBy = commit.oid;
        }
      }
      break;
    case 'candidate': {
      const run = state.runs.get(step.run);
      state.candidate = { run: step.run, batch: run?.batch ?? 0, index };
      break;
    }
    case 'baseline':
      state.baseline = { oid: commit.oid, init: step.init, selection: step.selection, heldOut: step.heldOut, heldOutRev: step.heldOutRev };
      // What the baseline spent counts against the budget, as a run's does.
      state.usage.tokens += step.selection.tokens + (step.heldOut?.tokens ?? 0);
      state.usage.costUsd += step.selection.costUsd + (step.heldOut?.costUsd ?? 0);
      break;
    case 'checkpoint':
      if (!state.checkpoints.includes(step.batch)) state.checkpoints.push(step.batch);
      settleClosedHalves(state, ix);
      break;
  }
}

/** The finished, not VOID run of a pending edit's half that started after it (and so tried it), if any. */
function runThatTried(state: TuningState, edit: EditState): RunState | undefined {
  const runs = batchNumbered(state, edit.batch)?.runs ?? [];
  for (let i = runs.length - 1; i >= 0; i--) {
    const run = runs[i]!;
    if (run.half === edit.half && run.startIndex > edit.index && run.finished && !isVoidRun(run)) return run;
  }
  return undefined;
}

/** An edit is pending until a run of its half tries it; one made after its half closed never will be. */
function addEdit(state: TuningState, run: RunState, oid: string, index: number, aims: string[], hand: boolean): void {
  const edit: EditState = {
    oid, index, run: run.name, batch: run.batch, half: run.half!,
    aims, status: 'pending', settledBy: null, triedBy: null, kept: null, hand, untried: false,
  };
  const closed = closedHalf(state, edit.batch, edit.half);
  if (closed) settleUntried(edit, closed);
  state.edits.push(edit);
}

/**
 * The run a hand commit is an edit after: when it touches prose, the latest
 * graded batch run; null (none graded, or no prose touched): the commit is
 * not an edit. One rule for the fold and the commit hooks (hand-commit.ts).
 */
export function handEditRun(latestGraded: RunState | null, touchesProse: boolean): RunState | null {
  return touchesProse && latestGraded !== null && latestGraded.half !== null ? latestGraded : null;
}

/** A hand commit on the branch that touched prose after a graded run is an edit. */
function applyHandCommit(state: TuningState, commit: HistoryCommit, index: number, ix: FoldIndex): void {
  const run = handEditRun(ix.latestGraded, commit.touchesProse === true);
  if (run) addEdit(state, run, commit.oid, index, defaultAims(run), true);
}

/**
 * Folds commits (oldest first, starting at the tuning's init commit) into
 * the tuning's state. `selection` (the ids of selection.json at the tip) is
 * what a final-check run covers. Never throws on a well-formed commit list: steps that
 * do not fit are kept as warnings, so a hand-made history still reads.
 * `from` continues a fold: the state of the commits before these (it is
 * updated in place), so a cached state takes only the commits added since.
 */
export function foldHistory(
  tuning: string,
  commits: readonly HistoryCommit[],
  selection: readonly string[] = [],
  from?: TuningState,
): TuningState {
  const state = from ?? emptyState(tuning);
  const ix = foldIndex(state);
  const offset = state.commits;
  commits.forEach((commit, i) => {
    const index = offset + i;
    state.commits += 1;
    state.tipOid = commit.oid;
    const step = commit.step !== undefined ? commit.step : parseStep(commit.message);
    if (step === null || step.tuning !== tuning) {
      const forged = step === null ? unsealedStep(commit.message, tuning) : null;
      if (forged) state.warnings.push(`commit ${commit.oid.slice(0, 7)} carries ${forged}: its trailers are ignored, it counts as a hand commit`);
      if (commit.stepFiles?.length) state.rewritten.push({ oid: commit.oid, index, kind: 'unsealed', files: commit.stepFiles });
      applyHandCommit(state, commit, index, ix);
      return;
    }
    // Still folded as what it says: the repair `next` names comes first in any case.
    if (step.step === 'note' && commit.stepFiles?.length) state.rewritten.push({ oid: commit.oid, index, kind: 'note', files: commit.stepFiles });
    else if (isSquashedMessage(commit.message)) state.rewritten.push({ oid: commit.oid, index, kind: 'squashed', files: [] });
    if (step.step === 'init' && state.initOid === null) state.initOid = commit.oid;
    applyStep(state, step, commit, index, selection, ix);
    applyDifficult(state, step, index);
  });
  return state;
}

export function runName(batch: number, half: Half, number: number): string {
  return formatRunName({ kind: 'batch', batch, half, number });
}
