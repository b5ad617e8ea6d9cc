import type { CaseResult } from '../contracts/result.js';
import { caseOutcome } from './noise.js';

/** What a run's summary needs of it (`git tune run`'s and `auto`'s). */
export interface RunSummaryInput {
  run: string;
  finished: boolean;
  void: string | null;
  stopped: { text: string } | null;
  results: readonly CaseResult[];
  commit: string | null;
  tag: string | null;
}

/**
 * A run in a few lines: how it ended; right, wrong, for the judge and void by
 * the majority of each case's answers (docs/method.md#noise); the tokens and
 * cost of every answer, repeats included; the cases re-run before deciding;
 * its commit and tag. `git tune run` and `git tune auto` print the same.
 */
export function runSummary(outcome: RunSummaryInput): string {
  const r = outcome.results;
  const verdicts = r.map((x) => caseOutcome(x).verdict);
  const right = verdicts.filter((v) => v === 'right').length;
  const wrong = verdicts.filter((v) => v === 'wrong').length;
  const unknown = r.filter((x, i) => verdicts[i] === '?' && x.status !== 'void').length;
  const voids = r.filter((x) => x.status === 'void').length;
  const all = r.flatMap((x) => [x, ...(x.repeats ?? [])]);
  const tokens = all.reduce((s, x) => s + x.tokens, 0);
  const cost = all.reduce((s, x) => s + x.costUsd, 0);
  const repeated = r.filter((x) => x.repeats?.length);
  const repeats = repeated.length > 0 ? `\n  re-run before deciding: ${repeated.map((x) => `${x.id} ${caseOutcome(x).right}/${caseOutcome(x).n} right`).join(', ')}` : '';
  const head = outcome.finished
    ? `${outcome.run}: ${outcome.void ? `VOID (${outcome.void})` : 'finished'}`
    : `${outcome.run}: stopped (${outcome.stopped?.text}) after ${r.length} cases`;
  return `${head}\n  ${right} right, ${wrong} wrong, ${unknown} for the judge, ${voids} void; ${tokens} tokens, $${cost.toFixed(4)}${repeats}${outcome.commit ? `\n  commit ${outcome.commit.slice(0, 7)}, tag ${outcome.tag ?? outcome.run}` : ''}`;
}
