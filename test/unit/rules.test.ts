import { describe, expect, it } from 'vitest';
import { passedRuleBreaks, reviewHeading } from '../../src/core/rules.js';
import { add, fix, History, mem, nomem } from '../helpers/history.js';

function breaksOf(h: History, run: string, opts: { maxRuns?: number; maxRetries?: number; review?: boolean; wrong?: string[] } = {}) {
  const state = h.fold(['a', 'b', 'c']);
  return passedRuleBreaks({
    state, run: state.runs.get(run)!, maxRuns: opts.maxRuns ?? 4, maxRetries: opts.maxRetries ?? 3,
    ...(opts.review === undefined ? {} : { review: opts.review }),
    ...(opts.wrong === undefined ? {} : { wrong: opts.wrong }),
  });
}

const batch1 = () => new History().setup(3).plan(1, ['a', 'b', 'c']);

describe('PASSED rules (docs/method.md#grading)', () => {
  it('accepts a PASSED with its review, nothing pending and every case right', () => {
    expect(breaksOf(batch1().ran(nomem(1, 1), 'PASSED'), nomem(1, 1))).toEqual([]);
  });

  describe('(a) the review section', () => {
    it('refuses a no-memory PASSED without `## Cost review`', () => {
      const breaks = breaksOf(batch1().ran(nomem(1, 1), 'PASSED', [], { review: false }), nomem(1, 1));
      expect(breaks).toEqual([
        {
          rule: 'review',
          message: 'PASSED needs a `## Cost review` section in the findings',
          fix: 'git tune grade --draft --run batch01-nomem-run1',
        },
      ]);
    });

    it('refuses a with-memory PASSED without `## Memory review`', () => {
      const h = batch1().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED', [], { review: false });
      const state = h.fold();
      expect(reviewHeading(state.runs.get(mem(1, 1))!)).toBe('## Memory review');
      expect(breaksOf(h, mem(1, 1)).map((b) => [b.rule, b.message])).toEqual([
        ['review', 'PASSED needs a `## Memory review` section in the findings'],
      ]);
    });

    it('checks the findings being graded before they are recorded', () => {
      const h = batch1();
      h.start(nomem(1, 1));
      h.finish(nomem(1, 1));
      expect(breaksOf(h, nomem(1, 1), { review: false, wrong: [] }).map((b) => b.rule)).toEqual(['review']);
      expect(breaksOf(h, nomem(1, 1), { review: true, wrong: [] })).toEqual([]);
    });
  });

  describe('(b) pending edits', () => {
    it('refuses a PASSED followed by an edit no run has tried', () => {
      const h = batch1().ran(nomem(1, 1), 'PASSED');
      const edit = h.edit(nomem(1, 1));
      expect(breaksOf(h, nomem(1, 1))).toEqual([
        {
          rule: 'pending',
          message: `an edit made after this run is pending (${edit.slice(0, 7)}): no run has tried it`,
          fix: 'git tune run',
        },
      ]);
    });

    it('does not count edits of the other half or batch', () => {
      const h = batch1().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'PASSED');
      h.edit(mem(1, 1));
      expect(breaksOf(h, nomem(1, 1))).toEqual([]);
      expect(breaksOf(h, mem(1, 1)).map((b) => b.rule)).toEqual(['pending']);
    });
  });

  describe('(b) at maxRuns, unconfirmed and pending edits reverted', () => {
    function atLimit() {
      const h = batch1().ran(nomem(1, 1), 'NO CHANGE', ['a']);
      const unconfirmed = h.edit(nomem(1, 1));
      h.ran(nomem(1, 2), 'NO CHANGE', ['a'], { difficult: [add('a', 'wrong')] });
      return { h, unconfirmed };
    }

    it('refuses while an unconfirmed edit is still in', () => {
      const { h, unconfirmed } = atLimit();
      h.grade(nomem(1, 2), 'PASSED', ['a']);
      expect(breaksOf(h, nomem(1, 2), { maxRuns: 2 })).toEqual([
        {
          rule: 'unreverted',
          message: `the half used all 2 runs: PASSED needs every unconfirmed and pending edit reverted first (${unconfirmed.slice(0, 7)})`,
          fix: 'git tune revert',
        },
      ]);
    });

    it('names pending edits too, under this rule rather than `pending`', () => {
      const { h, unconfirmed } = atLimit();
      const pending = h.edit(nomem(1, 2));
      h.grade(nomem(1, 2), 'PASSED', ['a']);
      const breaks = breaksOf(h, nomem(1, 2), { maxRuns: 2 });
      expect(breaks.map((b) => b.rule)).toEqual(['unreverted']);
      expect(breaks[0]!.message).toContain(`(${pending.slice(0, 7)}, ${unconfirmed.slice(0, 7)})`);
    });

    it('accepts once they are reverted, keeping confirmed edits', () => {
      const h = batch1().ran(nomem(1, 1), 'NO CHANGE', ['a', 'b']);
      const confirmed = h.edit(nomem(1, 1));
      h.ran(nomem(1, 2), 'PROGRESS', ['b'], { difficult: [add('b', 'wrong')] });
      const unconfirmed = h.edit(nomem(1, 2));
      h.revert(unconfirmed);
      h.grade(nomem(1, 2), 'PASSED', ['b']);
      expect(h.fold().edits.map((e) => [e.oid, e.status])).toEqual([[confirmed, 'confirmed'], [unconfirmed, 'reverted']]);
      expect(breaksOf(h, nomem(1, 2), { maxRuns: 2 })).toEqual([]);
    });

    it("does not apply before the limit: an unconfirmed edit there breaks rule (b') instead", () => {
      const { h, unconfirmed } = atLimit();
      h.grade(nomem(1, 2), 'PASSED', ['a']);
      expect(breaksOf(h, nomem(1, 2), { maxRuns: 3 })).toEqual([{
        rule: 'unsettled',
        message: `edit ${unconfirmed.slice(0, 7)} of this half is unconfirmed and neither reverted nor kept (to keep one on purpose: git tune grade --keep <commit> --why "…")`,
        fix: `git tune revert ${unconfirmed.slice(0, 7)}`,
      }]);
    });
  });

  describe('(b) at maxRuns, a memory-policy edit the run confirms by passing', () => {
    it('does not ask to revert an edit after a with-memory run that fell short, when the PASSED being graded confirms it', () => {
      const h = batch1().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'CORRECT');
      h.edit(mem(1, 1));
      h.start(mem(1, 2));
      h.finish(mem(1, 2));
      expect(breaksOf(h, mem(1, 2), { maxRuns: 2, review: true, wrong: [] })).toEqual([]);
      expect(breaksOf(h, mem(1, 2), { maxRuns: 2, review: true, wrong: ['a'] }).map((b) => b.rule)).toEqual(['unreverted', 'wrong-not-difficult']);
    });

    it('nor a cost edit after a no-memory CORRECT run, when the PASSED being graded confirms it', () => {
      const h = batch1().ran(nomem(1, 1), 'CORRECT');
      h.edit(nomem(1, 1));
      h.start(nomem(1, 2));
      h.finish(nomem(1, 2));
      expect(breaksOf(h, nomem(1, 2), { maxRuns: 2, review: true, wrong: [] })).toEqual([]);
    });
  });

  describe('(c) every wrong case is on the difficult list', () => {
    it('refuses a wrong case that is not on the list, naming the command that adds it', () => {
      const h = batch1().ran(nomem(1, 1), 'PASSED', ['c', 'a'], { difficult: [add('a', 'costly')] });
      expect(breaksOf(h, nomem(1, 1))).toEqual([
        {
          rule: 'wrong-not-difficult',
          message: 'PASSED with wrong cases needs each on the difficult list: c',
          fix: 'git tune difficult add c --why wrong',
          ids: ['c'],
        },
      ]);
    });

    it('refuses a wrong case whose entry is fixed', () => {
      const h = batch1().difficult(add('a', 'wrong'), fix('a')).ran(nomem(1, 1), 'PASSED', ['a']);
      expect(breaksOf(h, nomem(1, 1)).map((b) => b.rule)).toEqual(['wrong-not-difficult']);
    });

    it('accepts a wrong case that is stuck (design decision: open or stuck)', () => {
      const h = new History().setup(3).plan(1, ['a']).difficult(add('a', 'wrong'));
      h.plan(2, ['b'], ['a']).ran(nomem(2, 1), 'PASSED', ['a']);
      expect(breaksOf(h, nomem(2, 1), { maxRetries: 1 })).toEqual([]);
    });
  });

  it('reports every broken rule at once', () => {
    const h = batch1().ran(nomem(1, 1), 'PASSED', ['b'], { review: false });
    h.edit(nomem(1, 1));
    expect(breaksOf(h, nomem(1, 1)).map((b) => b.rule)).toEqual(['review', 'pending', 'wrong-not-difficult']);
  });

  it('has no PASSED rules for the final check', () => {
    const h = new History().setup(3).smoothBatch(1, ['a', 'b', 'c']).ran('final-check', 'FAILED', ['a'], { review: false });
    expect(breaksOf(h, 'final-check')).toEqual([]);
  });
});
