import { describe, expect, it } from 'vitest';
import type { TuningState } from '../../src/core/fold.js';
import { decideGrade, gradeRun, gradeStep, keepOptionsRefusal, parseVerdictOption, type FindingsInput, type GradeDecision } from '../../src/core/grade.js';
import { FINAL_RUN } from '../../src/core/names.js';
import { isRefusal, type Refusal } from '../../src/core/refusal.js';
import { add, History, nomem, TUNING, twoEditsTried as tried } from '../helpers/history.js';

/**
 * `git tune grade`'s rules, pure: the run it grades, the options, whether
 * the findings can be recorded, what the grade settles, and its step.
 */
const ABC = ['a', 'b', 'c'];
const planned = () => new History().setup(3).plan(1, ABC);
const refused = (value: unknown): Refusal => {
  expect(isRefusal(value), JSON.stringify(value)).toBe(true);
  return value as Refusal;
};
const decided = (value: GradeDecision | Refusal): GradeDecision => {
  expect(isRefusal(value), JSON.stringify(value)).toBe(false);
  return value as GradeDecision;
};

/** Findings with a verdict heading, a `### Cases` table and optional sections. */
function findings(verdict: string, results: Record<string, string>, extra = ''): string {
  const rows = Object.entries(results).map(([id, r]) => `| ${id} | ${r} |`).join('\n');
  return `## ${verdict}\n\n### Cases\n\n| case | result |\n| --- | --- |\n${rows}\n${extra}`;
}
const file = '.tune/demo/runs/batch01-nomem-run1/findings.md';
function decide(state: TuningState, run: string, text: string, keep: string[] = []) {
  const input: FindingsInput = { state, run: state.runs.get(run)!, file, text, keep, maxRuns: 3, maxRetries: 2 };
  return decideGrade(input);
}
describe('the run a grade grades', () => {
  it.each<[string, () => History, string | undefined, string, string]>([
    ['no run yet', () => planned(), undefined, 'no-run', 'no run to grade yet'],
    ['a run that does not exist', () => planned().ran(nomem(1, 1), 'MIXED', ['a']), 'batch09-nomem-run1', 'no-run', 'there is no run batch09-nomem-run1'],
    ['the latest run, not finished', () => { const h = planned(); h.start(nomem(1, 1)); return h; }, undefined, 'run-not-finished', `${nomem(1, 1)} has not finished`],
  ])('refuses %s', (_, history, name, code, message) => {
    expect(refused(gradeRun(history().fold(ABC), name))).toMatchObject({ kind: 'history', code, message });
  });

  it('is the latest batch run, or the final check once it started (a run is named with --run)', () => {
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a']);
    h.start(nomem(1, 2));
    h.finish(nomem(1, 2));
    expect(gradeRun(h.fold(ABC))).toMatchObject({ name: nomem(1, 2) });
    expect(gradeRun(h.fold(ABC), nomem(1, 1))).toMatchObject({ name: nomem(1, 1) });
    h.start(FINAL_RUN);
    expect(refused(gradeRun(h.fold(ABC)))).toMatchObject({ code: 'run-not-finished', hint: 'git tune final' });
  });
});

describe('--verdict, --keep and --why', () => {
  it.each<[string | undefined, string | undefined | null]>([
    [undefined, undefined], ['passed', 'PASSED'], [' no change ', 'NO CHANGE'], ['Verified', 'VERIFIED'], ['GOOD', null], ['', null],
  ])('--verdict %o', (text, want) => {
    const got = parseVerdictOption(text);
    if (want === null) expect(refused(got)).toMatchObject({ kind: 'usage', code: 'bad-verdict' });
    else expect(got).toBe(want);
  });

  it.each<[string[], string | undefined, string | null]>([
    [[], undefined, null], [['abc1234'], 'house style', null], [['abc1234'], undefined, 'keep-without-why'],
    [['abc1234'], '  ', 'keep-without-why'], [[], 'because', 'why-without-keep'],
  ])('--keep %o --why %o', (keep, why, code) => {
    expect(keepOptionsRefusal(keep, why)?.code ?? null).toBe(code);
  });
});

