import type { JudgeFile } from '../contracts/judge.js';
import type { CaseRepeat, CaseResult } from '../contracts/result.js';
// findings.ts reads the outcomes of this module too; the cycle holds functions only, used at call time.
import { caseVerdict, type CaseVerdict } from './findings.js';
import { isVoidRun, type RunState, type TuningState } from './fold.js';
import { fixesAnAim } from './tuning-state.js';

/**
 * Noise (docs/method.md#noise): a case's answers (its first answer and the
 * repeats of it in the same run, on the same prose and memory), the
 * majority that decides, its right-rate, its token spread, and the margin a
 * cost comparison needs above that spread. Pure.
 */

/** One answer of a case in a run: the first (n = 1) or a repeat (n ≥ 2), of round 1 or 2. */
export interface Answer {
  n: number;
  round: 1 | 2;
  result: CaseResult | CaseRepeat;
}

/** The judge.json key of repeat `n` of a case (the first answer keeps the case id). Ids never hold `/`. */
export function repeatKey(id: string, n: number): string {
  return n === 1 ? id : `${id}/repeat-${n}`;
}

/** The answers of a case in its run, first answer first. */
export function answersOf(result: CaseResult): Answer[] {
  return [{ n: 1, round: 1 as const, result }, ...(result.repeats ?? []).map((r): Answer => ({ n: r.n, round: r.round ?? 1, result: r }))];
}

/** Where the second round begins among a case's answers (undefined: it had none). */
const secondRoundAt = (answers: readonly Answer[]): number | undefined => {
  const at = answers.findIndex((a) => a.round === 2);
  return at < 0 ? undefined : at;
};

/** Right, wrong, VOID or ? for one answer, from its checks and its judge verdict (judge.json under `repeatKey`). */
export function answerVerdict(id: string, answer: Answer, judge: JudgeFile = {}): CaseVerdict {
  return caseVerdict({ ...answer.result, id, rev: '' } as CaseResult, judge[repeatKey(id, answer.n)]);
}

export interface Outcome {
  /**
   * What decides for the case: the majority of its graded answers of round 1;
   * a tie goes to the repeats' majority (the first answer is the one that
   * flipped); still tied: wrong. With a second round, its own majority
   * decides, and a tie there keeps the case's last graded answer (the
   * opposite of round 1's, which it had to reproduce).
   */
  verdict: CaseVerdict;
  /** Each answer's verdict, first answer first. */
  answers: CaseVerdict[];
  /** Graded answers (right or wrong), and how many were right. */
  n: number;
  right: number;
  /** right / n, or null when no answer was graded. */
  rate: number | null;
  /** Its graded answers disagree: the case is `flaky` (docs/method.md#difficult-list). */
  flaky: boolean;
}

/** The majority of graded verdicts: right, wrong, or null on a tie (or none). */
export function majority(verdicts: readonly CaseVerdict[]): 'right' | 'wrong' | null {
  const right = verdicts.filter((v) => v === 'right').length;
  const wrong = verdicts.filter((v) => v === 'wrong').length;
  return right > wrong ? 'right' : wrong > right ? 'wrong' : null;
}

/**
 * The outcome of verdicts already known, first answer first; `secondAt`:
 * where the second round begins (docs/method.md#noise), if it ran.
 */
