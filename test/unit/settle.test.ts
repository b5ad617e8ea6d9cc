import { describe, expect, it } from 'vitest';
import { settleAtGrade, unconfirmedAtGrade, type TuningState } from '../../src/core/fold.js';
import { editFate } from '../../src/core/edits.js';
import { finalRunName, formatRunName, isFinalRun, parseRunName, parseTagName, tagRef } from '../../src/core/names.js';
import { decideNext, unconfirmedEdits } from '../../src/core/next.js';
import { passedRuleBreaks } from '../../src/core/rules.js';
import { add, History, makeConfig, mem, nextInput, nomem, twoEditsTried } from '../helpers/history.js';

/**
 * Edits settle at grading (docs/grading.md, "Edits settle at grading"): the
 * pure decision of which edits a grade reverts or keeps, the `kept` status
 * the fold gives, rule (b'), the final check's gate, and the final check's
 * re-run names.
 */
const ABC = ['a', 'b', 'c'];
const KEEP = { why: 'the tone rule is house style', by: 'Tune Tester <tester@example.com>' };

const planned = () => new History().setup(3).plan(1, ABC);
const settle = (state: TuningState, run: string, wrong: string[], verdict: Parameters<typeof settleAtGrade>[3], keep: string[] = []) =>
  settleAtGrade(state, state.runs.get(run)!, wrong, verdict, keep);

describe('which edits a grade reverts (pure)', () => {
  it('reverts the edit its run did not confirm and leaves the confirmed one', () => {
    const { h, fixesA, fixesB } = twoEditsTried();
    // Run 2: a turned right, b is still wrong.
    const s = settle(h.fold(ABC), nomem(1, 2), ['b'], 'PROGRESS');
    expect(s.revert.map((e) => e.oid)).toEqual([fixesB]);
    expect(s.keep).toEqual([]);
    expect(s.problems).toEqual([]);
    expect(s.revert.map((e) => e.oid)).not.toContain(fixesA);
  });

  it('keeps the one a person names (by a prefix of its id), and reverts the rest', () => {
    const { h, fixesA, fixesB } = twoEditsTried();
    const s = settle(h.fold(ABC), nomem(1, 2), ['a', 'b'], 'NO CHANGE', [fixesA.slice(0, 8)]);
    expect(s.keep.map((e) => e.oid)).toEqual([fixesA]);
    expect(s.revert.map((e) => e.oid)).toEqual([fixesB]);
  });

  it('refuses to keep what is not unconfirmed: a confirmed edit, a pending one, an unknown id', () => {
    const { h, fixesA } = twoEditsTried();
    h.grade(nomem(1, 2), 'PROGRESS', ['b']);
    const pending = h.edit(nomem(1, 2), ['b']);
    const state = h.fold(ABC);
    const s = settleAtGrade(state, state.runs.get(nomem(1, 2))!, ['b'], 'PROGRESS', [fixesA, pending, 'beefbeef']);
    expect(s.keep).toEqual([]);
    expect(s.problems).toEqual([
      `${fixesA.slice(0, 7)} is confirmed by ${nomem(1, 2)}: it stays without keeping`,
      `${pending.slice(0, 7)} is pending: no run has tried it yet`,
      'beefbeef is not an edit of tuning demo',
    ]);
  });

  it('settles nothing on a VOID grade, on a regrade, or on the final check', () => {
    const { h } = twoEditsTried();
    expect(settle(h.fold(ABC), nomem(1, 2), ['a', 'b'], 'VOID').revert).toEqual([]);
    h.grade(nomem(1, 2), 'NO CHANGE', ['a', 'b']);
    // The first grade settled them (the tool reverted them with it); a regrade does not settle them again.
    const state = h.fold(ABC);
    expect(unconfirmedAtGrade(state, state.runs.get(nomem(1, 2))!, ['a', 'b'], 'NO CHANGE')).toEqual([]);
    const done = new History().setup(3).smoothBatch(1, ABC);
    done.start('final-check');
    done.finish('final-check');
    const f = done.fold(ABC);
    expect(settleAtGrade(f, f.runs.get('final-check')!, [], 'VERIFIED', []).revert).toEqual([]);
  });

  it('never reverts twice: a revert written before the grade (a crash, or by hand) leaves the grade nothing to revert', () => {
    const { h, fixesB } = twoEditsTried();
    h.revert(fixesB);
    const state = h.fold(ABC);
    // Still due: the run is not graded, whatever was reverted.
    expect(decideNext(nextInput(h, { selection: ABC })).kind).toBe('grade');
    expect(state.edits.find((e) => e.oid === fixesB)!.status).toBe('reverted');
    expect(settle(state, nomem(1, 2), ['b'], 'PROGRESS').revert.map((e) => e.oid)).toEqual([]);
    h.grade(nomem(1, 2), 'PROGRESS', ['b']);
    expect(h.fold(ABC).edits.map((e) => e.status)).toEqual(['confirmed', 'reverted']);
  });

  it('reverts an edit made between batches (untried) at the next batch\'s first grade', () => {
    const h = new History().setup(6).smoothBatch(1, ABC);
    const between = h.hand(true);
    h.plan(2, ['d', 'e', 'f'], ['a']);
    h.start(nomem(2, 1));
    h.finish(nomem(2, 1));
    const state = h.fold(['a', 'b', 'c', 'd', 'e', 'f']);
    const s = settle(state, nomem(2, 1), [], 'PASSED');
    expect(s.revert.map((e) => e.oid)).toEqual([between]);
    // Kept instead, when a person says so.
    expect(settle(state, nomem(2, 1), [], 'PASSED', [between]).keep.map((e) => e.oid)).toEqual([between]);
  });
});