describe('whether the findings can be recorded', () => {
  const started = () => { const h = planned(); h.start(nomem(1, 1)); h.finish(nomem(1, 1)); return h; };

  it('records the verdict and the cases marked wrong', () => {
    const d = decided(decide(started().fold(ABC), nomem(1, 1), findings('MIXED', { a: 'wrong', b: 'right', c: 'Wrong' })));
    expect(d).toMatchObject({ verdict: 'MIXED', wrong: ['a', 'c'], review: false, difficult: [] });
  });

  it.each<[string, string, string]>([
    ['a case without a row', findings('MIXED', { a: 'right', b: 'right' }), 'the `### Cases` table has no row for c'],
    ['a case still unsure', findings('MIXED', { a: '?', b: 'right', c: 'right' }), 'no result for a: write right or wrong in its result column'],
    ['the final check\'s verdict on a batch run', findings('VERIFIED', { a: 'right', b: 'right', c: 'right' }), 'VERIFIED is the final check\'s verdict'],
    ['a bad difficult line', findings('MIXED', { a: 'wrong', b: 'right', c: 'right' }, '\n## Difficult\n\n- remove a\n'), 'line '],
  ])('refuses %s, listing the problem', (_, text, problem) => {
    const r = refused(decide(started().fold(ABC), nomem(1, 1), text));
    expect(r).toMatchObject({ kind: 'usage', code: 'bad-findings', hint: `fix ${file}, then: git tune grade` });
    expect(r.details!.join('\n')).toContain(problem);
  });

  it('refuses PASSED that breaks a rule, naming the rule and its fix', () => {
    const r = refused(decide(started().fold(ABC), nomem(1, 1), findings('PASSED', { a: 'right', b: 'right', c: 'right' })));
    expect(r).toMatchObject({ kind: 'history', code: 'passed-refused', message: `PASSED is refused for ${nomem(1, 1)}` });
    expect(r.details!.some((d) => d.startsWith('rule review:') && d.includes('the section is `## Cost review`'))).toBe(true);
    expect(decided(decide(started().fold(ABC), nomem(1, 1), findings('PASSED', { a: 'right', b: 'right', c: 'right' }, '\n## Cost review\n\nfine\n')))).toMatchObject({ verdict: 'PASSED', review: true });
  });

  it('a regrade drops the difficult lines the first grade applied', () => {
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a'], { difficult: [add('a', 'wrong')] });
    const text = findings('MIXED', { a: 'wrong', b: 'right', c: 'right' }, '\n## Difficult\n\n- add a wrong\n- add b flaky — sometimes\n');
    const d = decided(decide(h.fold(ABC), nomem(1, 1), text));
    expect(d.difficult).toEqual([add('b', 'flaky')]);
    expect(d.notes.get('b')).toEqual(['sometimes']);
  });
});

describe('what a grade settles', () => {
  it('reverts the edit its run did not confirm; keeps one named by --keep; refuses to keep a confirmed one', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    const text = findings('PROGRESS', { a: 'right', b: 'wrong', c: 'right' });
    expect(decided(decide(state, nomem(1, 2), text)).settlement.revert.map((e) => e.oid)).toEqual([fixesB]);
    const kept = decided(decide(state, nomem(1, 2), text, [fixesB.slice(0, 7)])).settlement;
    expect([kept.revert, kept.keep.map((e) => e.oid)]).toEqual([[], [fixesB]]);
    expect(refused(decide(state, nomem(1, 2), text, [fixesA.slice(0, 7)]))).toMatchObject({ kind: 'usage', code: 'bad-keep' });
  });

  it('the grade step: verdict, wrong cases, what it replaces, and who kept what and why', () => {
    const { h, fixesB } = tried();
    const state = h.fold(ABC);
    const run = state.runs.get(nomem(1, 2))!;
    const d = decided(decide(state, nomem(1, 2), findings('PROGRESS', { a: 'right', b: 'wrong', c: 'right' }), [fixesB.slice(0, 7)]));
    const keep = { edits: [fixesB], why: 'house style', by: 'Tune Tester <t@example.com>' };
    expect(gradeStep(TUNING, run, d, keep)).toEqual({
      step: { step: 'grade', tuning: TUNING, run: nomem(1, 2), verdict: 'PROGRESS', wrong: ['b'], review: false, difficult: [], keep },
      subject: `tune(${TUNING}): grade ${nomem(1, 2)} PROGRESS: 2/3 right`,
      body: `Kept on purpose by Tune Tester <t@example.com>, though unconfirmed: ${fixesB.slice(0, 7)}.\n\nhouse style`,
    });
    const regraded = planned().ran(nomem(1, 1), 'MIXED', ['a']).fold(ABC);
    const again = decided(decide(regraded, nomem(1, 1), findings('NO CHANGE', { a: 'wrong', b: 'right', c: 'right' })));
    expect(gradeStep(TUNING, regraded.runs.get(nomem(1, 1))!, again, undefined)).toMatchObject({
      subject: `tune(${TUNING}): grade ${nomem(1, 1)} NO CHANGE (was MIXED): 2/3 right`, body: '',
    });
  });
});
