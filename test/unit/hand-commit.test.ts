import { describe, expect, it } from 'vitest';
import { matcher } from '../../src/core/glob.js';
import { planHandCommit, type HandCommitInput } from '../../src/core/hand-commit.js';
import { History, mem, nomem, TUNING } from '../helpers/history.js';

const ABC = ['a', 'b', 'c'];
const planned = () => new History().setup(3).plan(1, ABC);
const isMemoryPolicy = matcher(['memory/**']);
const plan = (h: History, over: Partial<HandCommitInput> = {}) =>
  planHandCommit({ tuning: TUNING, state: h.fold(ABC), message: 'reword\n', prose: [], isMemoryPolicy, changes: null, ...over });

describe('the step a hand commit is (the commit hooks write its trailers)', () => {
  it('a revert of a standing edit is a revert step; of one already reverted, not', () => {
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a']);
    const edit = h.edit(nomem(1, 1));
    const message = `Revert "edit"\n\nThis reverts commit ${edit}.\n`;
    const p = plan(h, { message, prose: ['agents/a.md'] });
    expect(p.step).toEqual({ step: 'revert', tuning: TUNING, reverts: [edit], difficult: [] });
    expect(p.summary).toBe(`a revert of the edit ${edit.slice(0, 7)}`);
    expect(p.trailers).toEqual([['Tune-Tuning', TUNING], ['Tune-Step', 'revert'], ['Tune-Reverts', edit]]);
    h.revert(edit);
    expect(plan(h, { message, prose: ['agents/a.md'] }).step.step).toBe('edit');
  });

  it.each<[string, () => History, string[], string | null, object, string]>([
    ['prose after a graded run: an edit of it, aims from its changes.md', () => planned().ran(nomem(1, 1), 'MIXED', ['a']), ['agents/a.md'], 'Fix.\nAims: a\n',
      { step: 'edit', run: nomem(1, 1), aims: ['a'] }, `an edit after ${nomem(1, 1)} (agents/a.md)`],
    ['no changes.md staged: no aims named', () => planned().ran(nomem(1, 1), 'MIXED', ['a']), ['agents/a.md'], null,
      { step: 'edit', run: nomem(1, 1), aims: null }, `an edit after ${nomem(1, 1)} (agents/a.md)`],
    ['prose before any run is graded: a note', () => planned(), ['agents/a.md'], null, { step: 'note' }, 'a note (prose changed before any run was graded)'],
    ['no prose: a note', () => planned().ran(nomem(1, 1), 'MIXED', ['a']), [], null, { step: 'note' }, 'a note'],
  ])('%s', (_, history, prose, changes, step, summary) => {
    const p = plan(history(), { prose, changes });
    expect(p.step).toMatchObject({ tuning: TUNING, ...step });
    expect(p.summary).toBe(summary);
    expect(p.warnings).toEqual([]);
  });

  it('warns when a later run waits for its grade, and when a with-memory run\'s edit changes more than memory policy', () => {
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a']);
    h.edit(nomem(1, 1));
    h.start(nomem(1, 2));
    h.finish(nomem(1, 2));
    expect(plan(h, { prose: ['agents/a.md'] }).warnings).toEqual([`${nomem(1, 2)} is not graded yet: this edit is recorded after ${nomem(1, 1)}`]);
    const m = planned().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'MIXED', ['b']);
    expect(plan(m, { prose: ['memory/m.md', 'agents/a.md'] }).warnings).toEqual([`${mem(1, 1)} is a with-memory run: only memory-policy files should change (also changed: agents/a.md)`]);
  });

  it('uses the fold\'s rule: the commit the hooks call an edit of a run, the fold reads as an edit of that run without trailers', () => {
    const histories = [
      () => planned(),
      () => planned().ran(nomem(1, 1), 'MIXED', ['a']),
      () => planned().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'MIXED', ['b']),
      () => { const h = planned().ran(nomem(1, 1), 'MIXED', ['a']); h.start(nomem(1, 2)); return h; },
    ];
    for (const make of histories) {
      for (const touches of [true, false]) {
        const h = make();
        const p = plan(h, { prose: touches ? ['agents/a.md'] : [] });
        const oid = h.hand(touches);
        const edit = h.fold(ABC).edits.find((e) => e.oid === oid);
        expect(edit?.run ?? null).toBe(p.step.step === 'edit' ? p.step.run : null);
      }
    }
  });
});
