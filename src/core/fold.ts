import type { BatchPlan, DifficultReason } from '../contracts/files.js';
import { formatRunName, parseRunName, type Half, type RunId } from './names.js';
import { isSquashedMessage, type RewrittenStep } from './rewritten.js';
import { parseStep, unsealedStep, type Keep, type Score, type Step, type Verdict } from './steps.js';

/**
 * The state of a tuning is the fold of its step commits, oldest first, from
 * its init commit to the branch tip (docs/git-model.md). Pure: no I/O.
 */
export interface HistoryCommit {
  oid: string;
  message: string;
  /** For a commit without step trailers: did it change prose files? */
  touchesProse?: boolean;
  /**
   * For a commit without step trailers, or a `note`: the files only a step
   * writes that it changed (src/core/rewritten.ts); set by the reader.
   */
  stepFiles?: string[];
  /** `parseStep(message)`, when the reader has parsed it already (the fold then does not parse it again). */
  step?: Step | null;
}

export interface Grade {
  verdict: Verdict;
  wrong: string[];
  review: boolean;
  oid: string;
  index: number;
  /** The final check's held-out set, as its grade recorded it (docs/held-out.md). */
  heldOut?: Score;
  /** The prose the branch held once this grade was recorded (its reverts applied); null in older histories. */
  prose: string | null;
  /** Cases the grade put on the difficult list as `flaky` (docs/method.md#noise): their wrong answer unconfirms no edit that fixed its aim. */
  flaky?: string[];
}

/** The latest baseline: the original prose's results (docs/held-out.md). */
export interface BaselineState {
  oid: string;
  init: string;
  selection: Score;
  heldOut: Score | null;
  heldOutRev: string | null;
}

export interface RunState {
  name: string;
  id: RunId;
  batch: number; // 0 for the final check
  half: Half | null; // null for the final check
  number: number;
  cases: string[]; // what the run runs: the batch's cases, or the selection for the final check
  startIndex: number;
  startOid: string;
  finished: boolean;
  concurrency: number;
  void: string | null;
  stopped: string | null;
  tokens: number;
  costUsd: number;
  runOid: string | null;
  /** The prose this run ran (its run commit's `Tune-Prose`); null in older histories. */
  prose: string | null;
  grade: Grade | null;
}

/**
 * Where an edit stands. `kept`: unconfirmed, and kept on purpose by a person
 * (`git tune grade --keep`); `reverted`: undone by a revert commit.
 */
export type EditStatus = 'pending' | 'confirmed' | 'unconfirmed' | 'reverted' | 'kept';

/** Who kept an unconfirmed edit on purpose, why, and the grade commit that says so. */
export interface EditKeep {
  by: string;
  why: string;
  commit: string;
}

export interface EditState {
  oid: string;
  index: number;
  run: string; // the graded run it responds to
  batch: number;
  half: Half;
  aims: string[];
  status: EditStatus;
  /**
   * The run that confirmed it or not, or the revert commit that undid it; for
   * an `untried` edit, why no run tried it ("no run (batch 2's memory was checkpointed)").
   */
  settledBy: string | null;
  /** The run whose grade confirmed it or not (kept when the edit is reverted or kept later); null while no run tried it. */
  triedBy: string | null;
  /** Set when its status is `kept`. */
  kept: EditKeep | null;
  hand: boolean;
  /**
   * Its half closed before any run of it tried the edit (a hand commit between
   * batches, say): it counts unconfirmed (docs/method.md#edits: no next run of its batch and
   * half shows it fixed anything), and no PASSED of that half waits for it.
   */
  untried: boolean;
}

export interface DifficultEntry {
  id: string;
  reason: DifficultReason;
  batch: number; // the batch it was added in (0: before any batch)
  fixed: boolean;
  index: number;
}

export interface BatchState {
  plan: BatchPlan;
  index: number;
  runs: RunState[]; // in the order they started
}

export interface TuningState {
  tuning: string;
  initOid: string | null;
  tipOid: string | null;
  commits: number;
  dataset: { cases: number; rev: string } | null;
  selection: { selected: number; total: number } | null;
  batches: BatchState[];
  final: RunState[];
  runs: Map<string, RunState>;
  edits: EditState[];
  difficult: DifficultEntry[];
  candidate: { run: string; batch: number; index: number } | null;
  checkpoints: number[];
  /**
   * A run laid out but never started (an imported run folder holding only its
   * cases, docs/import.md): `next` says to run it while no later run has started.
   */
  planned: string | null;
  usage: { tokens: number; costUsd: number };
  /** The latest `git tune baseline`, or null. */
  baseline: BaselineState | null;
  /** The held-out set the latest dataset step left (its size and rev), or null (docs/held-out.md). */
  heldOut: { cases: number; rev: string } | null;
  /** Steps that did not fit the history (a grade of an unknown run, …). */
  warnings: string[];
  /** Commits that rewrote a step (an amend, a reword, a squash), oldest first: `next` names the repair first (docs/git-model.md#rewritten-steps). */
  rewritten: RewrittenStep[];
}

export function emptyState(tuning: string): TuningState {
  return {
    tuning, initOid: null, tipOid: null, commits: 0, dataset: null, selection: null,
    batches: [], final: [], runs: new Map(), edits: [], difficult: [], candidate: null,
    checkpoints: [], planned: null, usage: { tokens: 0, costUsd: 0 }, baseline: null, heldOut: null, warnings: [], rewritten: [],
  };
}

export function currentBatch(state: TuningState): BatchState | null {
  return state.batches[state.batches.length - 1] ?? null;
}

export function batchCases(plan: BatchPlan): string[] {
  return [...plan.new, ...plan.recheck];
}

