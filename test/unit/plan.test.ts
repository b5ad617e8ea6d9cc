import { describe, expect, it } from 'vitest';
import { planBatch, recheckKeys, type PlanSettings } from '../../src/core/plan.js';
import { add, complexityOf, fix, History, ids, mem, nomem } from '../helpers/history.js';

const SETTINGS: PlanSettings = { minBatch: 3, maxBatch: 10, recheck: 3, seed: 1, maxRetries: 3 };
const SEL = ids('sel', 1, 40);

function plan(h: History, opts: { selection?: string[]; settings?: Partial<PlanSettings>; complex?: string[]; size?: number } = {}) {
  const selection = opts.selection ?? SEL;
  return planBatch({
    state: h.fold(selection),
    selection,
    complexity: complexityOf(opts.complex ?? []),
    settings: { ...SETTINGS, ...opts.settings },
    ...(opts.size === undefined ? {} : { size: opts.size }),
  });
}

/**
 * The recheck keys worked out from docs/method.md#batches independently of the product,
 * in BigInt: s0 = ((seed × 7919 + n × 104729) mod 2147483646) + 1, then
 * s ← s × 48271 mod 2147483647; the i-th pool id gets the i-th value produced.
 */
function lehmerByHand(seed: number, n: number, count: number): number[] {
  let s = ((BigInt(seed) * 7919n + BigInt(n) * 104729n) % 2147483646n) + 1n;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (s * 48271n) % 2147483647n;
    out.push(Number(s));
  }
  return out;
}

