import { describe, expect, it } from 'vitest';
import { dropBeyondNoise, finalLine, finalRule, newcombe, wilson, type FinalCase } from '../../src/core/final-rate.js';

const round = (i: { low: number; high: number }) => [Number(i.low.toFixed(3)), Number(i.high.toFixed(3))];

describe('wilson', () => {
  it('gives the published 95% intervals', () => {
    // Newcombe (1998), table I: 81/263 → 0.2553–0.3662; 15/148 → 0.0624–0.1605 (0.16049); 0/10 → 0–0.2775; 10/10 → 0.7225–1.
    expect(round(wilson(81, 263))).toEqual([0.255, 0.366]);
    expect(round(wilson(15, 148))).toEqual([0.062, 0.160]);
    expect(round(wilson(0, 10))).toEqual([0, 0.278]);
    expect(round(wilson(10, 10))).toEqual([0.722, 1]);
    expect(round(wilson(11, 16))).toEqual([0.444, 0.858]);
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });
});

describe('newcombe', () => {
  it('gives the published hybrid score intervals for a difference', () => {
    // Newcombe (1998), table II, method 10: 56/70 − 48/80 → 0.0524–0.3339; 9/10 − 3/10 → 0.1705–0.8090.
    expect(round(newcombe(56, 70, 48, 80))).toEqual([0.052, 0.334]);
    expect(round(newcombe(9, 10, 3, 10))).toEqual([0.171, 0.809]);
  });

  it('calls a drop beyond the noise only when the whole interval is above 0', () => {
    expect(dropBeyondNoise(3, 3, 1, 3).beyondNoise).toBe(false); // three cases cannot tell two fewer from noise
    expect(dropBeyondNoise(3, 3, 0, 3).beyondNoise).toBe(true);
    expect(dropBeyondNoise(2, 2, 0, 2).beyondNoise).toBe(true);
    expect(dropBeyondNoise(100, 100, 95, 100).beyondNoise).toBe(true);
    expect(dropBeyondNoise(100, 100, 97, 100).beyondNoise).toBe(false);
    expect(dropBeyondNoise(5, 5, 3, 5).beyondNoise).toBe(false);
    expect(dropBeyondNoise(5, 5, 5, 5)).toMatchObject({ diff: 0, beyondNoise: false });
  });
});

const c = (id: string, verdict: string, right = verdict === 'right' ? 1 : 0, answers = 1): FinalCase => ({ id, verdict, answers, right, rate: right / answers });
const rule = (cases: FinalCase[], over: Partial<Parameters<typeof finalRule>[0]> = {}) =>
  finalRule({ cases, stuck: [], rightInBatch: new Map(), maxStuckShare: 0.2, heldOutFailed: false, voids: 0, ...over });

describe('finalRule', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => c(`c${i}`, 'right'));

  it('is VERIFIED when every case not stuck is right by the majority of its answers', () => {
    const r = rule([...many(8), c('slipped', 'right', 2, 3), c('s', 'wrong')], { stuck: ['s'] });
    expect(r).toMatchObject({ verdict: 'VERIFIED', wrong: [], stuck: ['s'], why: [] });
    expect(r.rate).toBeCloseTo(0.9);
  });

  it('fails on a case wrong in the majority of its answers, and names why', () => {
    const r = rule([...many(8), c('w', 'wrong', 1, 3)]);
    expect(r.verdict).toBe('FAILED');
    expect(r.wrong).toEqual(['w']);
    expect(r.why).toEqual(['1 case not stuck and not right in the majority of its answers']);
  });

  it('fails when the stuck cases exceed maxStuckShare of the selection, even with nothing else wrong', () => {
    const cases = [...many(3), c('s1', 'wrong'), c('s2', 'wrong')];
    const r = rule(cases, { stuck: ['s1', 's2'] });
    expect(r.verdict).toBe('FAILED');
    expect(r.why).toEqual(['2 of 5 cases are stuck (40%), more than maxStuckShare 20%: the tuning gave up on too much of its selection']);
    expect(rule(cases, { stuck: ['s1', 's2'], maxStuckShare: 0.4 }).verdict).toBe('VERIFIED');
    expect(rule([...many(4), c('s1', 'wrong')], { stuck: ['s1'] }).verdict).toBe('VERIFIED'); // 1 of 5 is 20%: at the limit, not above it
  });

  it('is VOID when a case could not be graded, and FAILED on a held-out drop or a regression', () => {
    expect(rule(many(3), { voids: 1 }).verdict).toBe('VOID');
    expect(rule(many(3), { heldOutFailed: true })).toMatchObject({ verdict: 'FAILED', why: ['the held-out set dropped beyond the noise'] });
    expect(rule([...many(3), c('s', 'wrong')], { stuck: ['s'], maxStuckShare: 1, rightInBatch: new Map([['s', true]]) }))
      .toMatchObject({ verdict: 'FAILED', regressed: ['s'] });
  });
});

describe('finalLine', () => {
  it('says right, wrong and stuck with counts and ids next to the verdict', () => {
    expect(finalLine({ verdict: 'VERIFIED', right: 11, total: 16, wrong: [], stuck: ['c', 'd'] }))
      .toBe('VERIFIED: 11 of 16 right (rate 69%, 95% CI 44–86%); wrong: none; stuck: c, d');
    expect(finalLine({ verdict: 'FAILED', right: 2, total: 4, wrong: ['a'], stuck: ['b'], why: ['1 case not stuck and not right in the majority of its answers'] }))
      .toBe('FAILED: 2 of 4 right (rate 50%, 95% CI 15–85%); wrong: a; stuck: b — not VERIFIED: 1 case not stuck and not right in the majority of its answers');
  });
});
