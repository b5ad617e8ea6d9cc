import { describe, expect, it } from 'vitest';
import { countedRuns, currentBatch, halfRuns, isVoidRun, rightCases } from '../../src/core/fold.js';
import { add, fakeOid, fix, History, mem, nomem } from '../helpers/history.js';

const SELECTION = ['a', 'b', 'c', 'd'];

/** Batch 1 planned with a, b, c (+ recheck d), its first no-memory run graded with `wrong`. */
function afterFirstRun(wrong: string[], verdict: 'NO CHANGE' | 'PROGRESS' | 'MIXED' = 'NO CHANGE'): History {
  return new History().setup(4).plan(1, ['a', 'b', 'c'], ['d']).ran(nomem(1, 1), verdict, wrong);
}

describe('fold: runs', () => {
  it('records a run from its start, finish and grade', () => {
    const h = new History().setup(4).plan(1, ['a', 'b', 'c'], ['d']);
    h.start(nomem(1, 1), 6);
    const startOnly = h.fold(SELECTION).runs.get(nomem(1, 1))!;
    expect(startOnly).toMatchObject({ batch: 1, half: 'nomem', number: 1, finished: false, grade: null, concurrency: 6 });
    expect(startOnly.cases).toEqual(['a', 'b', 'c', 'd']);

    h.finish(nomem(1, 1), { concurrency: 6, tokens: 1200, costUsd: 0.25 });
    const gradeOid = h.grade(nomem(1, 1), 'MIXED', ['b']);
    const state = h.fold(SELECTION);
    const run = state.runs.get(nomem(1, 1))!;
    expect(run.finished).toBe(true);
    expect(run.grade).toMatchObject({ verdict: 'MIXED', wrong: ['b'], review: true, oid: gradeOid });
    expect(rightCases(run)).toEqual(['a', 'c', 'd']);
    expect(state.usage).toEqual({ tokens: 1200, costUsd: 0.25 });
    expect(currentBatch(state)?.runs.map((r) => r.name)).toEqual([nomem(1, 1)]);
    expect(state.warnings).toEqual([]);
  });

  it('gives the final check the whole selection', () => {
    const h = new History().setup(4).smoothBatch(1, SELECTION);
    h.start('final-check', 16);
    const state = h.fold(SELECTION);
    expect(state.final.map((r) => r.name)).toEqual(['final-check']);
    expect(state.final[0]!.cases).toEqual(SELECTION);
    expect(state.final[0]!.half).toBeNull();
  });

  it('counts toward maxRuns only finished runs that are not VOID', () => {
    const h = new History().setup(4).plan(1, ['a', 'b']);
    h.voided(nomem(1, 1), 8); // the runner recorded it VOID
    h.ran(nomem(1, 2), 'VOID'); // graded VOID
    h.ran(nomem(1, 3), 'NO CHANGE', ['a']);
    h.start(nomem(1, 4)); // not finished
    const state = h.fold(SELECTION);
    const runs = halfRuns(state, 1, 'nomem');
    expect(runs.map((r) => isVoidRun(r))).toEqual([true, true, false, false]);
    expect(countedRuns(runs)).toBe(1);
    expect(halfRuns(state, 1, 'mem')).toEqual([]);
  });

  it('counts the usage of a stopped and resumed run once', () => {
    const h = new History().setup(4).plan(1, ['a', 'b']);
    h.start(nomem(1, 1), 8);
    h.stop(nomem(1, 1), 'budget: $0.50 of $0.50 spent', 500, 0.5);
    let run = h.fold(SELECTION).runs.get(nomem(1, 1))!;
    expect(run).toMatchObject({ finished: false, stopped: 'budget: $0.50 of $0.50 spent', tokens: 500 });
    h.start(nomem(1, 1), 4); // resumed
    run = h.fold(SELECTION).runs.get(nomem(1, 1))!;
    expect(run).toMatchObject({ stopped: null, concurrency: 4 });
    h.finish(nomem(1, 1), { concurrency: 4, tokens: 1200, costUsd: 1.25 });
    const state = h.fold(SELECTION);
    expect(state.usage).toEqual({ tokens: 1200, costUsd: 1.25 });
    expect(state.batches[0]!.runs).toHaveLength(1);
  });

  it('keeps steps that do not fit as warnings instead of failing', () => {
    const h = new History().setup(4);
    h.start(nomem(1, 1)); // batch never planned
    h.grade(nomem(2, 1), 'PASSED'); // never ran
    const state = h.fold(SELECTION);
    expect(state.runs.size).toBe(0);
    expect(state.warnings).toHaveLength(2);
  });

  it('ignores steps of another tuning on the branch, and counts every commit', () => {
    const h = new History().setup(4);
    const other = new History('other');
    other.plan(1, ['x']);
    h.commits.push(...other.commits.map((c, i) => ({ ...c, oid: fakeOid(900 + i) })));
    const state = h.fold(SELECTION);
    expect(state.batches).toEqual([]);
    expect(state.commits).toBe(5);
    expect(state.initOid).toBe(fakeOid(1));
  });
});

