import { describe, expect, it } from 'vitest';
import { basisRun, passingNomemRun } from '../../src/core/basis.js';
import { decideNext, type NextStep } from '../../src/core/next.js';
import { passedRuleBreaks } from '../../src/core/rules.js';
import { dueRun } from '../../src/core/run-due.js';
import { add, History, makeConfig, mem, nextInput, nomem } from '../helpers/history.js';

/**
 * No verdict on prose no run has seen (docs/method.md#noise): after a grade
 * reverts what its run tried, a half passes only on a run of the prose the
 * branch holds, and the candidate memory comes from that run.
 */
const ABC = ['a', 'b', 'c'];
type Opts = Parameters<typeof nextInput>[1];
const next = (h: History, opts: Opts = {}): NextStep => decideNext(nextInput(h, { selection: ABC, ...opts }));

/**
 * The trajectory: run 1 (prose P0) gets a wrong; an edit aimed at a
 * (prose P1) makes a right in run 2, but b slips there: MIXED, so the edit is
 * unconfirmed and the grade reverts it (its revert commit before the grade),
 * leaving P0 on the branch.
 */
function revertedAtGrade() {
  const h = new History().setup(3).plan(1, ABC);
  h.ran(nomem(1, 1), 'NO CHANGE', ['a'], { prose: 'P0' });
  const edit = h.edit(nomem(1, 1), ['a']);
  h.start(nomem(1, 2));
  h.finish(nomem(1, 2), { prose: 'P1' });
  h.revert(edit);
  h.grade(nomem(1, 2), 'MIXED', ['b'], { prose: 'P0' });
  return { h, edit };
}

describe('basis: the run of the prose the branch holds', () => {
  it('is the run itself when nothing it ran was reverted, an earlier run of the same prose when it was', () => {
    const { h } = revertedAtGrade();
    const state = h.fold(ABC);
    expect(basisRun(state, state.runs.get(nomem(1, 1))!)!.name).toBe(nomem(1, 1));
    expect(basisRun(state, state.runs.get(nomem(1, 2))!)!.name).toBe(nomem(1, 1));
    // Prose no run of the half ran: no basis.
    expect(basisRun(state, state.runs.get(nomem(1, 2))!, 'P2')).toBeNull();
  });

  it('an edit after the run kept on purpose (grade --keep) is no revert: the run itself, and next asks no rerun', () => {
    const h = new History().setup(3).plan(1, ABC);
    h.ran(nomem(1, 1), 'PASSED', [], { prose: 'P0' });
    const late = h.edit(nomem(1, 1), null);
    // The keep's grade records the prose the branch now holds, which no run ran.
    h.grade(nomem(1, 1), 'PASSED', [], { prose: 'P0+late', keep: { edits: [late], by: 'ana <ana@example.com>', why: 'policy' } });
    const state = h.fold(ABC);
    expect(basisRun(state, state.runs.get(nomem(1, 1))!)!.name).toBe(nomem(1, 1));
    expect(next(h).kind).not.toBe('rerun');
    // The same prose gap after a revert of what the run tried still has no basis.
    const { h: reverted } = revertedAtGrade();
    const after = reverted.fold(ABC);
    expect(basisRun(after, after.runs.get(nomem(1, 2))!, 'P0+late')).toBeNull();
  });

  it('a history without the prose recorded reads as before: the run itself', () => {
    const h = new History().setup(3).plan(1, ABC);
    h.ran(nomem(1, 1), 'NO CHANGE', ['a']);
    const edit = h.edit(nomem(1, 1), ['a']);
    h.start(nomem(1, 2));
    h.finish(nomem(1, 2));
    h.revert(edit);
    h.grade(nomem(1, 2), 'PASSED', ['b'], { difficult: [add('b', 'wrong')] });
    expect(expectKind(next(h), 'candidate').run).toBe(nomem(1, 2));
  });
});

function expectKind(step: NextStep, kind: NextStep['kind']): NextStep {
  expect(step.kind, step.message).toBe(kind);
  return step;
}

