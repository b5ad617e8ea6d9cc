import { describe, expect, it } from 'vitest';
import type { CaseResult } from '../../src/contracts/result.js';
import { caseOnlyCases, passedRefusalFix, shortCases } from '../../src/core/half-end.js';
import type { RuleBreak } from '../../src/core/rules.js';
import { History, mem, nomem } from '../helpers/history.js';

/** What auto decides when a half does not pass on its own: the cases still short, the case-only ones, who fixes a refused PASSED. */
const ABCD = ['a', 'b', 'c', 'd'];
function result(id: string, over: { tokens?: number; llmCalls?: number; savedTwice?: number } = {}): CaseResult {
  return {
    id, rev: 'r1', status: 'ok', answer: 'x', right: true, checks: [], usage: [],
    tokens: over.tokens ?? 1000, costUsd: 0.001, llmCalls: over.llmCalls ?? 2, toolCalls: 0, memoryReads: 0,
    memoryWrites: { added: 0, changed: 0, deleted: 0, savedTwice: over.savedTwice ?? 0, refused: [] },
    durationMs: 10, exitCode: 0, signal: null, startedAt: '2026-01-01T00:00:00.000Z',
  } as CaseResult;
}
const history = () => new History().setup(4).plan(1, ABCD)
  .ran(nomem(1, 1), 'PASSED', ['d']).candidate(nomem(1, 1))
  .ran(mem(1, 1), 'MIXED', ['a', 'd']);
const runs = () => history().fold(ABCD).runs;

describe('the cases still short when a half ends', () => {
  it('without memory: the wrong cases, then the costly ones (more than 2x the median llm calls), one entry a case', () => {
    const run = runs().get(nomem(1, 1))!;
    const results = [result('a', { llmCalls: 9 }), result('b'), result('c'), result('d', { llmCalls: 9 }), result('e')];
    expect(shortCases(run, results, null)).toEqual([
      { id: 'd', reason: 'wrong', note: `still wrong after ${nomem(1, 1)}` },
      { id: 'a', reason: 'costly', note: `9 llm calls in ${nomem(1, 1)}, more than 2x the median (2)` },
    ]);
  });

  it('with memory: wrong only with memory is `memory`; saved twice; no cheaper with memory when the half saved too little', () => {
    const r = runs();
    const passing = { run: r.get(nomem(1, 1))!, results: ABCD.map((id) => result(id, { tokens: 1000 })) };
    const withMemory = [result('a'), result('b', { tokens: 2000, savedTwice: 1 }), result('c', { tokens: 1500 }), result('d', { tokens: 500 })];
    expect(shortCases(r.get(mem(1, 1))!, withMemory, passing)).toEqual([
      { id: 'a', reason: 'memory', note: `right without memory (${nomem(1, 1)}), wrong with it` },
      { id: 'd', reason: 'wrong', note: `still wrong after ${mem(1, 1)}` },
      { id: 'b', reason: 'memory', note: `saved 1 fact(s) twice in ${mem(1, 1)}` },
      { id: 'c', reason: 'memory', note: `no cheaper with memory in ${mem(1, 1)}: 1500 tokens, 1000 without (${nomem(1, 1)})` },
    ]);
    // Within the 10% noise, cost says nothing.
    const cheapEnough = [result('a'), result('b', { tokens: 1300 }), result('c'), result('d')];
    expect(shortCases(r.get(mem(1, 1))!, cheapEnough, passing).map((s) => s.id)).toEqual(['a', 'd']);
  });

  it('case-only: the wrong cases whose judge blames the case, not yet listed', () => {
    const judge = {
      a: { verdict: 'wrong', why: 'asks the impossible', caseOnly: true },
      b: { verdict: 'wrong', why: 'prose', caseOnly: false },
      c: { verdict: 'wrong', why: 'asks the impossible', caseOnly: true },
    } as never;
    expect(caseOnlyCases(['a', 'b', 'c', 'd'], judge, new Set(['c']))).toEqual(['a']);
  });
});

describe('a refused PASSED: the tool\'s to make right, or a person\'s', () => {
  const run = runs().get(nomem(1, 1))!;
  const rule = (r: RuleBreak['rule']): RuleBreak => ({ rule: r, message: `${r} broken`, fix: `fix ${r}` });
  it.each<[RuleBreak['rule'][], object]>([
    [['unreverted'], { kind: 'tool', revert: true }],
    [['unsettled', 'wrong-not-difficult'], { kind: 'tool', revert: true }],
    [['wrong-not-difficult'], { kind: 'tool', revert: false }],
    [['review', 'unreverted'], {
      kind: 'person', reason: `PASSED of ${nomem(1, 1)} is refused and a person must decide: review broken`,
      command: `fix review && fix unreverted && git tune grade --verdict PASSED --run ${nomem(1, 1)}`,
    }],
    [['pending'], { kind: 'person' }],
  ])('%o', (rules, want) => {
    expect(passedRefusalFix(run, rules.map(rule))).toMatchObject(want);
  });
});