describe('fold: edit confirmation (docs/method.md#edits, "confirmed")', () => {
  it('confirms an edit when the next run turns an aimed case right and breaks no right case', () => {
    const h = afterFirstRun(['a', 'b']);
    const edit = h.edit(nomem(1, 1));
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ oid: edit, status: 'pending', aims: ['a', 'b'], batch: 1, half: 'nomem' });
    h.ran(nomem(1, 2), 'PROGRESS', ['b']);
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'confirmed', settledBy: nomem(1, 2) });
  });

  it('leaves it unconfirmed when no aimed case turned right', () => {
    const h = afterFirstRun(['a', 'b']);
    h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'NO CHANGE', ['a', 'b']);
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'unconfirmed', settledBy: nomem(1, 2) });
  });

  it('leaves it unconfirmed when it fixed an aimed case but broke a right one', () => {
    const h = afterFirstRun(['a']);
    h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'MIXED', ['c']);
    expect(h.fold(SELECTION).edits[0]!.status).toBe('unconfirmed');
  });

  it('uses the aims its changes.md names instead of the wrong cases', () => {
    const h = afterFirstRun(['a', 'b']);
    h.edit(nomem(1, 1), ['b']);
    h.ran(nomem(1, 2), 'PROGRESS', ['b']); // a turned right, but the edit aimed at b only
    const edit = h.fold(SELECTION).edits[0]!;
    expect(edit.aims).toEqual(['b']);
    expect(edit.status).toBe('unconfirmed');
  });

  it('is not settled by a VOID run, only by the next run that says something', () => {
    const h = afterFirstRun(['a']);
    h.edit(nomem(1, 1));
    h.voided(nomem(1, 2), 8);
    h.ran(nomem(1, 3), 'VOID');
    expect(h.fold(SELECTION).edits[0]!.status).toBe('pending');
    h.ran(nomem(1, 4), 'PROGRESS', []);
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'confirmed', settledBy: nomem(1, 4) });
  });

  it('is not settled by a run of the other half', () => {
    const h = afterFirstRun(['a']);
    h.edit(nomem(1, 1));
    // A hand-made history: the with-memory half runs while the no-memory edit waits.
    h.candidate(nomem(1, 1));
    expect(h.fold(SELECTION).edits[0]!.status).toBe('pending');
    h.ran(mem(1, 1), 'PASSED');
    // Not judged by that run: its own half closed untried when the with-memory runs started.
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'unconfirmed', untried: true, settledBy: "no run (batch 1's with-memory runs had started)" });
  });

  it('is not settled by a run that started before the edit', () => {
    const h = afterFirstRun(['a']);
    h.start(nomem(1, 2));
    h.edit(nomem(1, 1));
    h.finish(nomem(1, 2));
    h.grade(nomem(1, 2), 'PROGRESS', []);
    expect(h.fold(SELECTION).edits[0]!.status).toBe('pending');
  });

  it('marks reverted edits, whatever their status was', () => {
    const h = afterFirstRun(['a', 'b']);
    const first = h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'NO CHANGE', ['a', 'b']);
    const second = h.edit(nomem(1, 2));
    const revert = h.revert(first, second);
    const edits = h.fold(SELECTION).edits;
    expect(edits.map((e) => [e.oid, e.status, e.settledBy])).toEqual([
      [first, 'reverted', revert],
      [second, 'reverted', revert],
    ]);
  });

  it('a reverted pending edit is not settled by the next run', () => {
    const h = afterFirstRun(['a']);
    const edit = h.edit(nomem(1, 1));
    h.revert(edit);
    h.ran(nomem(1, 2), 'PROGRESS', []);
    expect(h.fold(SELECTION).edits[0]!.status).toBe('reverted');
  });
});

