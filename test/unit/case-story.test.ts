import { describe, expect, it } from 'vitest';
import { buildCaseStory, storyCaseIds } from '../../src/core/case-story.js';
import { add, History, nomem, mem } from '../helpers/history.js';

/**
 * Batch 1 on a, b, c: run 1 wrong on a and b; an edit aimed at a; run 2 wrong
 * on b only (the edit confirmed); an edit aimed at b; run 3 wrong on a and b
 * (that edit reverted by its grade); a left on the difficult list.
 */
function story() {
  const h = new History().setup(3).plan(1, ['a', 'b', 'c']).ran(nomem(1, 1), 'NO CHANGE', ['a', 'b'], { tokens: 900 });
  const fixesA = h.edit(nomem(1, 1), ['a']);
  h.ran(nomem(1, 2), 'NO CHANGE', ['b'], { tokens: 800 });
  const fixesB = h.edit(nomem(1, 2), ['b']);
  h.ran(nomem(1, 3), 'NO CHANGE', ['a', 'b'], { difficult: [add('a', 'regressed')] });
  h.revert(fixesB);
  return { h, fixesA, fixesB };
}

describe('a case story', () => {
  it('tells every run that held the case, the edits between, and which edit turned it', () => {
    const { h, fixesA, fixesB } = story();
    const facts = new Map([
      [nomem(1, 1), { answer: 'no', status: 'ok' as const, tokens: 300, llmCalls: 4 }],
      [nomem(1, 2), { answer: 'yes', status: 'ok' as const, tokens: 200, llmCalls: 2 }],
    ]);
    const s = buildCaseStory(h.fold(), 'a', facts);
    expect(s.runs.map((r) => [r.run, r.outcome, r.turned ?? null])).toEqual([
      [nomem(1, 1), 'wrong', null], [nomem(1, 2), 'right', 'right'], [nomem(1, 3), 'wrong', 'wrong'],
    ]);
    expect(s.runs[0]).toMatchObject({ answer: 'no', tokens: 300, llmCalls: 4, editsBefore: [] });
    expect(s.runs[1]!.editsBefore).toEqual([expect.objectContaining({ oid: fixesA, status: 'confirmed', aimsHere: true, fate: `confirmed by ${nomem(1, 2)}` })]);
    expect(s.runs[2]!.editsBefore).toEqual([expect.objectContaining({ oid: fixesB, status: 'reverted', aimsHere: false })]);
    // Run 3's results were not read: no answer, tokens or calls made up.
    expect(s.runs[2]).not.toHaveProperty('answer');
    expect(s.runs[2]).not.toHaveProperty('tokens');
    expect(s.difficult).toEqual([{ reason: 'regressed', batch: 1, fixed: false }]);
    expect(s.editsSince).toEqual([]);
  });

  it('a case that never flipped has no turn; edits after its last run wait', () => {
    const { h } = story();
    const pending = h.edit(nomem(1, 3), ['b']);
    const s = buildCaseStory(h.fold(), 'c');
    expect(s.runs.map((r) => r.outcome)).toEqual(['right', 'right', 'right']);
    expect(s.runs.some((r) => r.turned)).toBe(false);
    expect(s.editsSince).toEqual([expect.objectContaining({ oid: pending, status: 'pending', aimsHere: false })]);
    expect(s.difficult).toEqual([]);
  });

  it('a VOID run and a void case are void, and do not count as a turn', () => {
    const h = new History().setup(2).plan(1, ['a', 'b']).ran(nomem(1, 1), 'NO CHANGE', ['a']);
    h.voided(nomem(1, 2));
    h.ran(nomem(1, 3), 'NO CHANGE', ['a']);
    h.ran(mem(1, 1), 'PASSED');
    const s = buildCaseStory(h.fold(), 'a', new Map([[nomem(1, 3), { status: 'void' as const, tokens: 0, llmCalls: 0 }]]));
    expect(s.runs.map((r) => [r.outcome, r.turned ?? null])).toEqual([['wrong', null], ['void', null], ['void', null], ['right', 'right']]);
  });

  it('knows the ids of every run and of the difficult list', () => {
    const { h } = story();
    expect([...storyCaseIds(h.fold(), ['z'])].sort()).toEqual(['a', 'b', 'c', 'z']);
  });
});