describe('the fold: kept edits', () => {
  it('gives status `kept`, with who kept it and why, to an edit the grade keeps', () => {
    const { h, fixesA, fixesB } = twoEditsTried();
    const grade = h.grade(nomem(1, 2), 'PROGRESS', ['b'], { keep: { edits: [fixesB], ...KEEP } });
    const state = h.fold(ABC);
    const [a, b] = state.edits;
    expect(a).toMatchObject({ oid: fixesA, status: 'confirmed', triedBy: nomem(1, 2), kept: null });
    expect(b).toMatchObject({ oid: fixesB, status: 'kept', triedBy: nomem(1, 2), kept: { ...KEEP, commit: grade } });
    expect(editFate(b!)).toBe(`kept by ${KEEP.by}: ${KEEP.why} (unconfirmed by ${nomem(1, 2)})`);
    expect(editFate(a!)).toBe(`confirmed by ${nomem(1, 2)}`);
    expect(state.warnings).toEqual([]);
  });

  it('says which revert undid an edit, and the run that tried it (the grade writes the revert before its own commit)', () => {
    const { h, fixesB } = twoEditsTried();
    const revert = h.revert(fixesB);
    h.grade(nomem(1, 2), 'PROGRESS', ['b']);
    const b = h.fold(ABC).edits[1]!;
    expect(b).toMatchObject({ status: 'reverted', settledBy: revert, triedBy: nomem(1, 2) });
    expect(editFate(b)).toBe(`reverted by ${revert.slice(0, 7)} (${nomem(1, 2)} did not confirm it)`);
    // One reverted before any run: none tried it.
    const early = planned().ran(nomem(1, 1), 'NO CHANGE', ['a']);
    const e = early.edit(nomem(1, 1));
    const undo = early.revert(e);
    expect(editFate(early.fold(ABC).edits[0]!)).toBe(`reverted by ${undo.slice(0, 7)} (no run had tried it)`);
  });

  it('warns about a keep of an edit that is not unconfirmed, and changes nothing', () => {
    const { h, fixesA } = twoEditsTried();
    h.grade(nomem(1, 2), 'PROGRESS', ['b'], { keep: { edits: [fixesA], ...KEEP } });
    const state = h.fold(ABC);
    expect(state.edits[0]!.status).toBe('confirmed');
    expect(state.warnings.join('\n')).toContain(`keeps ${fixesA.slice(0, 7)}, which is confirmed`);
  });
});