describe('planBatch: size (docs/method.md#batches)', () => {
  it('batch 1 takes minBatch, from the head of the selection', () => {
    const p = plan(new History().setup(40));
    expect(p).toEqual({
      batch: 1, size: 3, kind: 'new', new: ['sel01', 'sel02', 'sel03'], recheck: [], why: 'batch 1 takes minBatch: 3',
    });
  });

  it('doubles after a batch with one run in each half and no new difficult case', () => {
    const p = plan(new History().setup(40).smoothBatch(1, ids('sel', 1, 3)));
    expect(p).toMatchObject({ batch: 2, size: 6, kind: 'new', new: ids('sel', 4, 9) });
    expect(p!.why).toBe('batch 1 went smoothly (1 no-memory + 1 with-memory runs, no new difficult case): 3 → 6');
  });

  it('doubles when each half had exactly 2 runs', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.ran(nomem(1, 1), 'NO CHANGE', ['sel01']);
    h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'PASSED').candidate(nomem(1, 2));
    h.ran(mem(1, 1), 'MIXED', ['sel02']);
    h.edit(mem(1, 1));
    h.ran(mem(1, 2), 'PASSED').checkpoint(1);
    expect(plan(h)).toMatchObject({ size: 6 });
  });

  it('stays (holds) when the no-memory half needed 3 runs', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.ran(nomem(1, 1), 'NO CHANGE', ['sel01']).ran(nomem(1, 2), 'NO CHANGE', ['sel01']).ran(nomem(1, 3), 'PASSED');
    h.candidate(nomem(1, 3)).ran(mem(1, 1), 'PASSED').checkpoint(1);
    const p = plan(h);
    expect(p).toMatchObject({ size: 3, new: ['sel04', 'sel05', 'sel06'] });
    expect(p!.why).toBe('batch 1 needed work (3 no-memory + 1 with-memory runs, more than 2 runs in a half): stays at 3');
  });

  it('stays when the with-memory half needed 3 runs', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1));
    h.ran(mem(1, 1), 'MIXED', ['sel01']).ran(mem(1, 2), 'MIXED', ['sel01']).ran(mem(1, 3), 'PASSED').checkpoint(1);
    expect(plan(h)).toMatchObject({ size: 3 });
  });

  it('leaves VOID runs out of the count', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.voided(nomem(1, 1), 16);
    h.ran(nomem(1, 2), 'VOID');
    h.ran(nomem(1, 3), 'NO CHANGE', ['sel02']);
    h.ran(nomem(1, 4), 'PASSED').candidate(nomem(1, 4));
    h.ran(mem(1, 1), 'PASSED').checkpoint(1);
    const p = plan(h);
    expect(p).toMatchObject({ size: 6 });
    expect(p!.why).toContain('(2 no-memory + 1 with-memory runs');
  });

  it('stays when a difficult entry was added in the previous batch and is not fixed', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.ran(nomem(1, 1), 'PASSED', [], { difficult: [add('sel03', 'costly')] });
    h.candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED').checkpoint(1);
    const p = plan(h);
    expect(p).toMatchObject({ size: 3 });
    expect(p!.why).toBe('batch 1 needed work (1 no-memory + 1 with-memory runs, 1 new difficult case): stays at 3');
  });

  it('doubles when the entry added in the previous batch was fixed', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3));
    h.ran(nomem(1, 1), 'PASSED', [], { difficult: [add('sel03', 'costly')] });
    h.candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED', [], { difficult: [fix('sel03')] }).checkpoint(1);
    expect(plan(h)).toMatchObject({ size: 6 });
  });

  it('only looks at entries added in batch n−1, not earlier', () => {
    const h = new History().setup(40).plan(1, ids('sel', 1, 3)).difficult(add('sel01', 'wrong'));
    h.ran(nomem(1, 1), 'PASSED', ['sel01']).candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED', ['sel01']).checkpoint(1);
    h.smoothBatch(2, ids('sel', 4, 6), ['sel01'], { size: 3 });
    expect(plan(h)).toMatchObject({ batch: 3, size: 6 });
  });

  it('is capped at maxBatch, and a capped size stays capped', () => {
    const settings = { minBatch: 3, maxBatch: 5 };
    const h = new History().setup(40).smoothBatch(1, ids('sel', 1, 3));
    const p2 = plan(h, { settings });
    expect(p2).toMatchObject({ batch: 2, size: 5 });
    expect(p2!.why).toBe('batch 1 went smoothly (1 no-memory + 1 with-memory runs, no new difficult case): 3 → 5 (maxBatch 5)');
    h.smoothBatch(2, p2!.new, p2!.recheck, { size: p2!.size });
    expect(plan(h, { settings })).toMatchObject({ batch: 3, size: 5 });
  });

  it('follows a run of batches: 3, 6, held at 6, then 12 capped at 10', () => {
    const h = new History().setup(40);
    const plans = [];
    for (let n = 1; n <= 3; n++) {
      const p = plan(h)!;
      plans.push(p);
      h.plan(n, p.new, p.recheck, { size: p.size });
      const rough = n === 2; // batch 2 needs 3 no-memory runs
      h.ran(nomem(n, 1), 'NO CHANGE', [p.new[0]!]);
      if (rough) h.ran(nomem(n, 2), 'NO CHANGE', [p.new[0]!]);
      const passing = nomem(n, rough ? 3 : 2);
      h.ran(passing, 'PASSED').candidate(passing);
      h.ran(mem(n, 1), 'PASSED').checkpoint(n);
    }
    plans.push(plan(h)!);
    expect(plans.map((p) => p.size)).toEqual([3, 6, 6, 10]);
    expect(plans.map((p) => p.new[0])).toEqual(['sel01', 'sel04', 'sel10', 'sel16']);
    expect(plans[3]!.why).toBe('batch 3 went smoothly (2 no-memory + 1 with-memory runs, no new difficult case): 6 → 10 (maxBatch 10)');
  });

  it('takes --size for one batch, and the next batch grows from it', () => {
    const h = new History().setup(40).smoothBatch(1, ids('sel', 1, 3));
    const p = plan(h, { size: 4 });
    expect(p).toMatchObject({ batch: 2, size: 4, new: ids('sel', 4, 7) });
    expect(p!.why).toBe('batch 2 size set by --size: 4');
    h.smoothBatch(2, p!.new, p!.recheck, { size: 4 });
    expect(plan(h)).toMatchObject({ batch: 3, size: 8, new: ids('sel', 8, 15) });
  });

  it('takes the unused cases that are left when fewer than size', () => {
    const selection = ids('sel', 1, 5);
    const h = new History().setup(5).smoothBatch(1, ids('sel', 1, 3));
    expect(plan(h, { selection })).toMatchObject({ size: 6, kind: 'new', new: ['sel04', 'sel05'] });
  });
});

