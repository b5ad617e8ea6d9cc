import { describe, expect, it } from 'vitest';
import type { TuningState } from '../../src/core/fold.js';
import { gradeCandidates } from '../../src/core/fold.js';
import { planGrade, type GradeEvidence, type GradePlan } from '../../src/core/grade.js';
import { blobOid, proseDigestOf } from '../../src/core/prose-digest.js';
import { isRefusal, type Refusal } from '../../src/core/refusal.js';
import type { RevertRead } from '../../src/core/revert.js';
import { nomem, twoEditsTried as tried } from '../helpers/history.js';

/**
 * A grade as one decision (src/core/grade.ts `planGrade`): from what the app
 * read (the findings, the judge's file, the edits it may revert as read, the
 * prose files at the tip, the difficult list), the verdict, the reverts, the
 * difficult entries and the whole chain it writes, as data, or a refusal,
 * with nothing left to read or decide in between.
 */
const ABC = ['a', 'b', 'c'];
const GLOBS = ['agents/**/*.md'];
const FINDINGS = `.tune/demo/runs/${nomem(1, 2)}/findings.md`;
const JUDGE = `.tune/demo/runs/${nomem(1, 2)}/judge.json`;

function findings(verdict: string, results: Record<string, string>, extra = ''): string {
  const rows = Object.entries(results).map(([id, r]) => `| ${id} | ${r} |`).join('\n');
  return `## ${verdict}\n\n### Cases\n\n| case | result |\n| --- | --- |\n${rows}\n${extra}`;
}

/** Each tried edit added one line to its own prose file; the tip holds both. */
function read(fixesA: string, fixesB: string, tipB = 'base b\nfix b\n'): RevertRead {
  return {
    edits: new Map([
      [fixesA, { subject: 'tune(demo): edit: fix a', files: [{ path: 'agents/a.md', before: 'base a\n', after: 'base a\nfix a\n' }] }],
      [fixesB, { subject: 'tune(demo): edit: fix b', files: [{ path: 'agents/b.md', before: 'base b\n', after: 'base b\nfix b\n' }] }],
    ]),
    tip: new Map([['agents/a.md', 'base a\nfix a\n'], ['agents/b.md', tipB]]),
  };
}

const files = (a: string, b: string) => new Map([['agents/a.md', blobOid(a)], ['agents/b.md', blobOid(b)]]);

function evidence(state: TuningState, text: string, edits: RevertRead, over: Partial<GradeEvidence> = {}): GradeEvidence {
  return {
    state, run: state.runs.get(nomem(1, 2))!, findings: { path: FINDINGS, text }, judge: { path: JUDGE, text: '{}\n' },
    keep: [], maxRuns: 3, maxRetries: 2, difficult: null, edits,
    prose: { files: files('base a\nfix a\n', 'base b\nfix b\n'), globs: GLOBS }, ...over,
  };
}

const planned = (value: GradePlan | Refusal): GradePlan => {
  expect(isRefusal(value), JSON.stringify(value)).toBe(false);
  return value as GradePlan;
};

