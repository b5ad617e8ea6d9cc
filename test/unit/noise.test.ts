import { describe, expect, it } from 'vitest';
import type { JudgeFile } from '../../src/contracts/judge.js';
import type { CaseRepeat, CaseResult } from '../../src/contracts/result.js';
import { draftFindings, type DraftInput } from '../../src/core/findings.js';
import { foldHistory } from '../../src/core/fold.js';
import {
  aboveNoise, caseNoise, caseOutcome, contradicts, costlyCases, DEFAULT_MARGIN, flipsToRepeat, marginOf, observationsOf, outcomeOf, repeatKey, repeatsDue, rightRate, savedTwiceOf, settled, spreadOf,
  type CaseNoise,
} from '../../src/core/noise.js';

/** Noise (docs/method.md#noise): majorities, right-rates, spreads, margins and which flips are re-run. Pure. */
function result(id: string, right: boolean | null, over: Partial<CaseResult> = {}): CaseResult {
  return {
    id, rev: 'r1', status: 'ok', answer: 'x', right,
    checks: right === null ? [] : [{ type: 'contains', pass: right }],
    usage: [], tokens: 1000, costUsd: 0, llmCalls: 2, toolCalls: 0, memoryReads: 0,
    memoryWrites: { added: 0, changed: 0, deleted: 0, savedTwice: 0, refused: [] },
    durationMs: 10, exitCode: 0, signal: null, startedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  } as CaseResult;
}
function repeat(n: number, right: boolean | null, tokens = 1000): CaseRepeat {
  const { id: _id, rev: _rev, repeats: _r, ...rest } = result('x', right, { tokens });
  return { ...rest, n };
}

describe('caseOutcome: the majority of the first answer and its repeats', () => {
  it('a single answer is its own outcome, rate 1 or 0', () => {
    expect(caseOutcome(result('a', true))).toMatchObject({ verdict: 'right', n: 1, right: 1, rate: 1, flaky: false });
    expect(caseOutcome(result('a', false))).toMatchObject({ verdict: 'wrong', rate: 0, flaky: false });
    expect(caseOutcome(result('a', null)).verdict).toBe('?');
  });

  it('a slip outvoted: wrong once, right three times, is right and flaky', () => {
    const o = caseOutcome(result('a', false, { repeats: [repeat(2, true), repeat(3, true), repeat(4, true)] }));
    expect(o).toMatchObject({ verdict: 'right', n: 4, right: 3, rate: 0.75, flaky: true });
    expect(rightRate(result('a', false, { repeats: [repeat(2, true), repeat(3, true), repeat(4, true)] }))).toBe(0.75);
  });

  it('a tie goes to the repeats (the first answer is the one that flipped); a tie there too is wrong', () => {
    expect(outcomeOf(['wrong', 'right', 'right', 'wrong']).verdict).toBe('right');
    expect(outcomeOf(['right', 'wrong', 'wrong', 'right']).verdict).toBe('wrong');
    expect(outcomeOf(['right', 'wrong']).verdict).toBe('wrong');
    expect(outcomeOf(['right', 'right', 'right', 'right']).flaky).toBe(false);
  });

  it('the judge grades each repeat under its own key', () => {
    const r = result('a', null, { repeats: [repeat(2, null), repeat(3, null)] });
    const judge = {
      a: { right: false, rubric: {}, summary: '', proposals: [] },
      [repeatKey('a', 2)]: { right: true, rubric: {}, summary: '', proposals: [] },
      [repeatKey('a', 3)]: { right: true, rubric: {}, summary: '', proposals: [] },
    } as unknown as JudgeFile;
    expect(repeatKey('a', 2)).toBe('a/repeat-2');
    expect(caseOutcome(r, judge)).toMatchObject({ verdict: 'right', answers: ['wrong', 'right', 'right'], flaky: true });
    // Without the repeats' verdicts the case is left to a person.
    expect(caseOutcome(r, { a: judge.a! }).verdict).toBe('?');
  });

  it('void answers do not count; all void is VOID', () => {
    expect(outcomeOf(['VOID', 'right', 'right']).verdict).toBe('right');
    expect(outcomeOf(['VOID']).verdict).toBe('VOID');
  });
});