describe('fold: memory-policy edits (docs/method.md#edits, docs/method.md#halves)', () => {
  /** Batch 1's no-memory half passed; its first with-memory run graded `verdict` with `wrong`. */
  function afterMemRun(verdict: 'CORRECT' | 'NO CHANGE' | 'MIXED', wrong: string[] = []): History {
    return new History().setup(4).plan(1, ['a', 'b', 'c'], ['d']).ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), verdict, wrong);
  }

  it('aims an edit after a with-memory run that fell short with every answer right at all its cases, and confirms it when the next run passes', () => {
    const h = afterMemRun('CORRECT');
    const edit = h.edit(mem(1, 1));
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ oid: edit, status: 'pending', aims: ['a', 'b', 'c', 'd'], half: 'mem' });
    h.ran(mem(1, 2), 'PASSED');
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'confirmed', settledBy: mem(1, 2) });
  });

  it('gives a hand edit of the memory policy the same aims', () => {
    const h = afterMemRun('NO CHANGE');
    h.hand(true);
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ hand: true, aims: ['a', 'b', 'c', 'd'] });
    h.ran(mem(1, 2), 'PASSED');
    expect(h.fold(SELECTION).edits[0]!.status).toBe('confirmed');
  });

  it('leaves it unconfirmed when the next run falls short again, or passes by breaking a right case', () => {
    const again = afterMemRun('CORRECT');
    again.edit(mem(1, 1));
    again.ran(mem(1, 2), 'CORRECT');
    expect(again.fold(SELECTION).edits[0]).toMatchObject({ status: 'unconfirmed', settledBy: mem(1, 2) });

    const broke = afterMemRun('CORRECT');
    broke.edit(mem(1, 1));
    broke.ran(mem(1, 2), 'PASSED', ['c'], { difficult: [add('c', 'memory')] });
    expect(broke.fold(SELECTION).edits[0]!.status).toBe('unconfirmed');
  });

  it('aims at the wrong cases of a with-memory run that got some wrong, and confirms when the next run turns one right', () => {
    const h = afterMemRun('MIXED', ['b']);
    h.edit(mem(1, 1));
    expect(h.fold(SELECTION).edits[0]!.aims).toEqual(['b']);
    h.ran(mem(1, 2), 'PROGRESS', []); // right again, though not yet cheap enough to pass
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'confirmed', settledBy: mem(1, 2) });
  });

  it('keeps the aims its changes.md names', () => {
    const named = afterMemRun('CORRECT');
    named.edit(mem(1, 1), ['a']);
    named.ran(mem(1, 2), 'PASSED');
    expect(named.fold(SELECTION).edits[0]).toMatchObject({ aims: ['a'], status: 'confirmed' });
  });
});