describe("rule (b'): PASSED holds only confirmed, reverted or kept edits", () => {
  /** Run 2 recorded unconfirmed edit `left` without reverting it (a history written before grades reverted). */
  function standing() {
    const h = planned().ran(nomem(1, 1), 'NO CHANGE', ['a']);
    const left = h.edit(nomem(1, 1), ['a']);
    h.ran(nomem(1, 2), 'NO CHANGE', ['a']);
    h.ran(nomem(1, 3), 'PASSED', ['a'], { difficult: [add('a', 'wrong')] });
    return { h, left };
  }
  const breaks = (h: History, run: string, settling?: string[]) => {
    const state = h.fold(ABC);
    return passedRuleBreaks({ state, run: state.runs.get(run)!, maxRuns: 4, maxRetries: 3, ...(settling ? { settling } : {}) });
  };

  it('refuses while an unconfirmed edit stands, naming it and the revert that fixes it', () => {
    const { h, left } = standing();
    expect(breaks(h, nomem(1, 3)).map((b) => [b.rule, b.fix])).toEqual([['unsettled', `git tune revert ${left.slice(0, 7)}`]]);
    const step = decideNext(nextInput(h, { selection: ABC }));
    expect(step.kind).toBe('refused');
    expect(step.command).toBe(`git tune revert ${left.slice(0, 7)} && git tune grade --verdict PASSED --run ${nomem(1, 3)}`);
  });

  it('accepts once it is reverted, or kept, or when the grade being recorded settles it', () => {
    const reverted = standing();
    reverted.h.revert(reverted.left);
    expect(breaks(reverted.h, nomem(1, 3))).toEqual([]);
    const kept = standing();
    kept.h.grade(nomem(1, 3), 'PASSED', ['a'], { keep: { edits: [kept.left], ...KEEP } });
    expect(breaks(kept.h, nomem(1, 3))).toEqual([]);
    const settling = standing();
    expect(breaks(settling.h, nomem(1, 3), [settling.left])).toEqual([]);
  });

  it('judges the edits the run tried as the grade settles them: unconfirmed ones break it unless reverted with the grade', () => {
    const h = planned().ran(nomem(1, 1), 'NO CHANGE', ['a']);
    const tried = h.edit(nomem(1, 1), ['a']);
    h.start(nomem(1, 2));
    h.finish(nomem(1, 2));
    const state = h.fold(ABC);
    const run = state.runs.get(nomem(1, 2))!;
    const input = { state, run, maxRuns: 4, maxRetries: 3, review: true, wrong: ['a'] };
    const withList = { ...input, state: { ...state, difficult: [{ id: 'a', reason: 'wrong' as const, batch: 1, fixed: false, index: 99 }] } };
    expect(passedRuleBreaks(withList).map((b) => b.rule)).toEqual(['unsettled']);
    expect(passedRuleBreaks({ ...withList, settling: [tried] })).toEqual([]);
  });
});

describe('the final check starts with no edit unconfirmed', () => {
  it("next's command reverts an edit made after the last batch, then runs the final check", () => {
    const h = new History().setup(3).smoothBatch(1, ABC);
    const late = h.hand(true);
    expect(unconfirmedEdits(h.fold(ABC)).map((e) => e.oid)).toEqual([late]);
    const step = decideNext(nextInput(h, { selection: ABC }));
    expect(step.kind).toBe('final');
    expect(step.command).toBe(`git tune revert ${late.slice(0, 7)} && git tune final`);
    expect(step.message).toContain('git tune grade --keep <commit> --why');
    h.revert(late);
    expect(decideNext(nextInput(h, { selection: ABC })).command).toBe('git tune final');
  });

  it('a kept edit does not hold the final check back', () => {
    const h = new History().setup(3).smoothBatch(1, ABC);
    const late = h.hand(true);
    h.grade(mem(1, 1), 'PASSED', [], { keep: { edits: [late], ...KEEP } });
    expect(h.fold(ABC).edits[0]!.status).toBe('kept');
    expect(decideNext(nextInput(h, { selection: ABC })).command).toBe('git tune final');
  });
});

describe('a VOID final check runs again', () => {
  it('names re-runs final-check-run2, … as a parse/format pair, with tags', () => {
    expect(finalRunName(1)).toBe('final-check');
    expect(finalRunName(2)).toBe('final-check-run2');
    expect(parseRunName('final-check-run2')).toEqual({ kind: 'final', number: 2 });
    expect(formatRunName(parseRunName('final-check-run12')!)).toBe('final-check-run12');
    expect(parseRunName('final-check-run1')).toBeNull();
    expect(parseRunName('final-check-run0')).toBeNull();
    expect(isFinalRun('final-check-run3') && isFinalRun('final-check') && !isFinalRun('batch01-nomem-run1')).toBe(true);
    expect(parseTagName(tagRef('desk', 'final-check-run2'))).toEqual({ tuning: 'desk', run: 'final-check-run2' });
  });

  it('folds the re-run as the second final check, and next reads it', () => {
    const h = new History().setup(3).smoothBatch(1, ABC).voided('final-check', 8);
    const config = makeConfig({ concurrency: 8 });
    expect(decideNext(nextInput(h, { selection: ABC, config }))).toMatchObject({ kind: 'void-rerun', command: 'git tune config set concurrency 4 && git tune final' });
    h.start('final-check-run2', 4);
    h.finish('final-check-run2', { concurrency: 4 });
    const state = h.fold(ABC);
    expect(state.final.map((r) => [r.name, r.number])).toEqual([['final-check', 1], ['final-check-run2', 2]]);
    expect(decideNext(nextInput(h, { selection: ABC, config }))).toMatchObject({ kind: 'grade', run: 'final-check-run2' });
    h.grade('final-check-run2', 'VERIFIED');
    expect(decideNext(nextInput(h, { selection: ABC, config })).kind).toBe('done');
  });
});
