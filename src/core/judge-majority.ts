import type { JudgeFile, JudgeOutput } from '../contracts/judge.js';

/**
 * Judge repeats (docs/method.md#noise): a judge is stochastic too, so with
 * `judge.repeats` above 1 it is asked that many times about the same answer
 * and the majority verdict stands. Pure.
 *
 * - The asks that answered vote; an ask whose judge failed (after its own
 *   retries, docs/grading.md) does not. None answered: the case keeps the
 *   last error and is VOID for the judge, as with one ask.
 * - Right only with more right votes than wrong ones: a tie is wrong (right
 *   must be shown, and an odd `repeats` never ties).
 * - The entry is the first ask that voted with the majority (its rubric,
 *   evidence, summary and proposals), its `right` the majority's, and
 *   `asks` lists every ask in order (`right` and `summary`, or `error`), so
 *   a disagreement is recorded next to the case. One ask: its output as it is.
 * - Files a judge changed and git-tune put back (`undone`) are kept from
 *   every ask.
 */
export interface JudgeAsk {
  right?: boolean;
  summary?: string;
  error?: string;
}

type Entry = JudgeFile[string];

/** An answer of the judge, not the error that replaced it (as findings.ts's isJudgeOutput). */
const isJudgeOutput = (j: Entry): j is JudgeOutput => !('error' in j && !('right' in j));

export function majorityOfAsks(asks: readonly Entry[]): Entry {
  if (asks.length === 1) return asks[0]!;
  const undone = [...new Set(asks.flatMap((a) => ((a as { undone?: string[] }).undone ?? [])))];
  const answered = asks.filter(isJudgeOutput);
  const record: JudgeAsk[] = asks.map((a) => (isJudgeOutput(a) ? { right: a.right, summary: a.summary } : { error: (a as { error: string }).error }));
  if (answered.length === 0) {
    const last = asks[asks.length - 1]!;
    return { ...last, asks: record, ...(undone.length ? { undone } : {}) } as Entry;
  }
  const right = votes(answered).right > votes(answered).wrong;
  const base = answered.find((a) => a.right === right)!;
  const { undone: _undone, ...rest } = base as JudgeOutput & { undone?: string[] };
  return { ...rest, right, asks: record, ...(undone.length ? { undone } : {}) } as Entry;
}

function votes(answered: readonly JudgeOutput[]): { right: number; wrong: number } {
  const right = answered.filter((a) => a.right).length;
  return { right, wrong: answered.length - right };
}

/** The asks recorded next to a case (`judge.repeats` above 1), or none. */
export function asksOf(entry: Entry | undefined): JudgeAsk[] {
  const asks = (entry as { asks?: unknown } | undefined)?.asks;
  return Array.isArray(asks) ? (asks as JudgeAsk[]) : [];
}

/** "2 of 3 asks right" when the asks disagree (or one failed), else null: what the findings say next to the case. */
export function disagreement(entry: Entry | undefined): string | null {
  const asks = asksOf(entry);
  if (asks.length < 2) return null;
  const right = asks.filter((a) => a.right === true).length;
  const wrong = asks.filter((a) => a.right === false).length;
  const failed = asks.length - right - wrong;
  if (failed === 0 && (right === 0 || wrong === 0)) return null;
  return `${right} of ${asks.length} asks right${wrong > 0 ? `, ${wrong} wrong` : ''}${failed > 0 ? `, ${failed} failed` : ''}`;
}