describe('fold: cost edits in the no-memory half (docs/method.md#edits, docs/method.md#grading)', () => {
  /** Batch 1's first no-memory run: every answer right, cost left to cut (CORRECT). */
  const afterCorrect = () => new History().setup(4).plan(1, ['a', 'b'], ['c']).ran(nomem(1, 1), 'CORRECT');

  it('aims an edit after a CORRECT run at all its cases, and confirms it when the next run passes', () => {
    const h = afterCorrect();
    h.edit(nomem(1, 1));
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'pending', aims: ['a', 'b', 'c'], half: 'nomem' });
    h.ran(nomem(1, 2), 'PASSED');
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'confirmed', settledBy: nomem(1, 2) });
  });

  it('leaves it unconfirmed when the next run is CORRECT again, or passes by breaking a right case', () => {
    const again = afterCorrect();
    again.edit(nomem(1, 1));
    again.ran(nomem(1, 2), 'CORRECT');
    expect(again.fold(SELECTION).edits[0]!.status).toBe('unconfirmed');

    const broke = afterCorrect();
    broke.edit(nomem(1, 1));
    broke.ran(nomem(1, 2), 'PASSED', ['b'], { difficult: [add('b', 'wrong')] });
    expect(broke.fold(SELECTION).edits[0]!.status).toBe('unconfirmed');
  });

  it('keeps the default of the method otherwise: an edit aims at the wrong cases, none after a PROGRESS with every answer right', () => {
    const h = new History().setup(4).plan(1, ['a', 'b']).ran(nomem(1, 1), 'PROGRESS', ['b']);
    h.edit(nomem(1, 1));
    expect(h.fold(SELECTION).edits[0]!.aims).toEqual(['b']);
    const allRight = new History().setup(4).plan(1, ['a', 'b']).ran(nomem(1, 1), 'PROGRESS');
    allRight.edit(nomem(1, 1));
    expect(allRight.fold(SELECTION).edits[0]!.aims).toEqual([]);
  });
});

describe('fold: hand commits (docs/git-model.md)', () => {
  it('counts a hand commit touching prose after a graded run as an edit aimed at its wrong cases', () => {
    const h = afterFirstRun(['c']);
    const oid = h.hand(true);
    const edit = h.fold(SELECTION).edits[0]!;
    expect(edit).toMatchObject({ oid, hand: true, status: 'pending', run: nomem(1, 1), aims: ['c'], batch: 1, half: 'nomem' });
    h.ran(nomem(1, 2), 'PROGRESS', []);
    expect(h.fold(SELECTION).edits[0]!.status).toBe('confirmed');
  });

  it('does not count a hand commit that touches no prose, or one before any graded run', () => {
    const h = new History().setup(4);
    h.hand(true); // before any run
    h.plan(1, ['a']).ran(nomem(1, 1), 'NO CHANGE', ['a']);
    h.hand(false); // README typo
    expect(h.fold(SELECTION).edits).toEqual([]);
  });
});

describe('fold: edits after their half closed (between batches)', () => {
  /** Batch 1 both halves passed and checkpointed; 4 cases, so batch 2 comes next. */
  const batchOneDone = () => new History().setup(4).smoothBatch(1, ['a', 'b']);

  it('settles an edit made after the checkpoint as unconfirmed at once: no run of its half comes', () => {
    const h = batchOneDone();
    const hand = h.hand(true);
    const step = h.edit(mem(1, 1));
    const state = h.fold(SELECTION);
    expect(state.edits.map((e) => [e.oid, e.status, e.untried, e.settledBy, e.batch, e.half])).toEqual([
      [hand, 'unconfirmed', true, "no run (batch 1's memory was checkpointed)", 1, 'mem'],
      [step, 'unconfirmed', true, "no run (batch 1's memory was checkpointed)", 1, 'mem'],
    ]);
    // The next batch's runs never settle it as theirs.
    h.plan(2, ['c', 'd'], ['a']).ran(nomem(2, 1), 'NO CHANGE', ['c']);
    expect(h.fold(SELECTION).edits.map((e) => [e.status, e.settledBy])).toEqual([
      ['unconfirmed', "no run (batch 1's memory was checkpointed)"],
      ['unconfirmed', "no run (batch 1's memory was checkpointed)"],
    ]);
  });

  it('names the later plan when the next batch is planned already', () => {
    const h = batchOneDone().plan(2, ['c', 'd']);
    h.edit(mem(1, 1));
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'unconfirmed', untried: true, settledBy: 'no run (batch 2 was planned)' });
  });

  it('settles edits still pending when their half closes (a hand-made history)', () => {
    const h = new History().setup(4).plan(1, ['a', 'b']).ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1));
    h.hand(true); // pending for the no-memory half: its PASSED run is the latest graded
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'pending', untried: false });
    h.start(mem(1, 1));
    expect(h.fold(SELECTION).edits[0]).toMatchObject({ status: 'unconfirmed', untried: true, settledBy: "no run (batch 1's with-memory runs had started)" });
  });

  it('leaves alone the edits a run of their half settled before it closed', () => {
    const h = afterFirstRun(['a']);
    const first = h.edit(nomem(1, 1));
    h.ran(nomem(1, 2), 'PASSED');
    h.candidate(nomem(1, 2)).ran(mem(1, 1), 'MIXED', ['b']);
    const second = h.edit(mem(1, 1));
    h.ran(mem(1, 2), 'PASSED').checkpoint(1);
    h.plan(2, ['d'], ['a']);
    expect(h.fold(SELECTION).edits.map((e) => [e.oid, e.status, e.untried, e.settledBy])).toEqual([
      [first, 'confirmed', false, nomem(1, 2)],
      [second, 'confirmed', false, mem(1, 2)],
    ]);
  });
});