describe('spreads and margins', () => {
  it('median, min, max', () => {
    expect(spreadOf([3, 1, 2, 10])).toEqual({ n: 4, median: 2.5, min: 1, max: 10 });
    expect(spreadOf([])).toBeNull();
  });
  it('the default margin where nothing is measured; half the relative spread where it is wider', () => {
    expect(marginOf(null)).toBe(DEFAULT_MARGIN);
    expect(marginOf(spreadOf([1000]))).toBe(DEFAULT_MARGIN);
    expect(marginOf(spreadOf([1000, 1050]))).toBe(DEFAULT_MARGIN);
    expect(marginOf(spreadOf([500, 1000, 1500]))).toBe(0.5);
    expect(aboveNoise(1200, 1000, 0.1)).toBe(true);
    expect(aboveNoise(1200, 1000, 0.5)).toBe(false);
  });
});

describe('caseNoise: repeats from the history', () => {
  it('right-rate and token spread over runs; slips only when one condition saw both answers', () => {
    const obs = [
      ...observationsOf('r1', 'p1', result('a', true, { tokens: 900 })),
      ...observationsOf('r2', 'p1', result('a', false, { tokens: 1100, repeats: [repeat(2, true, 1000)] })),
      ...observationsOf('r3', 'p2', result('a', false, { tokens: 2000 })),
    ];
    const n = caseNoise('a', obs);
    expect(n).toMatchObject({ n: 4, right: 2, rate: 0.5, slips: true, runs: 3 });
    expect(n.tokens).toEqual({ n: 4, median: 1050, min: 900, max: 2000 });
    const differentProse = caseNoise('a', [...observationsOf('r1', 'p1', result('a', true)), ...observationsOf('r2', 'p2', result('a', false))]);
    expect(differentProse.slips).toBe(false);
  });
  it("a judge-graded case takes the grade's word when its judge verdict is not at hand", () => {
    expect(observationsOf('r1', 'p', result('a', null), {}, true)[0]!.verdict).toBe('wrong');
    expect(observationsOf('r1', 'p', result('a', null), {}, false)[0]!.verdict).toBe('right');
  });
});

describe('settled: repeats stop once no remaining answer can change the majority', () => {
  it('wrong, then wrong twice: settled with one repeat left; wrong then one wrong is not', () => {
    expect(settled(['wrong', 'wrong', 'wrong'], 1)).toBe(true);
    expect(settled(['wrong', 'wrong'], 2)).toBe(false);
    expect(settled(['wrong', 'right', 'right'], 1)).toBe(true);
    expect(settled(['wrong', 'right', 'wrong'], 1)).toBe(false);
  });
  it('nothing remaining is settled; an answer neither right nor wrong settles nothing', () => {
    expect(settled(['wrong', 'right'], 0)).toBe(true);
    expect(settled(['wrong', '?', '?'], 1)).toBe(false);
  });
});