describe('next after a grade reverted what its run tried', () => {
  it('the half ended PASSED ("was MIXED"): the candidate comes from the run of the prose the branch holds, never the reverted one', () => {
    const { h } = revertedAtGrade();
    // The half ends (the editor had nothing more): what is wrong under P0 (a) is listed, PASSED written on run 2.
    h.difficult(add('a', 'wrong'));
    h.grade(nomem(1, 2), 'PASSED', ['b'], { prose: 'P0', difficult: [add('b', 'wrong')] });
    const step = expectKind(next(h), 'candidate');
    expect(step.run).toBe(nomem(1, 1));
    expect(step.message).toContain(`${nomem(1, 1)}'s cases`);
    // Built from it: the with-memory runs follow, and they compare with run 1.
    h.candidate(nomem(1, 1));
    expectKind(next(h), 'mem-run');
    expect(passingNomemRun(h.fold(ABC), 1)!.name).toBe(nomem(1, 1));
  });

  it('PASSED on prose no run has seen: the next step is a run of it (rerun), not the candidate', () => {
    const { h } = revertedAtGrade();
    h.difficult(add('b', 'wrong'));
    h.grade(nomem(1, 2), 'PASSED', ['b'], { prose: 'P0+x' });
    const step = expectKind(next(h), 'rerun');
    expect(step).toMatchObject({ command: 'git tune run', batch: 1, half: 'nomem', run: nomem(1, 3) });
    expect(step.message).toContain('no run of the half has seen the prose the branch holds');
    // The rerun is a run `git tune run` starts.
    expect(dueRun(h.fold(ABC), step, false)).toEqual({ name: nomem(1, 3), resume: false });
    // It ran that prose and passed: the candidate comes from it.
    h.ran(nomem(1, 3), 'PASSED', [], { prose: 'P0+x' });
    expect(expectKind(next(h), 'candidate').run).toBe(nomem(1, 3));
  });

  it('stop-batch at maxRuns: PASSED on the run of the prose the branch holds, its wrong cases listed', () => {
    const { h } = revertedAtGrade();
    const step = expectKind(next(h, { config: makeConfig({ maxRuns: 2 }) }), 'stop-batch');
    // Run 1 (P0) got a wrong; run 2's b slipped under prose that is gone.
    expect(step.command).toBe(`git tune revert && git tune difficult add a --why wrong && git tune grade --verdict PASSED --run ${nomem(1, 2)}`);
    expect(step.message).toContain(`it passes on ${nomem(1, 1)}`);
    // The rule agrees: PASSED needs run 1's wrong case on the list, not run 2's.
    const state = h.fold(ABC);
    const breaks = passedRuleBreaks({ state, run: state.runs.get(nomem(1, 2))!, maxRuns: 2, maxRetries: 3, review: true, wrong: ['b'] });
    expect(breaks.map((b) => [b.rule, b.ids])).toEqual([['wrong-not-difficult', ['a']]]);
    h.difficult(add('a', 'wrong'));
    h.grade(nomem(1, 2), 'PASSED', ['b'], { prose: 'P0' });
    expect(expectKind(next(h, { config: makeConfig({ maxRuns: 2 }) }), 'candidate').run).toBe(nomem(1, 1));
  });

  it('stop-batch with no run of the prose left: a run first, past maxRuns, then the stop on it', () => {
    const h = new History().setup(3).plan(1, ABC);
    h.ran(nomem(1, 1), 'NO CHANGE', ['a', 'b'], { prose: 'P0' });
    // Two edits tried by run 2: one confirmed (stays), one not (reverted): P0+e1, which no run ran.
    const e1 = h.edit(nomem(1, 1), ['a']);
    const e2 = h.edit(nomem(1, 1), ['b']);
    h.start(nomem(1, 2));
    h.finish(nomem(1, 2), { prose: 'P2' });
    h.revert(e2);
    h.grade(nomem(1, 2), 'PROGRESS', ['b'], { prose: 'P1' });
    const config = makeConfig({ maxRuns: 2 });
    const state = h.fold(ABC);
    expect(state.edits.find((e) => e.oid === e1)!.status).toBe('confirmed');
    // A pending edit after the grade goes first, as the stop would revert it.
    h.edit(nomem(1, 2), ['c']);
    const step = expectKind(next(h, { config }), 'rerun');
    expect(step).toMatchObject({ command: 'git tune revert && git tune run', run: nomem(1, 3) });
    expect(step.message).toContain(e2.slice(0, 7));
    h.revert(h.fold(ABC).edits.at(-1)!.oid);
    h.ran(nomem(1, 3), 'NO CHANGE', ['b'], { prose: 'P1' });
    const stop = expectKind(next(h, { config }), 'stop-batch');
    expect(stop.command).toBe(`git tune revert && git tune difficult add b --why wrong && git tune grade --verdict PASSED --run ${nomem(1, 3)}`);
    expect(stop.message).toContain('run 3 of 2');
  });

  it('the with-memory half too: it passes on a run of the memory policy it holds', () => {
    const h = new History().setup(3).plan(1, ABC);
    h.ran(nomem(1, 1), 'PASSED', [], { prose: 'P0' }).candidate(nomem(1, 1));
    h.ran(mem(1, 1), 'CORRECT', [], { prose: 'P0' });
    const edit = h.edit(mem(1, 1));
    h.start(mem(1, 2));
    h.finish(mem(1, 2), { prose: 'M1' });
    h.revert(edit);
    h.grade(mem(1, 2), 'PASSED', [], { prose: 'M0' });
    expect(expectKind(next(h), 'rerun').run).toBe(mem(1, 3));
  });
});