describe('planBatch: difficult-only batches and the end', () => {
  const S = ids('s', 1, 8);

  /**
   * Every selected case used; x99 was used in batch 1 but is no longer in the
   * selection. Open: s06 wrong, x99 wrong, s02 regressed, s03 costly; fixed: s04.
   */
  function allUsed(): History {
    const h = new History().setup(8).plan(1, ['s01', 's02', 's03', 's04', 'x99']);
    h.ran(nomem(1, 1), 'PASSED', [], { difficult: [add('s04', 'costly')] });
    h.candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED').checkpoint(1);
    h.plan(2, ['s05', 's06', 's07', 's08'], ['s01']);
    h.difficult(fix('s04'), add('s03', 'costly'), add('s02', 'regressed'), add('x99', 'wrong'), add('s06', 'wrong'));
    return h;
  }

  it('when nothing is unused, takes the first `size` open difficult cases in the selection, kind difficult', () => {
    const p = plan(allUsed(), { selection: S, size: 1, settings: { seed: 7, recheck: 10 }, complex: ['s01', 's08'] });
    expect(p).toMatchObject({ batch: 3, size: 1, kind: 'difficult', new: ['s06'] });
  });

  it('leaves open entries out of the selection out of the batch', () => {
    const p = plan(allUsed(), { selection: S, size: 2, settings: { seed: 7, recheck: 10 }, complex: ['s01', 's08'] });
    // x99 (wrong) sorts before s02 (regressed) but is not in the selection.
    expect(p!.new).toEqual(['s06', 's02']);
    // pool: s01 s03 s04 s05 s07 s08; open s03, fixed s04, complex s01 < s08 by key, then s05 < s07 by key.
    expect(p!.recheck).toEqual(['s03', 's04', 's01', 's08', 's05', 's07']);
  });

  it('keeps the size of a batch that added difficult cases, and takes fewer when fewer are open', () => {
    const p = plan(allUsed(), { selection: S, settings: { seed: 7, recheck: 10 }, complex: ['s01', 's08'] });
    expect(p).toMatchObject({ size: 4, kind: 'difficult', new: ['s06', 's02', 's03'] });
    expect(p!.recheck).toEqual(['s04', 's01', 's08', 's07', 's05']);
  });

  it('leaves stuck entries out: retries ≥ maxRetries is not open', () => {
    const h = new History().setup(3).smoothBatch(1, ['a', 'b', 'c']).difficult(add('c', 'wrong'));
    h.smoothBatch(2, [], ['c'], { size: 3 });
    h.smoothBatch(3, [], ['c'], { size: 3 });
    // c was retried in batches 2 and 3 (added in batch 1).
    expect(plan(h, { selection: ['a', 'b', 'c'], settings: { maxRetries: 3 } })).toMatchObject({ kind: 'difficult', new: ['c'] });
    expect(plan(h, { selection: ['a', 'b', 'c'], settings: { maxRetries: 2 } })).toBeNull();
  });

  it('is null when every case is used and no difficult case is open', () => {
    const h = new History().setup(3).smoothBatch(1, ['a', 'b', 'c']);
    expect(plan(h, { selection: ['a', 'b', 'c'] })).toBeNull();
    h.difficult(add('b', 'wrong'), fix('b'));
    expect(plan(h, { selection: ['a', 'b', 'c'] })).toBeNull();
  });

  it('is null when the only open entries are out of the selection', () => {
    const h = new History().setup(3).smoothBatch(1, ['a', 'b', 'c', 'gone']).difficult(add('gone', 'wrong'));
    expect(plan(h, { selection: ['a', 'b', 'c'] })).toBeNull();
  });
});