describe('a second round must reproduce what the first round contradicts', () => {
  it('round 2 decides by its own majority; a tie keeps the last graded answer (the opposite of round 1)', () => {
    // Three slips in a row: round 1 says wrong; round 2 (from index 3) is right twice.
    expect(outcomeOf(['wrong', 'wrong', 'wrong'], undefined).verdict).toBe('wrong');
    expect(outcomeOf(['wrong', 'wrong', 'wrong', 'right', 'right'], 3).verdict).toBe('right');
    expect(outcomeOf(['wrong', 'wrong', 'wrong', 'wrong', 'wrong'], 3).verdict).toBe('wrong');
    expect(outcomeOf(['wrong', 'wrong', 'wrong', 'wrong', 'right'], 3).verdict).toBe('right');
    // A turned-right case right in round 1 must be right again.
    expect(outcomeOf(['right', 'right', 'right', 'wrong', 'wrong'], 3).verdict).toBe('wrong');
    // Right-rate and flaky count every answer of both rounds.
    const o = outcomeOf(['wrong', 'wrong', 'wrong', 'right', 'right'], 3);
    expect([o.right, o.n, o.flaky]).toEqual([2, 5, true]);
  });
  it('settled in round 2 counts round 2 alone', () => {
    expect(settled(['wrong', 'wrong', 'wrong', 'wrong', 'wrong'], 1, 3)).toBe(true);
    expect(settled(['wrong', 'wrong', 'wrong', 'right'], 2, 3)).toBe(false);
    expect(settled(['wrong', 'wrong', 'wrong'], 3, 3)).toBe(false);
  });
  it('contradicts: still wrong after turning wrong, still right after an aimed turn; a first answer ever contradicts nothing', () => {
    expect(contradicts('turned-wrong', 'wrong')).toBe(true);
    expect(contradicts('turned-wrong', 'right')).toBe(false);
    expect(contradicts('turned-right', 'right')).toBe(true);
    expect(contradicts('turned-right', 'wrong')).toBe(false);
    expect(contradicts('new-wrong', 'wrong')).toBe(false);
  });
  it('caseOutcome reads the round from results.json', () => {
    const r = { ...result('a', false), repeats: [
      { ...result('a', false), n: 2 }, { ...result('a', false), n: 3 },
      { ...result('a', true), n: 5, round: 2 as const }, { ...result('a', true), n: 6, round: 2 as const },
    ].map(({ id: _i, rev: _r, ...x }) => x) };
    expect(caseOutcome(r).verdict).toBe('right');
    expect(caseOutcome({ ...r, repeats: r.repeats.slice(0, 2) }).verdict).toBe('wrong');
  });
});

describe('flipsToRepeat: which answers decide something', () => {
  const base = { aimed: new Set<string>(), hanging: new Set<string>(), slips: new Set<string>() };
  it('right before, wrong now: the wrong answer would unconfirm an edit or go to the editor; wrong before and now is established', () => {
    const now = new Map<string, boolean | null>([['a', false], ['b', false], ['c', true]]);
    const before = new Map([['a', true], ['b', false], ['c', true]]);
    expect(flipsToRepeat({ ...base, now, before })).toEqual([{ id: 'a', why: 'turned-wrong' }]);
  });
  it('an aimed case turned right, only when it is known to slip', () => {
    const now = new Map<string, boolean | null>([['a', true]]);
    const before = new Map([['a', false]]);
    expect(flipsToRepeat({ ...base, now, before, aimed: new Set(['a']) })).toEqual([]);
    expect(flipsToRepeat({ ...base, now, before, aimed: new Set(['a']), slips: new Set(['a']) })).toEqual([{ id: 'a', why: 'turned-right' }]);
  });
  it('a case wrong on its first answer ever, before the editor gets it; one seen wrong before is not re-run', () => {
    const now = new Map<string, boolean | null>([['new', false], ['known', false], ['fine', true]]);
    expect(flipsToRepeat({ ...base, now, before: new Map([['known', false]]) })).toEqual([{ id: 'new', why: 'new-wrong' }]);
  });
  it('the aims of an edit that fixed none of them hang on their answers: each still wrong is re-run', () => {
    const now = new Map<string, boolean | null>([['a', false], ['b', false], ['c', true]]);
    const before = new Map([['a', false], ['b', false], ['c', false]]);
    expect(flipsToRepeat({ ...base, now, before, aimed: new Set(['a', 'b', 'c']), hanging: new Set(['a']) })).toEqual([{ id: 'a', why: 'aimed-wrong' }]);
    expect(flipsToRepeat({ ...base, now, before, aimed: new Set(['a', 'b', 'c']) })).toEqual([]);
  });
  it('a case the checks cannot grade is left to grading', () => {
    expect(flipsToRepeat({ ...base, now: new Map([['a', null]]), before: new Map([['a', true]]) })).toEqual([]);
  });
});

