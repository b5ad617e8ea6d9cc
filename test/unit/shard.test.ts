import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bestReceipt, formatShard, mergeInSelectionOrder, parseShard, selectionHash, shardCases, shardFolder, shardSetProblems, type ShardIdentity,
} from '../../src/core/shard.js';

const SELECTION = ['a1', 'b1', 'c1', 'a2', 'b2', 'c2', 'a3'];
const TIP = 'a'.repeat(40);

/** The shards of one split of SELECTION, as their manifests would say. */
function split(n: number, over: Partial<ShardIdentity> = {}): ShardIdentity[] {
  return Array.from({ length: n }, (_, k) => ({
    source: `shard-${k + 1}`, tuning: 'demo', tip: TIP, seed: 1, selectionHash: selectionHash(SELECTION), target: null,
    shard: { index: k + 1, count: n }, cases: shardCases(SELECTION, { index: k + 1, count: n }), ...over,
  }));
}

describe('--shard i/n: parse and format', () => {
  it('reads i/n with 1 ≤ i ≤ n, and writes it back the same', () => {
    expect(parseShard('2/5')).toEqual({ index: 2, count: 5 });
    expect(parseShard(' 1 / 1 ')).toEqual({ index: 1, count: 1 });
    for (const bad of ['0/3', '4/3', '3', '1/0', 'a/b', '-1/3', '1.5/3', '2/5/7', '']) expect(parseShard(bad), bad).toBeNull();
    fc.assert(fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), (a, b) => {
      const s = { index: Math.min(a, b), count: Math.max(a, b) };
      expect(parseShard(formatShard(s))).toEqual(s);
    }));
    expect(shardFolder({ index: 2, count: 5 })).toBe('2-of-5');
  });
});

describe('which cases a shard runs: every n-th of the selection', () => {
  it('gives shard i the selection indexes i−1, i−1+n, …', () => {
    expect(shardCases(SELECTION, { index: 1, count: 3 })).toEqual(['a1', 'a2', 'a3']);
    expect(shardCases(SELECTION, { index: 2, count: 3 })).toEqual(['b1', 'b2']);
    expect(shardCases(SELECTION, { index: 3, count: 3 })).toEqual(['c1', 'c2']);
    expect(shardCases(SELECTION, { index: 1, count: 1 })).toEqual(SELECTION);
    // More shards than cases: the last ones are empty, and still belong to the split.
    expect(shardCases(['x', 'y'], { index: 3, count: 3 })).toEqual([]);
  });

  it('splits any selection into n disjoint shards that merge back to it, sizes within one of each other', () => {
    fc.assert(fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,8}$/), { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (ids, n) => {
      const shards = Array.from({ length: n }, (_, k) => shardCases(ids.map((id) => ({ id })), { index: k + 1, count: n }));
      const sizes = shards.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      expect(shards.flat().map((x) => x.id).sort()).toEqual([...ids].sort());
      // Merged in any order of shards, the selection order comes back.
      expect(mergeInSelectionOrder(ids, [...shards].reverse()).map((x) => x.id)).toEqual(ids);
    }));
  });
});

describe('shards that do not belong together are refused, each reason named', () => {
  it('accepts a whole split, in any order', () => {
    expect(shardSetProblems(split(3).reverse(), SELECTION)).toEqual([]);
    expect(shardSetProblems(split(1), SELECTION)).toEqual([]);
  });

  it('names a missing shard and a shard given twice', () => {
    const [one, two, three] = split(3);
    expect(shardSetProblems([one!, three!], SELECTION)).toEqual(['shard 2/3 is missing']);
    expect(shardSetProblems([one!, two!, { ...two!, source: 'copy-of-2' }, three!], SELECTION)).toEqual(['shard 2/3 is given 2 times: shard-2, copy-of-2']);
  });

  it('names a different tip, seed, selection or tuning, with the sets that differ', () => {
    const [one, two, three] = split(3);
    const moved = { ...three!, tip: 'b'.repeat(40) };
    expect(shardSetProblems([one!, two!, moved], SELECTION)[0]).toBe(
      `different tuning tips (the branch moved between shards: run them all at one commit): ${'a'.repeat(12)} (shard-1, shard-2) vs ${'b'.repeat(12)} (shard-3)`);
    expect(shardSetProblems([one!, two!, { ...three!, seed: 2 }], SELECTION)).toEqual(['different seeds: 1 (shard-1, shard-2) vs 2 (shard-3)']);
    expect(shardSetProblems([one!, two!, { ...three!, tuning: 'other' }], SELECTION)).toEqual(['different tunings: demo (shard-1, shard-2) vs other (shard-3)']);
    const otherSelection = shardSetProblems([one!, two!, { ...three!, selectionHash: selectionHash(['z']) }], SELECTION);
    expect(otherSelection[0]).toMatch(/^different selections: /);
    expect(otherSelection[1]).toBe("the selection at the tuning's tip is not the one the shards ran (shard-3)");
  });

  it('names shards of different splits, and a shard that does not hold its cases', () => {
    expect(shardSetProblems([...split(2), split(3)[2]!], SELECTION)[0]).toBe('shards of different splits: of 2, of 3');
    const [one, two] = split(2);
    expect(shardSetProblems([one!, { ...two!, cases: ['b1'] }], SELECTION)).toEqual(['shard-2 does not hold the cases of shard 2/2']);
  });

  it('checks each target on its own: every target needs its whole split', () => {
    const a = split(2, { target: 'model-a' });
    const b = split(3, { target: 'model-b' });
    expect(shardSetProblems([...a, ...b], SELECTION)).toEqual([]);
    expect(shardSetProblems([...a, b[0]!, b[2]!], SELECTION)).toEqual(['shard 2/3 is missing (target model-b)']);
  });
});

describe('the best target', () => {
  const r = (target: string, casesRight: number, tokens: number, costUsd: number) => ({ target, verdict: 'VERIFIED', casesRight, casesTotal: 7, tokens, costUsd });

  it('is the one with most cases right, then fewest tokens, then the lowest cost', () => {
    expect(bestReceipt([r('a', 6, 100, 0.1), r('b', 7, 900, 0.9)])!.target).toBe('b');
    expect(bestReceipt([r('a', 7, 200, 0.1), r('b', 7, 100, 0.9)])!.target).toBe('b');
    expect(bestReceipt([r('a', 7, 100, 0.5), r('b', 7, 100, 0.2)])!.target).toBe('b');
    expect(bestReceipt([r('b', 7, 100, 0.2), r('a', 7, 100, 0.2)])!.target).toBe('a');
    expect(bestReceipt([])).toBeNull();
  });
});