export function outcomeOf(answers: readonly CaseVerdict[], secondAt?: number): Outcome {
  const isGraded = (v: CaseVerdict) => v === 'right' || v === 'wrong';
  const graded = answers.filter(isGraded);
  const right = graded.filter((v) => v === 'right').length;
  const first = answers[0] ?? '?';
  const one = secondAt === undefined ? answers : answers.slice(0, secondAt);
  const oneGraded = one.filter(isGraded);
  let verdict: CaseVerdict;
  if (one.length <= 1 || first === 'VOID' && oneGraded.length === 0) verdict = first;
  else if (oneGraded.length === 0) verdict = one.includes('?') ? '?' : 'VOID';
  else verdict = majority(oneGraded) ?? majority(one.slice(1)) ?? 'wrong';
  if (secondAt !== undefined && (verdict === 'right' || verdict === 'wrong')) {
    // Round 2 had to reproduce round 1; a tie does not, and the case keeps its last graded answer.
    verdict = majority(answers.slice(secondAt)) ?? (verdict === 'right' ? 'wrong' : 'right');
  }
  // A repeat the checks could not decide and no judge graded leaves the case to a person.
  if (answers.length > 1 && answers.slice(1).includes('?') && verdict !== 'VOID') verdict = '?';
  return { verdict, answers: [...answers], n: graded.length, right, rate: graded.length === 0 ? null : right / graded.length, flaky: right > 0 && right < graded.length };
}

/**
 * The outcome of answers so far can no longer change, whatever the
 * `remaining` repeats answer: the repeats of that case stop early. An
 * answer that is neither right nor wrong (VOID, ?) settles nothing.
 */
export function settled(answers: readonly CaseVerdict[], remaining: number, secondAt?: number): boolean {
  if (remaining <= 0) return true;
  if (answers.some((v) => v !== 'right' && v !== 'wrong')) return false;
  // The majority counts answers, not their order: try each number of right answers among the remaining.
  const outcomes = new Set<CaseVerdict>();
  for (let right = 0; right <= remaining; right++) {
    const rest: CaseVerdict[] = [...Array<CaseVerdict>(right).fill('right'), ...Array<CaseVerdict>(remaining - right).fill('wrong')];
    outcomes.add(outcomeOf([...answers, ...rest], secondAt).verdict);
  }
  return outcomes.size === 1;
}

/**
 * Whether a flip's first round still contradicts the case's last graded
 * answer, so a second round must reproduce it: a case that turned wrong (or
 * is wrong in the final check) still wrong by round 1's majority, an aimed
 * case that turned right still right. A case never graded before has no
 * answer to contradict.
 */
export function contradicts(why: FlipDue['why'], verdict: CaseVerdict): boolean {
  return why === 'turned-wrong' ? verdict === 'wrong' : why === 'turned-right' ? verdict === 'right' : false;
}

/** The flips whose first round (stored in `results`) still contradicts their last graded answer: they run a second round. */
export function secondRoundDue(due: readonly FlipDue[], results: readonly CaseResult[]): FlipDue[] {
  const byId = new Map(results.map((r) => [r.id, r]));
  return due.filter((d) => byId.has(d.id) && contradicts(d.why, caseOutcome(byId.get(d.id)!).verdict));
}

/** What decided a case re-run in its run, as `show` and the findings say it: its majority, or its second round. */
export function decidedBy(result: CaseResult): string {
  const second = (result.repeats ?? []).filter((x) => x.round === 2).length;
  return second > 0 ? `the second round (its last ${second}), which had to reproduce the first, says` : 'the majority says';
}

/** A case's majority outcome and right-rate in its run, from its first answer, its repeats and the judge's verdicts on each. */
export function caseOutcome(result: CaseResult, judge: JudgeFile = {}): Outcome {
  const answers = answersOf(result);
  return outcomeOf(answers.map((a) => answerVerdict(result.id, a, judge)), secondRoundAt(answers));
}

/** right / graded answers of a case in its run (null: none graded). */
export function rightRate(result: CaseResult, judge: JudgeFile = {}): number | null {
  return caseOutcome(result, judge).rate;
}

/** Median, min and max of some numbers (null: none). */
export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
}

export function spreadOf(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n: s.length, median, min: s[0]!, max: s[s.length - 1]! };
}

/**
 * The margin a cost comparison needs above the noise: half the measured
 * spread ((max − min) / median / 2) where at least two answers were measured,
 * and never below `DEFAULT_MARGIN`, the documented default where none is.
 */
export const DEFAULT_MARGIN = 0.1;

