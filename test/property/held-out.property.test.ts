import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldHistory } from '../../src/core/fold.js';
import { heldOutClashes } from '../../src/core/held-out.js';
import { planBatch } from '../../src/core/plan.js';
import { selectCases } from '../../src/core/select.js';
import { History, nomem, mem } from '../helpers/history.js';

/**
 * The held-out set (docs/held-out.md) is never planned into a batch. The
 * selection is drawn from the dataset the import kept (the held-out set
 * refused whole when it shares an id or an input with it), and every batch is
 * planned from that selection, so over whole generated tunings no plan,
 * new or recheck, ever names a held-out case; and a held-out set that shares
 * cases with the dataset is refused with exactly those cases named.
 */
const pool = Array.from({ length: 30 }, (_, i) => `c-${String(i).padStart(2, '0')}`);

const tuning = fc.record({
  /** Which of the pool's ids go to the dataset, and which to the held-out set (overlaps allowed: they must be caught). */
  dataset: fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 20 }),
  heldOut: fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 10 }),
  /** Held-out cases that reuse a dataset case's input under a new id. */
  sameInput: fc.array(fc.nat(19), { maxLength: 3 }),
  seed: fc.nat(1000),
  limit: fc.option(fc.integer({ min: 1, max: 20 }), { nil: null }),
  minBatch: fc.integer({ min: 1, max: 4 }),
  extra: fc.integer({ min: 0, max: 4 }),
  recheck: fc.integer({ min: 0, max: 3 }),
});

describe('held-out cases and the planner', () => {
  it('a clash is named for each shared id and input; with none, no batch ever plans a held-out case (200 tunings)', () => {
    fc.assert(fc.property(tuning, (t) => {
      const dataset = t.dataset.map((id) => ({ id, class: 'c', input: `question ${id}`, complexity: 'medium' as const }));
      const reused = [...new Set(t.sameInput.map((i) => dataset[i % dataset.length]!))];
      const heldOut = [
        ...t.heldOut.map((id) => ({ id, input: `held question ${id}` })),
        ...reused.map((c, i) => ({ id: `h-same-${i}`, input: c.input })),
      ];
      const clashes = heldOutClashes(dataset, heldOut);
      const sharedIds = t.heldOut.filter((id) => t.dataset.includes(id));
      expect(clashes).toEqual([
        ...sharedIds.map((id) => `held-out case ${id} has the id of dataset case ${id}`),
        ...reused.map((c, i) => `held-out case h-same-${i} has the same input as dataset case ${c.id}`),
      ]);
      if (clashes.length > 0) return; // refused whole: nothing is kept

      const held = new Set(heldOut.map((c) => c.id));
      const selection = selectCases(dataset, t.seed, t.limit);
      expect(selection.some((id) => held.has(id))).toBe(false);
      const settings = { minBatch: t.minBatch, maxBatch: t.minBatch + t.extra, recheck: t.recheck, seed: t.seed, maxRetries: 3 };
      const h = new History().setup(selection.length, dataset.length);
      for (let b = 1; b <= selection.length + 1; b++) {
        const plan = planBatch({ state: foldHistory(h.tuning, h.commits, selection), selection, complexity: () => 'medium', settings });
        if (plan === null || plan.kind === 'difficult') break;
        expect([...plan.new, ...plan.recheck].filter((id) => held.has(id))).toEqual([]);
        h.plan(b, plan.new, plan.recheck, { size: plan.size });
        h.ran(nomem(b, 1), 'PASSED');
        h.candidate(nomem(b, 1));
        h.ran(mem(b, 1), 'PASSED');
        h.checkpoint(b);
      }
    }), { numRuns: 200 });
  });
});
