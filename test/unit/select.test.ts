import { describe, expect, it } from 'vitest';
import { seededKey, selectCases, type SelectableCase } from '../../src/core/select.js';

type C = SelectableCase;
const c = (id: string, cls: string, complexity: C['complexity'] = 'medium', rubric = false): C => ({
  id, class: cls, complexity, ...(rubric ? { rubric: [{ id: 'r1', text: 'names the window' }] } : {}),
});

describe('selection order (docs/method.md#selection)', () => {
  it('lets classes take turns, largest class first', () => {
    const cases = [
      c('auth-1', 'auth'),
      c('ship-1', 'shipping', 'complex'), c('ship-2', 'shipping', 'simple'),
      c('bill-1', 'billing', 'complex'), c('bill-2', 'billing', 'medium'), c('bill-3', 'billing', 'simple'),
    ];
    expect(selectCases(cases, 1, null)).toEqual(['bill-1', 'ship-1', 'auth-1', 'bill-2', 'ship-2', 'bill-3']);
  });

  it('breaks ties between classes of one size by name', () => {
    const cases = [c('z1', 'zeta'), c('a1', 'alpha'), c('m1', 'mu'), c('z2', 'zeta', 'simple'), c('a2', 'alpha', 'simple'), c('m2', 'mu', 'simple')];
    expect(selectCases(cases, 1, null)).toEqual(['a1', 'm1', 'z1', 'a2', 'm2', 'z2']);
  });

  it('puts cases with a rubric first inside a class, then complex, medium, simple', () => {
    const cases = [
      c('simple', 'k', 'simple'), c('medium', 'k', 'medium'), c('complex', 'k', 'complex'),
      c('rubric-simple', 'k', 'simple', true), c('rubric-complex', 'k', 'complex', true),
      { ...c('empty-rubric-complex', 'k', 'complex'), rubric: [] },
    ];
    // An empty rubric is no rubric; complex and empty-rubric-complex are of one rank, so the seed orders them.
    expect(seededKey(1, 'empty-rubric-complex') < seededKey(1, 'complex')).toBe(true);
    expect(selectCases(cases, 1, null)).toEqual([
      'rubric-complex', 'rubric-simple', 'empty-rubric-complex', 'complex', 'medium', 'simple',
    ]);
  });

  it('orders cases of the same rank by seed, the same on every machine', () => {
    const cases = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'].map((id) => c(id, 'k'));
    // ascending sha256("<seed>:<id>"), worked out outside the product.
    expect(seededKey(1, 'm1')).toBe('2e59fc7813e3721dbed6b0d38fc61caa170e36f700e8894580f6417328a41d94');
    expect(selectCases(cases, 1, null)).toEqual(['m4', 'm1', 'm3', 'm5', 'm6', 'm2']);
    expect(selectCases([...cases].reverse(), 1, null)).toEqual(['m4', 'm1', 'm3', 'm5', 'm6', 'm2']);
    expect(selectCases(cases, 2, null)).toEqual(['m3', 'm1', 'm2', 'm6', 'm4', 'm5']);
  });

  it('cuts the tail at limit', () => {
    const cases = [c('b1', 'b', 'complex'), c('b2', 'b'), c('a1', 'a')];
    expect(selectCases(cases, 1, null)).toEqual(['b1', 'a1', 'b2']);
    expect(selectCases(cases, 1, 2)).toEqual(['b1', 'a1']);
    expect(selectCases(cases, 1, 10)).toEqual(['b1', 'a1', 'b2']);
  });

  it('selects nothing from nothing', () => {
    expect(selectCases([], 1, null)).toEqual([]);
  });
});
