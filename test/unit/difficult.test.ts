import { describe, expect, it } from 'vitest';
import { fixedEntries, openEntries, retries, retriesText, stuckEntries, viewDifficult } from '../../src/core/difficult.js';
import { renderListing } from '../../src/cli/commands/difficult.js';
import { add, fix, History } from '../helpers/history.js';

describe('difficult list (docs/method.md#batches)', () => {
  it('counts retries as the later batches that hold the id, new or recheck', () => {
    const h = new History().setup(10);
    h.plan(1, ['a', 'b']).difficult(add('a', 'wrong'));
    h.plan(2, ['c'], ['a']); // retry 1 (recheck)
    h.plan(3, ['d'], ['b']); // does not hold a
    h.plan(4, ['a'], [], { kind: 'difficult' }); // retry 2 (new)
    const state = h.fold();
    const entry = state.difficult[0]!;
    expect(entry.batch).toBe(1);
    expect(retries(state, entry)).toBe(2);
  });

  it('does not count the batch the entry was added in', () => {
    const h = new History().setup(10).plan(1, ['a']).difficult(add('a', 'wrong'));
    const state = h.fold();
    expect(retries(state, state.difficult[0]!)).toBe(0);
  });

  it('calls an entry stuck once retries reach maxRetries', () => {
    const h = new History().setup(10);
    h.plan(1, ['a']).difficult(add('a', 'wrong'));
    h.plan(2, ['b'], ['a']);
    h.plan(3, ['c'], ['a']);
    const state = h.fold();
    expect(viewDifficult(state, 3)[0]).toMatchObject({ id: 'a', retries: 2, status: 'open' });
    expect(viewDifficult(state, 2)[0]).toMatchObject({ id: 'a', retries: 2, status: 'stuck' });
    expect(stuckEntries(viewDifficult(state, 2)).map((e) => e.id)).toEqual(['a']);
    expect(openEntries(viewDifficult(state, 2))).toEqual([]);
  });

  it('never shows more retries than the maximum: a stuck case held by later batches reads "3 of 3 (stuck)"', () => {
    const h = new History().setup(10);
    h.plan(1, ['a']).difficult(add('a', 'wrong'));
    for (let b = 2; b <= 6; b++) h.plan(b, [`n${b}`], ['a']); // five later batches hold it
    const state = h.fold();
    expect(retries(state, state.difficult[0]!)).toBe(5); // what history holds
    const [entry] = viewDifficult(state, 3);
    expect(entry).toMatchObject({ id: 'a', retries: 3, status: 'stuck' });
    expect(retriesText(entry!, 3)).toBe('3 of 3 (stuck)');
    const listing = renderListing({ entries: [{ ...entry!, notes: [] }], maxRetries: 3 } as unknown as Parameters<typeof renderListing>[0]);
    expect(listing).toMatch(/3 of 3 \(stuck\)/);
    expect(listing).not.toMatch(/[4-9] of 3/);
  });

  it('sorts open entries by worst reason, then fewest retries, then id', () => {
    const h = new History().setup(20);
    h.plan(1, ['k']);
    h.difficult(add('m-costly', 'costly'), add('z-wrong', 'wrong'), add('b-flaky', 'flaky'), add('a-memory', 'memory'));
    h.difficult(add('y-regressed', 'regressed'), add('c-wrong', 'wrong'), add('b-wrong', 'wrong'));
    h.plan(2, ['j'], ['b-wrong']); // b-wrong now has 1 retry
    const order = openEntries(viewDifficult(h.fold(), 3)).map((e) => e.id);
    expect(order).toEqual(['c-wrong', 'z-wrong', 'b-wrong', 'y-regressed', 'b-flaky', 'a-memory', 'm-costly']);
  });

  it('lists fixed entries in list order, and an id re-added after its fix speaks as its latest entry', () => {
    const h = new History().setup(10);
    h.plan(1, ['a', 'b', 'c']);
    h.difficult(add('c', 'wrong'), add('a', 'wrong'), add('b', 'costly'));
    h.difficult(fix('a'), fix('c'));
    let view = viewDifficult(h.fold(), 3);
    expect(fixedEntries(view).map((e) => e.id)).toEqual(['c', 'a']);
    expect(openEntries(view).map((e) => e.id)).toEqual(['b']);

    h.plan(2, ['d'], ['c']);
    h.difficult(add('c', 'regressed'));
    view = viewDifficult(h.fold(), 3);
    expect(view.filter((e) => e.id === 'c')).toMatchObject([{ status: 'open', reason: 'regressed', batch: 2, retries: 0 }]);
    expect(fixedEntries(view).map((e) => e.id)).toEqual(['a']);
  });
});
