import type { DifficultReason } from '../contracts/values.js';
import type { JudgeFile } from '../contracts/judge.js';
import type { CaseResult } from '../contracts/result.js';
import { isJudgeOutput } from './findings.js';
import type { RunState, TuningState } from './fold.js';
import { costlyCases, memoryCost } from './noise.js';
import type { RuleBreak } from './rules.js';

/**
 * What `git tune auto` decides when a half does not pass on its own
 * (docs/method.md#halves, step 5; #grading; #difficult-list): which cases go on the difficult list, and whether a
 * refused PASSED is the tool's to make right. Pure: auto reads the results
 * and the judge, and writes the steps.
 */

export interface ShortCase {
  id: string;
  reason: DifficultReason;
  note: string;
}

/**
 * What is still short in a run whose half ends without passing, with the
 * matching reason: wrong cases (`memory` when right without memory), and,
 * with every answer right, the cases behind the shortfall: saved twice or
 * not cheaper with memory (`memory`), more than 2x the median llm calls
 * without memory (`costly`). One entry a case, the worst reason first.
 * `passing` is the half's passing no-memory run (for a with-memory run), with its results.
 */
export function shortCases(run: RunState, results: readonly CaseResult[], passing: { run: RunState; results: readonly CaseResult[] } | null): ShortCase[] {
  const without = new Map((passing?.results ?? []).map((r) => [r.id, r]));
  const out: ShortCase[] = [];
  for (const id of run.grade!.wrong) {
    const memory = passing !== null && !passing.run.grade!.wrong.includes(id);
    out.push({ id, reason: memory ? 'memory' : 'wrong', note: memory ? `right without memory (${passing.run.name}), wrong with it` : `still wrong after ${run.name}` });
  }
  if (run.half === 'mem') {
    for (const r of results) {
      if (r.memoryWrites.savedTwice > 0) out.push({ id: r.id, reason: 'memory', note: `saved ${r.memoryWrites.savedTwice} fact(s) twice in ${run.name}` });
    }
    // Saving too little (docs/method.md#noise: medians, above the passing no-memory run's tokens by more than the noise): the cases no cheaper with memory.
    if (passing && !memoryCost(results, passing.results).ok) {
      for (const r of results) {
        const before = without.get(r.id);
        if (before && r.tokens >= before.tokens) out.push({ id: r.id, reason: 'memory', note: `no cheaper with memory in ${run.name}: ${r.tokens} tokens, ${before.tokens} without (${passing.run.name})` });
      }
    }
  } else {
    for (const c of costlyCases(results)) out.push({ id: c.id, reason: 'costly', note: `${c.calls} llm calls in ${run.name}, more than 2x the median (${c.median})` });
  }
  return out.filter((s, i) => out.findIndex((o) => o.id === s.id) === i);
}

/** Of the wrong cases, those the judge says are at fault themselves (`caseOnly`) and not yet on the difficult list. */
export function caseOnlyCases(wrong: readonly string[], judge: JudgeFile, listed: ReadonlySet<string>): string[] {
  return wrong.filter((id) => {
    const j = judge[id];
    return isJudgeOutput(j) && j.caseOnly && !listed.has(id);
  });
}

/** Rules a revert of the half's unconfirmed and pending edits makes right: at `maxRuns` (b), and before it (b'). */
const REVERTS = new Set<string>(['unreverted', 'unsettled']);

export type RefusalFix =
  /** A rule only a person can make right: auto stops, with the commands that would. */
  | { kind: 'person'; reason: string; command: string }
  /** The tool's to make right: revert (when a rule asks it), put the wrong cases not listed on the difficult list, then record PASSED. */
  | { kind: 'tool'; revert: boolean };

/** How a PASSED the rules refuse is made right, and by whom. */
export function passedRefusalFix(run: RunState, breaks: readonly RuleBreak[]): RefusalFix {
  const person = breaks.filter((b) => !REVERTS.has(b.rule) && b.rule !== 'wrong-not-difficult');
  if (person.length > 0) {
    return {
      kind: 'person',
      reason: `PASSED of ${run.name} is refused and a person must decide: ${person.map((b) => b.message).join('; ')}`,
      command: `${breaks.map((b) => b.fix).join(' && ')} && git tune grade --verdict PASSED --run ${run.name}`,
    };
  }
  return { kind: 'tool', revert: breaks.some((b) => REVERTS.has(b.rule)) };
}

/** What a half's findings say when the editor changed nothing (auto writes it where the half ends; `idleHalvesBefore` reads it). */
export const EDITOR_IDLE_WHY = 'the editor changed nothing after';

/**
 * The halves the editor left unchanged in a row before now: those that
 * ended because it changed nothing (`idle`: their runs' names), counted since
 * the editor's last edit (an edit breaks the row; a half that passed without
 * asking it does not). Pure: auto reads which halves ended so from their findings.
 */
export function idleHalvesBefore(state: TuningState, idle: ReadonlySet<string>): string[] {
  const lastEdit = state.edits.reduce((m, e) => Math.max(m, e.index), -1);
  return [...state.runs.values()]
    .filter((r) => r.grade && r.grade.index > lastEdit && idle.has(r.name))
    .sort((a, b) => a.grade!.index - b.grade!.index)
    .map((r) => r.name);
}

/** The graded runs a half-end may have been written on since the last edit: the ones whose findings auto reads for `idleHalvesBefore`. */
export function halfEndsSinceLastEdit(state: TuningState): RunState[] {
  const lastEdit = state.edits.reduce((m, e) => Math.max(m, e.index), -1);
  return [...state.runs.values()].filter((r) => r.half !== null && r.grade?.verdict === 'PASSED' && r.grade.index > lastEdit);
}
