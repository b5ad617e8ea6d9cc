import type { BatchPlan, DifficultReason } from '../contracts/files.js';
import type { Half, RunId } from './names.js';
import type { RewrittenStep } from './rewritten.js';
import type { Score, Step, Verdict } from './steps.js';

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
  /** Of `tokens`, what repeats of flips spent: comparisons of runs (memory's saving) use the first answers only. */
  repeatTokens: number;
  costUsd: number;
  runOid: string | null;
  /** The prose this run ran (its run commit's `Tune-Prose`); null in older histories. */
  prose: string | null;
  grade: Grade | null;
}

/** A run's tokens for the first answers (each case once): what runs are compared on, the repeats of flips left out. */
export const answerTokens = (run: Pick<RunState, 'tokens' | 'repeatTokens'>): number => run.tokens - run.repeatTokens;

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
  const wasRight = before ? rightCases(before) : [];
  const fixedOne = fixesAnAim(state, edit, run, wrong, verdict);
  // A flaky case (its answers disagree on the same prose) does not unconfirm an edit that fixed what it aimed at (docs/method.md#noise).
  const noisy = new Set(fixedOne ? flaky : []);
  const brokeOne = wasRight.some((id) => nowWrong.has(id) && !noisy.has(id));
  return fixedOne && !brokeOne;
}

/**
 * The first half of confirming an edit: `run` (its cases `wrong`) turned one
 * of the edit's aims right (wrong in the run the edit answered, or, on a
 * PASSED verdict of a half that fell short, in that run at all). Until
 * one does, the aims' answers alone decide the edit (docs/method.md#noise).
 */
export function fixesAnAim(state: TuningState, edit: EditState, run: RunState, wrong: readonly string[], verdict: Verdict | null): boolean {
  const before = state.runs.get(edit.run);
  const nowWrong = new Set(wrong);
  const wasWrong = new Set(before?.grade?.wrong ?? []);
  const halfShort = before !== undefined && verdict === 'PASSED' && shortOfHalf(edit.half, before.grade?.verdict);
  return edit.aims.some((id) => run.cases.includes(id) && !nowWrong.has(id) && (wasWrong.has(id) || (halfShort && before!.cases.includes(id))));
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


/** The latest graded run of a batch: the one an edit made now responds to (docs/method.md#edits). */
export function latestGradedRun(state: TuningState): RunState | null {
  let best: RunState | null = null;
  for (const run of state.runs.values()) {
    if (run.grade && run.half !== null && (!best || run.grade.index > best.grade!.index)) best = run;
  }
  return best;
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
export function shortOfHalf(half: Half, verdict: Verdict | null | undefined): boolean {
  if (half === 'nomem') return verdict === 'CORRECT';
  return verdict !== undefined && verdict !== null && verdict !== 'PASSED' && verdict !== 'VOID';
}