describe('fold: difficult list', () => {
  it('adds entries with the batch they were added in, fixes and re-adds them', () => {
    const h = new History().setup(4);
    h.difficult(add('z', 'costly')); // before any batch: batch 0
    h.plan(1, ['a', 'b']);
    h.ran(nomem(1, 1), 'NO CHANGE', ['a'], { difficult: [add('a', 'wrong')] });
    let state = h.fold(SELECTION);
    expect(state.difficult.map((e) => [e.id, e.reason, e.batch, e.fixed])).toEqual([
      ['z', 'costly', 0, false],
      ['a', 'wrong', 1, false],
    ]);

    h.difficult(add('a', 'flaky')); // already open: the reason changes, the entry stays
    state = h.fold(SELECTION);
    expect(state.difficult.filter((e) => e.id === 'a')).toMatchObject([{ reason: 'flaky', batch: 1, fixed: false }]);

    h.plan(2, ['c'], ['a']);
    h.difficult(fix('a'));
    h.difficult(add('a', 'regressed')); // fixed, then wrong again: a new entry of batch 2
    state = h.fold(SELECTION);
    expect(state.difficult.filter((e) => e.id === 'a').map((e) => [e.reason, e.batch, e.fixed])).toEqual([
      ['flaky', 1, true],
      ['regressed', 2, false],
    ]);
  });

  it('warns about fixing an id that is not open', () => {
    const h = new History().setup(4).difficult(fix('nope'));
    expect(h.fold(SELECTION).warnings).toEqual(['difficult fix nope: not on the open list']);
  });
});

describe('fold: memory steps', () => {
  it('records the candidate and checkpoints', () => {
    const h = new History().setup(4).plan(1, ['a']).ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1));
    expect(h.fold(SELECTION).candidate).toMatchObject({ run: nomem(1, 1), batch: 1 });
    h.ran(mem(1, 1), 'PASSED').checkpoint(1).checkpoint(1);
    expect(h.fold(SELECTION).checkpoints).toEqual([1]);
  });
});

describe('fold: a plan is made once', () => {
  it('replaces a plan no run used, and ignores a plan after its runs started', () => {
    const h = new History().setup(4).plan(1, ['a']).plan(1, ['b']);
    expect(h.fold(SELECTION).batches.map((b) => b.plan.new)).toEqual([['b']]);
    h.start(nomem(1, 1));
    h.plan(1, ['c']);
    const state = h.fold(SELECTION);
    expect(state.batches.map((b) => b.plan.new)).toEqual([['b']]);
    expect(state.warnings).toHaveLength(1);
  });
});