export function marginOf(spread: Spread | null): number {
  if (!spread || spread.n < 2 || spread.median <= 0) return DEFAULT_MARGIN;
  return Math.max(DEFAULT_MARGIN, (spread.max - spread.min) / spread.median / 2);
}

/** Whether `now` is above `base` by more than the margin: a cost difference the noise does not explain. */
export function aboveNoise(now: number, base: number, margin: number): boolean {
  return now > base * (1 + margin);
}

/** One observation of a case: a graded answer under some prose and memory (a run's first answer or a repeat). */
export interface Observation {
  run: string;
  /** The prose and memory it ran on (the same key: repeats of each other). */
  condition: string;
  verdict: CaseVerdict;
  tokens: number;
  llmCalls: number;
  savedTwice: number;
}

/** What the history (and in-run repeats) says of one case: its right-rate and spreads, under one condition or all. */
export interface CaseNoise {
  id: string;
  /** Graded answers and right ones. */
  n: number;
  right: number;
  rate: number | null;
  tokens: Spread | null;
  llmCalls: Spread | null;
  /** Answers under one prose and memory disagreed: it slips. */
  slips: boolean;
  /** The runs the answers come from. */
  runs: number;
}

export function caseNoise(id: string, observations: readonly Observation[]): CaseNoise {
  const graded = observations.filter((o) => o.verdict === 'right' || o.verdict === 'wrong');
  const right = graded.filter((o) => o.verdict === 'right').length;
  const byCondition = new Map<string, Set<CaseVerdict>>();
  for (const o of graded) byCondition.set(o.condition, (byCondition.get(o.condition) ?? new Set()).add(o.verdict));
  const measured = observations.filter((o) => o.verdict !== 'VOID');
  return {
    id, n: graded.length, right, rate: graded.length === 0 ? null : right / graded.length,
    tokens: spreadOf(measured.map((o) => o.tokens)), llmCalls: spreadOf(measured.map((o) => o.llmCalls)),
    slips: [...byCondition.values()].some((s) => s.size > 1),
    runs: new Set(observations.map((o) => o.run)).size,
  };
}

/** The observations of one run's case: each answer, judged as the run's grade and judge.json say. */
export function observationsOf(run: string, condition: string, result: CaseResult, judge: JudgeFile = {}, gradedWrong?: boolean): Observation[] {
  return answersOf(result).map((a) => {
    let verdict = answerVerdict(result.id, a, judge);
    // The grade recorded the first answer's majority; with no judge verdict at hand, a '?' first answer takes the grade's word.
    if (a.n === 1 && verdict === '?' && gradedWrong !== undefined && !(result.repeats?.length)) verdict = gradedWrong ? 'wrong' : 'right';
    return { run, condition, verdict, tokens: a.result.tokens, llmCalls: a.result.llmCalls, savedTwice: a.result.memoryWrites.savedTwice };
  });
}

/** One line for a case's noise: `3/4 right (75%) over 2 runs, tokens 1,200 (1,000–1,500)`. */
export function noiseLine(n: CaseNoise): string {
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const rate = n.rate === null ? 'not graded' : `${n.right}/${n.n} right (${Math.round(n.rate * 100)}%)`;
  const tokens = n.tokens ? `, tokens ${fmt(n.tokens.median)}${n.tokens.n > 1 ? ` (${fmt(n.tokens.min)}–${fmt(n.tokens.max)})` : ''}` : '';
  return `${rate} over ${n.runs} run${n.runs === 1 ? '' : 's'}${tokens}${n.slips ? ', slips on the same prose' : ''}`;
}

/**
 * Which cases of a run are re-run before it decides (docs/method.md#noise): a
 * flip whose one answer would decide. Pure: the app gathers what each case
 * was before and what the run's first answers say (by the checks; a case
 * the judge alone grades is decided at grading, from the history).
 */