/** Runs of one batch and half, in order. */
export function halfRuns(state: TuningState, batch: number, half: Half): RunState[] {
  const b = batchNumbered(state, batch);
  return b ? b.runs.filter((r) => r.half === half) : [];
}

/**
 * The batch planned with number `n`. Numbers are unique (a second plan
 * replaces the first), so the search may start from the end, where the
 * batch a step names almost always is.
 */
export function batchNumbered(state: TuningState, n: number): BatchState | undefined {
  const i = batchIndex(state, n);
  return i < 0 ? undefined : state.batches[i];
}

/** Where batch `n` is in `state.batches`, or -1. */
export function batchIndex(state: TuningState, n: number): number {
  for (let i = state.batches.length - 1; i >= 0; i--) if (state.batches[i]!.plan.batch === n) return i;
  return -1;
}

export const isVoidRun = (run: RunState) => run.void !== null || run.grade?.verdict === 'VOID';

/** Runs that count toward `maxRuns`: finished and not VOID. */
export function countedRuns(runs: readonly RunState[]): number {
  return runs.filter((r) => r.finished && !isVoidRun(r)).length;
}

export function rightCases(run: RunState): string[] {
  if (!run.grade) return [];
  const wrong = new Set(run.grade.wrong);
  return run.cases.filter((id) => !wrong.has(id));
}

/** Pending edits of the run's batch and half made before it started: its grade settles them. `among`: edits known to hold them all (the fold passes its pending ones). */
export function editsTriedBy(state: TuningState, run: RunState, among: readonly EditState[] = state.edits): EditState[] {
  return among.filter((e) => e.status === 'pending' && e.batch === run.batch && e.half === run.half && e.index < run.startIndex);
}

/**
 * docs/method.md#edits: a case the edit aims at turned right, and no case right before
 * turned wrong. `verdict` is the run's (the grade being recorded, before it is).
 * A case whose answer was right in a run that fell short of its half with
 * every answer right (cost left to cut, saved twice) turns right when the
 * half's next run is PASSED.
 */
export function confirmsEdit(
  state: TuningState, edit: EditState, run: RunState, wrong: readonly string[], verdict: Verdict | null = run.grade?.verdict ?? null,
  flaky: readonly string[] = run.grade?.flaky ?? [],
): boolean {
  const before = state.runs.get(edit.run);
  const nowWrong = new Set(wrong);
  const wasWrong = new Set(before?.grade?.wrong ?? []);
  const wasRight = before ? rightCases(before) : [];
  const halfShort = before !== undefined && verdict === 'PASSED' && shortOfHalf(edit.half, before.grade?.verdict);
  const turnedRight = (id: string) =>
    run.cases.includes(id) && !nowWrong.has(id) && (wasWrong.has(id) || (halfShort && before!.cases.includes(id)));
  const fixedOne = edit.aims.some(turnedRight);
  // A flaky case (its answers disagree on the same prose) does not unconfirm an edit that fixed what it aimed at (docs/method.md#noise).
  const noisy = new Set(fixedOne ? flaky : []);
  const brokeOne = wasRight.some((id) => nowWrong.has(id) && !noisy.has(id));
  return fixedOne && !brokeOne;
}

/**
 * Why no run of a batch's half comes any more, or null while it is open: a
 * later batch is planned, the final check started, the with-memory runs
 * started (for `nomem`), or the memory was checkpointed (for `mem`).
 */
export function closedHalf(state: TuningState, batch: number, half: Half): string | null {
  if (state.final.length > 0) return 'the final check had started';
  const later = state.batches.find((b) => b.plan.batch > batch);
  if (later) return `batch ${later.plan.batch} was planned`;
  if (half === 'mem' && state.checkpoints.includes(batch)) return `batch ${batch}'s memory was checkpointed`;
  if (half === 'nomem' && halfRuns(state, batch, 'mem').length > 0) return `batch ${batch}'s with-memory runs had started`;
  return null;
}

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

/** The latest graded run of a batch: the one an edit made now responds to (docs/method.md#edits). */
export function latestGradedRun(state: TuningState): RunState | null {
  let best: RunState | null = null;
  for (const run of state.runs.values()) {
    if (run.grade && run.half !== null && (!best || run.grade.index > best.grade!.index)) best = run;
  }
  return best;
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

/**
 * What an edit aims at unless its changes.md names cases (docs/method.md#edits): the cases
 * the run it responds to got wrong. A run with every answer right can still
 * fall short of its half as a whole, and an edit after it (a cost edit, a
 * memory-policy edit) then aims at all its cases, and the next run of the
 * half confirms it by passing.
 */
export function defaultAims(run: RunState): string[] {
  const wrong = run.grade?.wrong ?? [];
  if (wrong.length === 0 && run.half !== null && shortOfHalf(run.half, run.grade?.verdict)) return [...run.cases];
  return [...wrong];
}

/**
 * A verdict by which a run fell short of its half as a whole: with memory,
 * any but PASSED (not cheaper, or saved twice: docs/method.md#halves); without, CORRECT
 * (every answer right, cost left to cut: docs/method.md#grading). VOID says nothing.
 */
function shortOfHalf(half: Half, verdict: Verdict | null | undefined): boolean {
  if (half === 'nomem') return verdict === 'CORRECT';
  return verdict !== undefined && verdict !== null && verdict !== 'PASSED' && verdict !== 'VOID';
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
  if (run.half === null || verdict === 'VOID' || run.void !== null) return [];
  const tried = run.grade === null ? editsTriedBy(state, run).filter((e) => !confirmsEdit(state, e, run, wrong, verdict, flaky)) : [];
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
        concurrency: step.concurrency, void: null, stopped: null, tokens: 0, costUsd: 0,
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