describe('planBatch: recheck cases (docs/method.md#batches)', () => {
  const C = ids('c', 1, 20);
  const SETTINGS_A = { maxBatch: 12, recheck: 3 };
  const batchOneOfSix = () => new History().setup(20).smoothBatch(1, ids('c', 1, 6));

  it('keys the pool from the Lehmer sequence, computed here by hand', () => {
    // seed 1, batch 2: s0 = ((1 × 7919 + 2 × 104729) mod 2147483646) + 1 = 217378
    // key 1 = 217378 × 48271 mod 2147483647 = 1903118850, and so on.
    const byHand = lehmerByHand(1, 2, 6);
    expect(byHand).toEqual([1903118850, 394556984, 1775193068, 1452102834, 589661934, 822958776]);
    expect(recheckKeys(1, 2, 6)).toEqual(byHand);
    expect(recheckKeys(123456, 17, 50)).toEqual(lehmerByHand(123456, 17, 50));
    // The first key is the first value produced, not s0 itself.
    expect(recheckKeys(1, 2, 1)).toEqual([(217378 * 48271) % 2147483647]);
  });

  it('draws the ids with the smallest keys: seed 1 → c02, c05, c06', () => {
    // pool c01..c06 gets keys 1903118850, 394556984, 1775193068, 1452102834, 589661934, 822958776
    const p = plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, seed: 1 } });
    expect(p).toMatchObject({ batch: 2, size: 12, new: ids('c', 7, 18) });
    expect(p!.recheck).toEqual(['c02', 'c05', 'c06']);
  });

  it('same seed, same draw; another seed, another draw (seed 2 → c01, c04, c05)', () => {
    const a = plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, seed: 2 } });
    const b = plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, seed: 2 } });
    expect(a).toEqual(b);
    expect(a!.recheck).toEqual(['c01', 'c04', 'c05']);
    const c = plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, seed: 42 } });
    expect(c!.recheck).toEqual(['c04', 'c05', 'c01']);
  });

  it('takes complex cases first, each group by ascending key', () => {
    // keys (seed 1): c01 1903118850, c02 394556984, c03 1775193068, c04 1452102834, c05 589661934, c06 822958776
    const p = plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, seed: 1, recheck: 6 }, complex: ['c01', 'c03'] });
    expect(p!.recheck).toEqual(['c03', 'c01', 'c02', 'c05', 'c06', 'c04']);
  });

  it('takes open entries in the pool first, then fixed, then the rest', () => {
    const h = batchOneOfSix().difficult(add('c06', 'costly'), add('c04', 'wrong'), add('c01', 'flaky'), fix('c01'));
    h.difficult(add('c03', 'memory'), fix('c03'));
    const p = plan(h, { selection: C, settings: { ...SETTINGS_A, seed: 1, recheck: 6 }, size: 2 });
    // open: c04 (wrong), c06 (costly); fixed in list order: c01, c03; rest by key: c02, c05.
    expect(p!.recheck).toEqual(['c04', 'c06', 'c01', 'c03', 'c02', 'c05']);
    const few = plan(h, { selection: C, settings: { ...SETTINGS_A, seed: 1, recheck: 3 }, size: 2 });
    expect(few!.recheck).toEqual(['c04', 'c06', 'c01']);
  });

  it('leaves out of the pool the ids no longer in the selection', () => {
    const selection = C.filter((id) => id !== 'c02' && id !== 'c05');
    const p = plan(batchOneOfSix(), { selection, settings: { ...SETTINGS_A, seed: 1 } });
    // pool c01 c03 c04 c06 gets the first four keys: 1903118850, 394556984, 1775193068, 1452102834
    expect(p!.recheck).toEqual(['c03', 'c06', 'c04']);
  });

  it('keeps the pool in batch order with first occurrences, recheck ids included', () => {
    const h = new History().setup(20).smoothBatch(1, ['c03', 'c01'], ['c09']).smoothBatch(2, ['c02', 'c03'], ['c01'], { size: 2 });
    // used: c03 c01 c09 c02 → keys for batch 3, seed 1
    const keys = lehmerByHand(1, 3, 4);
    const expected = ['c03', 'c01', 'c09', 'c02']
      .map((id, i) => [id, keys[i]!] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([id]) => id);
    const p = plan(h, { selection: C, settings: { seed: 1, recheck: 4 } });
    expect(p!.recheck).toEqual(expected);
  });

  it('takes none when recheck is 0, and all of a small pool when recheck is larger', () => {
    expect(plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, recheck: 0 } })!.recheck).toEqual([]);
    expect(plan(batchOneOfSix(), { selection: C, settings: { ...SETTINGS_A, recheck: 99 } })!.recheck).toHaveLength(6);
  });
});