export interface FlipInput {
  /** Case id → right by its checks now (null: the checks cannot say; the judge decides). */
  now: ReadonlyMap<string, boolean | null>;
  /** Case id → right or wrong the last time it was graded (the previous run of the batch and half, else its history). */
  before: ReadonlyMap<string, boolean>;
  /** Cases an edit since the previous run of the batch and half aims at. */
  aimed: ReadonlySet<string>;
  /** The aims of those edits none of whose aims turned right (`fixesAnAim`): their answers alone would revert the edit. */
  hanging: ReadonlySet<string>;
  /** Cases known to slip: the history holds right and wrong answers for them (right-rate between 0 and 1). */
  slips: ReadonlySet<string>;
}

export interface FlipDue {
  id: string;
  /**
   * turned-wrong: right the last time, wrong now; new-wrong: wrong now and never graded before, so the editor would
   * get it on one answer; turned-right: an aimed case known to slip; aimed-wrong: wrong before and now, aimed at by an
   * edit none of whose aims turned right, so its answer alone unconfirms the edit.
   */
  why: 'turned-wrong' | 'new-wrong' | 'turned-right' | 'aimed-wrong';
}

/** How `re-running` names why a case is re-run. */
export const FLIP_WHY: Record<FlipDue['why'], string> = {
  'turned-wrong': 'turned wrong',
  'new-wrong': 'wrong on its first answer',
  'turned-right': 'turned right, known to slip',
  'aimed-wrong': 'still wrong after an edit aimed at it',
};

export function flipsToRepeat(input: FlipInput): FlipDue[] {
  const due: FlipDue[] = [];
  for (const [id, right] of input.now) {
    const was = input.before.get(id);
    if (right === null) continue;
    // A wrong answer not established by an earlier one unconfirms an edit or goes to the editor: a slip there reverts a real fix or buys a useless edit.
    if (!right && was !== false) due.push({ id, why: was === undefined ? 'new-wrong' : 'turned-wrong' });
    else if (was === false && right && input.aimed.has(id) && input.slips.has(id)) due.push({ id, why: 'turned-right' });
    else if (was === false && !right && input.hanging.has(id)) due.push({ id, why: 'aimed-wrong' });
  }
  return due;
}

/** A graded run that says something about the prose. */
const graded = (r: RunState) => r.grade !== null && !isVoidRun(r);

/**
 * The cases of `run` (just finished, not recorded) to re-run `noise.repeats`
 * times before the run commit, from its first answers by the checks
 * (docs/method.md#noise): in a batch run, a wrong answer that no earlier
 * one establishes (the case was right the last time it was graded, or was
 * never graded): it would unconfirm an edit or send the case to the editor
 * on that one answer; an aimed case turned right that is known to slip; and
 * the aims of an edit none of which turned right, still wrong (not stuck):
 * their answers alone would revert it.
 * In the final check (`run` null: a result set of `final --ci`/`--shard`,
 * which has no run yet), every case the checks say is wrong, but a stuck one:
 * it is reported, not counted, so its repeats would decide nothing.
 */
