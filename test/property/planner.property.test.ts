import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldHistory } from '../../src/core/fold.js';
import { planBatch, type PlanSettings } from '../../src/core/plan.js';
import { add, complexityOf, History, ids, mem, nomem } from '../helpers/history.js';

/**
 * The batch planner (docs/method.md#batches) over generated tunings: selections of any
 * size, any settings, batches that took 1 to 3 runs a half and left
 * difficult cases behind. Each batch is planned from the history the earlier
 * ones wrote, as `git tune batch` plans it.
 */
export const RUNS = { tunings: 100 };

const tuning = fc.record({
  n: fc.integer({ min: 1, max: 40 }),
  settings: fc.record({
    minBatch: fc.integer({ min: 1, max: 6 }),
    extra: fc.integer({ min: 0, max: 12 }),
    recheck: fc.integer({ min: 0, max: 6 }),
    seed: fc.nat(1_000_000),
    maxRetries: fc.integer({ min: 1, max: 4 }),
  }).map(({ extra, ...s }): PlanSettings => ({ ...s, maxBatch: s.minBatch + extra })),
  complex: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
  /** Per batch: runs in each half, and which of its cases become difficult (by position). */
  batches: fc.array(fc.record({
    nomemRuns: fc.integer({ min: 1, max: 3 }),
    memRuns: fc.integer({ min: 1, max: 3 }),
    difficult: fc.array(fc.nat(20), { maxLength: 2 }),
  }), { minLength: 40, maxLength: 40 }),
});

function runHalf(h: History, batch: number, half: 'nomem' | 'mem', runs: number): void {
  for (let i = 1; i <= runs; i++) h.ran(half === 'nomem' ? nomem(batch, i) : mem(batch, i), i === runs ? 'PASSED' : 'NO CHANGE');
}

describe('planBatch over whole tunings', () => {
  it(`uses every selected case exactly once as new, in selection order; rechecks are earlier cases only, never the batch's new ones; the same history always gives the same plan (${RUNS.tunings} tunings)`, () => {
    fc.assert(fc.property(tuning, ({ n, settings, complex, batches }) => {
      const selection = ids('s', 1, n);
      const complexity = complexityOf(selection.filter((_, i) => complex[i]));
      const h = new History().setup(n);
      const asNew: string[] = [];
      const used = new Set<string>();
      // The fold continued commit by commit, as the history cache does (the whole refold is O(batches²)).
      let state = foldHistory(h.tuning, h.commits, selection);
      let folded = h.commits.length;
      for (let b = 1; b <= n + 1; b++) {
        state = foldHistory(h.tuning, h.commits.slice(folded), selection, state);
        folded = h.commits.length;
        const input = { state, selection, complexity, settings };
        const plan = planBatch(input);
        expect(planBatch(input)).toEqual(plan); // deterministic
        if (plan === null || plan.kind === 'difficult') break;
        expect(plan.batch).toBe(b);
        expect(plan.size).toBeGreaterThanOrEqual(settings.minBatch);
        expect(plan.size).toBeLessThanOrEqual(settings.maxBatch);
        expect(plan.new).toEqual(selection.slice(asNew.length, asNew.length + plan.size));
        expect(plan.recheck.filter((id) => plan.new.includes(id))).toEqual([]);
        expect(plan.recheck.every((id) => used.has(id))).toBe(true);
        expect(new Set(plan.recheck).size).toBe(plan.recheck.length);
        expect(plan.recheck.length).toBe(Math.min(settings.recheck, used.size));
        asNew.push(...plan.new);
        const cases = [...plan.new, ...plan.recheck];
        for (const id of cases) used.add(id);
        // The batch as a tuning would live it: runs in each half, difficult cases left behind.
        const shape = batches[b - 1]!;
        h.plan(b, plan.new, plan.recheck, { size: plan.size });
        runHalf(h, b, 'nomem', shape.nomemRuns);
        h.candidate(nomem(b, shape.nomemRuns));
        runHalf(h, b, 'mem', shape.memRuns);
        const hard = [...new Set(shape.difficult.map((i) => cases[i % cases.length]!))];
        if (hard.length > 0) h.difficult(...hard.map((id) => add(id, 'wrong')));
        h.checkpoint(b);
      }
      expect(asNew).toEqual(selection);
      expect(state).toEqual(h.fold(selection)); // and the continued fold is the whole fold
    }), { numRuns: RUNS.tunings });
  });
});
