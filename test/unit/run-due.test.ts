import { describe, expect, it } from 'vitest';
import { FINAL_RUN } from '../../src/core/names.js';
import { decideNext, type NextKind, type NextStep } from '../../src/core/next.js';
import { isRefusal } from '../../src/core/refusal.js';
import { budgetLeft, budgetRefusal, dueRun, spentBeforeRun } from '../../src/core/run-due.js';
import { History, makeConfig, nextInput, nomem } from '../helpers/history.js';

const ABC = ['a', 'b', 'c'];
const next = (h: History): NextStep => decideNext(nextInput(h, { selection: ABC }));
const step = (kind: NextKind, run: string | null): NextStep => ({ kind, message: `the step is ${kind}`, command: `git tune ${kind}`, batch: 1, half: 'nomem', run, notes: [] });
const planned = () => new History().setup(3).plan(1, ABC);
const allDone = () => new History().setup(3).smoothBatch(1, ABC);

describe('dueRun: which run `git tune run` starts or resumes, from next', () => {
  it.each([
    ['a planned batch: its first run, new', () => planned(), { name: nomem(1, 1), resume: false }],
    ['a started run: resumed', () => { const h = planned(); h.start(nomem(1, 1)); return h; }, { name: nomem(1, 1), resume: true }],
    ['an edit after a graded run: the confirming run', () => { const h = planned().ran(nomem(1, 1), 'MIXED', ['a']); h.edit(nomem(1, 1)); return h; }, { name: nomem(1, 2), resume: false }],
    ['a VOID run: run again, numbered after the last run of its half', () => planned().voided(nomem(1, 1)), { name: nomem(1, 2), resume: false }],
  ])('%s', (_, history, want) => {
    const h = history();
    expect(dueRun(h.fold(ABC), next(h), false)).toEqual(want);
  });

  it.each<[NextKind, string | null]>([['grade', nomem(1, 1)], ['batch', null], ['done', null], ['final', FINAL_RUN], ['run', FINAL_RUN]])(
    'refuses when next says %s (%s): run-not-due, with next\'s message and command', (kind, run) => {
      const refused = dueRun(planned().fold(ABC), step(kind, run), false);
      expect(refused).toMatchObject({ refused: true, kind: 'history', code: 'run-not-due', message: `no run is due: the step is ${kind}`, hint: `git tune ${kind}` });
    });
});

describe('dueRun: the final check', () => {
  it('starts it when next says final and no edit stands unconfirmed', () => {
    const h = allDone();
    const s = next(h);
    expect(s.kind).toBe('final');
    expect(dueRun(h.fold(ABC), s, true)).toEqual({ name: FINAL_RUN, resume: false });
  });

  it('resumes a final check that started and did not finish, whatever next says', () => {
    const h = allDone();
    h.start(FINAL_RUN);
    expect(dueRun(h.fold(ABC), step('grade', null), true)).toEqual({ name: FINAL_RUN, resume: true });
  });

  it('runs a VOID final check again as the next run of the final check', () => {
    const h = allDone();
    h.start(FINAL_RUN);
    h.finish(FINAL_RUN, { void: 'exit 137' });
    expect(dueRun(h.fold(ABC), step('void-rerun', FINAL_RUN), true)).toEqual({ name: 'final-check-run2', resume: false });
  });

  it('refuses while an edit stands unconfirmed, naming it and where it stands', () => {
    const h = allDone();
    const edit = h.edit(nomem(1, 1));
    const refused = dueRun(h.fold(ABC), step('final', null), true);
    expect(isRefusal(refused)).toBe(true);
    expect(refused).toMatchObject({ kind: 'history', code: 'unconfirmed-edits', hint: 'git tune final   # or keep one on purpose: git tune grade --keep <commit> --why "…"' });
    expect(isRefusal(refused) && refused.message).toContain(edit.slice(0, 7));
  });

  it('refuses when the final check is not due', () => {
    expect(dueRun(planned().fold(ABC), step('run', nomem(1, 1)), true)).toMatchObject({ code: 'final-not-due', message: 'the final check is not due: the step is run', hint: 'git tune run' });
  });
});

describe('budget', () => {
  const budget = (maxCostUsd: number | null, maxTokens: number | null) => makeConfig({ budget: { maxCostUsd, maxTokens } }).budget;
  it.each([
    [budget(null, null), { tokens: 1e9, costUsd: 1e9 }, null],
    [budget(1, null), { tokens: 1e9, costUsd: 0.99 }, null],
    [budget(1, null), { tokens: 0, costUsd: 1 }, 'budget spent: $1.0000 of $1'],
    [budget(null, 500), { tokens: 499, costUsd: 50 }, null],
    [budget(null, 500), { tokens: 500, costUsd: 0 }, 'budget spent: 500 of 500 tokens'],
    [budget(2, 500), { tokens: 900, costUsd: 2.5 }, 'budget spent: $2.5000 of $2'],
  ])('budgetLeft(%o, %o) = %s', (b, spent, want) => {
    expect(budgetLeft(b, spent)).toBe(want);
  });

  it('a run about to start is refused with the limit that stops it doubled as the hint', () => {
    expect(budgetRefusal('batch01-nomem-run1', budget(1.25, null), { tokens: 0, costUsd: 2 }))
      .toEqual({ refused: true, kind: 'history', code: 'budget-spent', message: 'batch01-nomem-run1 cannot start: budget spent: $2.0000 of $1.25', hint: 'git tune config set budget.maxCostUsd 2.5' });
    expect(budgetRefusal('the final check', budget(null, 300), { tokens: 300, costUsd: 0 })?.hint).toBe('git tune config set budget.maxTokens 600');
    expect(budgetRefusal('x', budget(null, 300), { tokens: 299, costUsd: 0 })).toBeNull();
  });

  it('what a run has spent before its next case: the tuning\'s usage, its own recorded part replaced by the cases kept', () => {
    const h = planned();
    h.start(nomem(1, 1));
    h.stop(nomem(1, 1), 'budget', 500, 0.5);
    const state = h.fold(ABC);
    expect(state.usage).toEqual({ tokens: 500, costUsd: 0.5 });
    expect(spentBeforeRun(state, nomem(1, 1), { tokens: 700, costUsd: 0.7 })).toEqual({ tokens: 700, costUsd: 0.7 });
    expect(spentBeforeRun(state, nomem(1, 2), { tokens: 10, costUsd: 0.25 })).toEqual({ tokens: 510, costUsd: 0.75 });
  });
});