export function repeatsDue(state: TuningState, run: RunState | null, now: ReadonlyMap<string, boolean | null>, stuck: ReadonlySet<string> = new Set()): FlipDue[] {
  if (run === null || run.half === null) {
    return [...now].filter(([id, right]) => right === false && !stuck.has(id)).map(([id]) => ({ id, why: 'turned-wrong' as const }));
  }
  const earlier = [...state.runs.values()].filter((r) => r.name !== run.name && r.startIndex < run.startIndex && graded(r)).sort((a, b) => a.startIndex - b.startIndex);
  const prev = [...earlier].reverse().find((r) => r.batch === run.batch && r.half === run.half) ?? null;
  const before = new Map<string, boolean>();
  const seen = new Map<string, Set<boolean>>();
  for (const r of earlier) {
    for (const id of r.cases) {
      if (!now.has(id)) continue;
      const right = !r.grade!.wrong.includes(id);
      before.set(id, right);
      seen.set(id, (seen.get(id) ?? new Set()).add(right));
    }
  }
  // Within the half, the previous run is what this one is compared with.
  if (prev) for (const id of prev.cases) if (now.has(id)) before.set(id, !prev.grade!.wrong.includes(id));
  const since = state.edits.filter((e) => e.batch === run.batch && e.half === run.half && e.index < run.startIndex && (!prev || e.index > prev.startIndex));
  const flaky = new Set(state.difficult.filter((d) => !d.fixed && d.reason === 'flaky').map((d) => d.id));
  const slips = new Set([...seen].filter(([id, s]) => s.size > 1 || flaky.has(id)).map(([id]) => id));
  const aimed = new Set(since.flatMap((e) => e.aims));
  // The confirmation rule's own test, on the answers so far; a stuck case's answer decides nothing (reported, not counted).
  const wrongNow = [...now].filter(([, right]) => right === false).map(([id]) => id);
  const hanging = new Set(since.filter((e) => !fixesAnAim(state, e, run, wrongNow, null)).flatMap((e) => e.aims).filter((id) => !stuck.has(id)));
  return flipsToRepeat({ now, before, aimed, hanging, slips });
}

/** The median of a case's answers in its run (first and repeats) for one measure. */
export function answersMedian(result: CaseResult, measure: (r: CaseResult | CaseRepeat) => number): number {
  return spreadOf(answersOf(result).filter((a) => a.result.status !== 'void').map((a) => measure(a.result)))?.median ?? measure(result);
}

/**
 * The margin of a sum of cases' tokens: each case's margin (`marginOf` its
 * spread, history and repeats) weighted by its median tokens; the default
 * where nothing is measured.
 */
export function tokensMargin(results: readonly CaseResult[], noise: ReadonlyMap<string, CaseNoise> | undefined): number {
  let weight = 0;
  let sum = 0;
  for (const r of results) {
    const t = answersMedian(r, (x) => x.tokens);
    weight += t;
    sum += t * marginOf(noise?.get(r.id)?.tokens ?? null);
  }
  return weight === 0 ? DEFAULT_MARGIN : sum / weight;
}

/** "Cheaper with memory": the with-memory run's median tokens (summed over cases) not above the no-memory run's by more than the noise. */
export interface MemoryCost {
  tokens: number;
  without: number;
  margin: number;
  ok: boolean;
}

export function memoryCost(
  withMemory: readonly CaseResult[], without: readonly CaseResult[],
  noise?: { with?: ReadonlyMap<string, CaseNoise>; without?: ReadonlyMap<string, CaseNoise> },
): MemoryCost {
  const tokens = withMemory.reduce((s, r) => s + answersMedian(r, (x) => x.tokens), 0);
  const base = without.reduce((s, r) => s + answersMedian(r, (x) => x.tokens), 0);
  const margin = Math.max(tokensMargin(withMemory, noise?.with), tokensMargin(without, noise?.without));
  return { tokens, without: base, margin, ok: !aboveNoise(tokens, base, margin) };
}

/** `costly`: a case whose median llm calls are more than 2x the run's median by more than its own spread explains. */
export function costlyCases(results: readonly CaseResult[], noise?: ReadonlyMap<string, CaseNoise>): Array<{ id: string; calls: number; median: number; margin: number }> {
  const calls = results.map((r) => ({ id: r.id, calls: answersMedian(r, (x) => x.llmCalls) }));
  const median = spreadOf(calls.map((c) => c.calls))?.median ?? 0;
  return calls
    .map((c) => ({ ...c, median, margin: marginOf(noise?.get(c.id)?.llmCalls ?? null) }))
    .filter((c) => median > 0 && aboveNoise(c.calls, 2 * median, c.margin));
}

/** Saved twice of a run: each case's median over its answers (a repeat that saved nothing twice outvotes one that did). */
export function savedTwiceOf(results: readonly CaseResult[]): number {
  return results.reduce((s, r) => s + answersMedian(r, (x) => x.memoryWrites.savedTwice), 0);
}