describe('a grade as one decision', () => {
  it('the edits it may revert are read before the findings are: every edit its run tried (none for a regrade)', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    expect(gradeCandidates(state, state.runs.get(nomem(1, 2))!).map((e) => e.oid).sort()).toEqual([fixesA, fixesB].sort());
    expect(gradeCandidates(state, state.runs.get(nomem(1, 1))!)).toEqual([]);
  });

  it('decides the verdict and the revert, and plans the chain: the revert commit, then the grade naming the prose it leaves', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    const plan = planned(planGrade(evidence(state, findings('PROGRESS', { a: 'right', b: 'wrong', c: 'right' }), read(fixesA, fixesB))));
    expect(plan.decision).toMatchObject({ verdict: 'PROGRESS', wrong: ['b'] });
    expect(plan.reverted).toEqual([{ edit: expect.objectContaining({ oid: fixesB }), files: ['agents/b.md'], why: `not confirmed by ${nomem(1, 2)}` }]);
    const [revert, grade] = plan.commits;
    expect(plan.commits).toHaveLength(2);
    expect(revert).toMatchObject({ step: { step: 'revert', reverts: [fixesB] }, subject: 'Revert "tune(demo): edit: fix b"', body: `This reverts commit ${fixesB}: not confirmed by ${nomem(1, 2)}.` });
    expect([...revert!.changes]).toEqual([['agents/b.md', { content: 'base b\n' }]]);
    // The prose the grade names is the prose of a tree without the reverted edit.
    const without = proseDigestOf(files('base a\nfix a\n', 'base b\n'), () => true);
    expect(grade!.step).toMatchObject({ step: 'grade', run: nomem(1, 2), verdict: 'PROGRESS', wrong: ['b'], prose: without });
    expect(without).not.toBe(proseDigestOf(files('base a\nfix a\n', 'base b\nfix b\n'), () => true));
    expect([...grade!.changes.keys()]).toEqual([FINDINGS, JUDGE]);
    expect([...grade!.fromWorktree!]).toEqual([FINDINGS, JUDGE]);
    expect(plan.basis).toBe(state.runs.get(nomem(1, 2)));
  });

  it('a revert that no longer applies is a conflict refusal, as data: nothing is planned', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    const r = planGrade(evidence(state, findings('PROGRESS', { a: 'right', b: 'wrong', c: 'right' }), read(fixesA, fixesB, 'rewritten by hand\n')));
    expect(isRefusal(r)).toBe(true);
    expect(r).toMatchObject({
      kind: 'conflict', code: 'revert-conflict',
      message: expect.stringMatching(new RegExp(`^the grade of ${nomem(1, 2)} is not recorded: .*cannot revert ${fixesB.slice(0, 7)}: agents/b.md changed since`)),
      hint: expect.stringContaining(`git tune grade --run ${nomem(1, 2)} --keep ${fixesB.slice(0, 7)} --why`),
    });
  });

  it('--verdict and --keep: the verdict set in the findings, the kept edit not reverted and named with who kept it and why', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    const keeper = { by: 'Tune Tester <t@example.com>', why: 'house style' };
    const plan = planned(planGrade(evidence(state, findings('MIXED', { a: 'right', b: 'wrong', c: 'right' }), read(fixesA, fixesB), {
      forced: 'PROGRESS', keep: [fixesB.slice(0, 7)], keeper,
    })));
    expect(plan.commits).toHaveLength(1);
    expect(plan.reverted).toEqual([]);
    expect(plan.keep).toEqual({ edits: [fixesB], ...keeper });
    expect(plan.commits[0]!.step).toMatchObject({ verdict: 'PROGRESS', keep: { edits: [fixesB], ...keeper } });
    expect(plan.commits[0]!.changes.get(FINDINGS)!.content).toMatch(/^## PROGRESS/);
  });

  it('findings that change the difficult list need the list read: the grade refuses to plan without it rather than drop the lines', () => {
    const { h, fixesA, fixesB } = tried();
    const state = h.fold(ABC);
    const text = findings('PROGRESS', { a: 'right', b: 'wrong', c: 'right' }, '\n## Difficult\n\n- add b flaky — sometimes\n');
    expect(() => planGrade(evidence(state, text, read(fixesA, fixesB)))).toThrow(/change the difficult list, which was not read/);
    const plan = planned(planGrade(evidence(state, text, read(fixesA, fixesB), {
      difficult: { tuning: 'demo', state, commits: h.commits, selection: ABC, dataset: new Set(ABC), maxRetries: 2, file: { path: '.tune/demo/difficult.json', entries: [], problems: [] } },
    })));
    const grade = plan.commits.at(-1)!;
    expect(grade.step).toMatchObject({ difficult: [{ op: 'add', id: 'b', reason: 'flaky' }], flaky: ['b'] });
    expect(JSON.parse(grade.changes.get('.tune/demo/difficult.json')!.content)).toEqual([{ id: 'b', reason: 'flaky', batch: 1, fixed: false, notes: ['sometimes'] }]);
    // Flaky or not, the edit aimed at b did not fix it: reverted, in the same chain.
    expect(plan.commits.map((c) => c.step.step)).toEqual(['revert', 'grade']);
    expect(plan.reverted.map((r) => r.edit.oid)).toEqual([fixesB]);
  });
});