describe('repeatsDue in the final check', () => {
  it('re-runs every case the checks say is wrong, but a stuck one (reported, not counted: its repeats decide nothing); a result set has no run yet', () => {
    const now = new Map<string, boolean | null>([['a', false], ['b', true], ['c', false], ['d', null]]);
    expect(repeatsDue(foldHistory('desk', []), null, now, new Set(['c']))).toEqual([{ id: 'a', why: 'turned-wrong' }]);
    expect(repeatsDue(foldHistory('desk', []), null, now).map((d) => d.id)).toEqual(['a', 'c']);
  });
});

describe('cost with a margin above the noise, in the findings draft', () => {
  const mem1 = { name: 'batch01-mem-run1', batch: 1, half: 'mem' as const, number: 1 };
  const draft = (over: Partial<DraftInput>) => draftFindings({
    run: { name: 'batch01-nomem-run1', batch: 1, half: 'nomem', number: 1 }, results: [], judge: {}, previous: null, passingNomem: null,
    recheck: [], difficult: { onList: [], open: [] }, aimedSince: [], ...over,
  });
  const measured = (id: string, tokens: number[], calls: number[] = [2]): CaseNoise =>
    ({ id, n: tokens.length, right: tokens.length, rate: 1, tokens: spreadOf(tokens), llmCalls: spreadOf(calls), slips: false, runs: tokens.length });

  it('cheaper with memory: 15% over the no-memory run fails with nothing measured and passes within a measured 2x spread', () => {
    const passingNomem = { name: 'batch01-nomem-run2', tokens: 2000, results: [result('a', true), result('b', true)], wrong: [] };
    const results = [result('a', true, { tokens: 1150 }), result('b', true, { tokens: 1150 })];
    expect(draft({ run: mem1, passingNomem, results }).verdict).toBe('CORRECT');
    const passingNoise = new Map([['a', measured('a', [700, 1000, 1400])], ['b', measured('b', [700, 1000, 1400])]]);
    const d = draft({ run: mem1, passingNomem, results, passingNoise });
    expect(d.verdict).toBe('PASSED');
    expect(d.markdown).toContain('- compared as medians of each case\'s answers: 2,300 vs 2,000, noise margin 35%: not above the no-memory run\'s.');
  });

  it('a with-memory case re-run: its median tokens count, not its first answer', () => {
    const passingNomem = { name: 'batch01-nomem-run2', tokens: 2000, results: [result('a', true), result('b', true)], wrong: [] };
    const a = result('a', true, { tokens: 3000, repeats: [repeat(2, true, 800), repeat(3, true, 900)] });
    expect(draft({ run: mem1, passingNomem, results: [a, result('b', true, { tokens: 900 })] }).verdict).toBe('PASSED');
  });

  it('costly: more than 2x the median llm calls, by more than the case\'s measured spread', () => {
    const results = [result('a', true, { llmCalls: 2 }), result('b', true, { llmCalls: 2 }), result('c', true, { llmCalls: 5 })];
    expect(costlyCases(results).map((c) => c.id)).toEqual(['c']);
    expect(draft({ results }).costly).toEqual(['c']);
    const noise = new Map([['c', measured('c', [1000], [3, 5, 7])]]);
    expect(costlyCases(results, noise)).toEqual([]);
    expect(draft({ results, noise }).costly).toEqual([]);
  });

  it('saved twice: each case\'s median over its answers', () => {
    const twice = { added: 0, changed: 1, deleted: 0, savedTwice: 1, refused: [] };
    const once = { added: 1, changed: 0, deleted: 0, savedTwice: 0, refused: [] };
    const a = result('a', true, { memoryWrites: twice, repeats: [{ ...repeat(2, true), memoryWrites: once }, { ...repeat(3, true), memoryWrites: once }] });
    expect(savedTwiceOf([a])).toBe(0);
    expect(savedTwiceOf([result('a', true, { memoryWrites: twice })])).toBe(1);
  });
});
