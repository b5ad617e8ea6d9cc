import { describe, expect, it } from 'vitest';
import { editedFiles, editRun, freshChanges, notProseRefusal, planEdit } from '../../src/core/edit.js';
import type { RunState } from '../../src/core/fold.js';
import { FINAL_RUN } from '../../src/core/names.js';
import { decideNext, type NextStep } from '../../src/core/next.js';
import { isRefusal, type Refusal } from '../../src/core/refusal.js';
import { History, makeConfig, mem, nextInput, nomem, TUNING } from '../helpers/history.js';

const ABC = ['a', 'b', 'c'];
const planned = () => new History().setup(3).plan(1, ABC);
const nextOf = (h: History) => (): NextStep => decideNext(nextInput(h, { selection: ABC }));
const runOf = (h: History) => editRun(h.fold(ABC), nextOf(h));
const config = makeConfig({ prose: ['agents/**/*.md'], memoryPolicy: ['memory/**'] });
const refused = (value: unknown): Refusal => {
  expect(isRefusal(value), JSON.stringify(value)).toBe(true);
  return value as Refusal;
};

describe('editRun: the graded run an edit responds to', () => {
  it.each<[string, () => History, string, string]>([
    ['no run graded yet', () => planned(), 'nothing-graded', 'git tune next'],
    ['a later run started and did not finish', () => { const h = planned().ran(nomem(1, 1), 'MIXED', ['a']); h.edit(nomem(1, 1)); h.start(nomem(1, 2)); return h; }, 'run-not-finished', 'git tune run'],
    ['a later run finished and is not graded', () => { const h = planned().ran(nomem(1, 1), 'MIXED', ['a']); h.edit(nomem(1, 1)); h.start(nomem(1, 2)); h.finish(nomem(1, 2)); return h; }, 'grade-first', 'git tune grade --draft'],
    ['a VOID run of the other half and none of it graded', () => planned().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).voided(mem(1, 1)), 'void-first', 'git tune next'],
  ])('refuses when %s', (_, history, code, hint) => {
    expect(refused(runOf(history()))).toMatchObject({ kind: 'history', code, hint });
  });

  it('is the latest graded run, also when a VOID re-run of its own half waits', () => {
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a']);
    expect((runOf(h) as RunState).name).toBe(nomem(1, 1));
    h.voided(nomem(1, 2));
    expect((runOf(h) as RunState).name).toBe(nomem(1, 1));
  });

  it('refuses in a closed half: the next batch or the final check is where edits go, as next says', () => {
    const between = new History().setup(6).smoothBatch(1, ABC).plan(2, ['d', 'e', 'f']);
    const r = refused(runOf(between));
    expect(r.code).toBe('batch-closed');
    expect(r.message).toContain(`${mem(1, 1)} is the latest graded run and batch 2 was planned`);
    expect(r.message).toContain('run batch 2, grade its first run, then edit');
    expect(r.hint).toBe(nextOf(between)().command);

    const atFinal = new History().setup(3).smoothBatch(1, ABC);
    atFinal.start(FINAL_RUN);
    const f = refused(runOf(atFinal));
    expect(f.message).toContain('the final check had started');
    expect(f.message).toContain('Every batch is done');
  });

  it('asks next only when it refuses a closed half', () => {
    let asked = 0;
    const h = planned().ran(nomem(1, 1), 'MIXED', ['a']);
    editRun(h.fold(ABC), () => { asked++; return nextOf(h)(); });
    expect(asked).toBe(0);
  });
});

describe('the files an edit records', () => {
  const graded = planned().ran(nomem(1, 1), 'MIXED', ['a']).fold(ABC).runs.get(nomem(1, 1))!;
  const memRun = planned().ran(nomem(1, 1), 'PASSED').candidate(nomem(1, 1)).ran(mem(1, 1), 'MIXED', ['b']).fold(ABC).runs.get(mem(1, 1))!;

  it('paths named must be prose or memory policy', () => {
    expect(notProseRefusal(config, ['agents/a.md', 'memory/x.md'])).toBeNull();
    expect(notProseRefusal(config, ['README.md', 'agents/a.md', 'src/x.ts'])).toMatchObject({
      kind: 'usage', code: 'not-prose', message: 'README.md, src/x.ts are not prose of this tuning (prose: agents/**/*.md)',
      hint: `git tune config set prose '["agents/**/*.md","README.md","src/x.ts"]'   # if they are`,
    });
  });

  it.each<[string, RunState, string[], string[], string[] | string]>([
    ['every changed file', graded, [], ['agents/a.md', 'memory/m.md'], ['agents/a.md', 'memory/m.md']],
    ['only the ones named', graded, ['agents/a.md'], ['agents/a.md', 'agents/b.md'], ['agents/a.md']],
    ['none changed', graded, [], [], 'no-edit'],
    ['the named one unchanged', graded, ['agents/c.md'], ['agents/a.md'], 'no-edit'],
    ['a with-memory run: memory policy only', memRun, [], ['memory/m.md'], ['memory/m.md']],
    ['a with-memory run: prose refused', memRun, [], ['memory/m.md', 'agents/a.md'], 'memory-half'],
  ])('%s', (_, run, paths, dirty, want) => {
    const got = editedFiles(config, run, paths, dirty, 'f'.repeat(40));
    if (typeof want === 'string') expect(refused(got).code).toBe(want);
    else expect(got).toEqual(want);
  });

  it('names what may change when nothing did: memory policy only after a with-memory run', () => {
    expect(refused(editedFiles(config, graded, [], [], 'abcdef1234')).hint).toBe('edit the prose (agents/**/*.md, memory/**), then: git tune edit');
    expect(refused(editedFiles(config, memRun, [], [], 'abcdef1234'))).toMatchObject({ message: 'no prose file changed since abcdef1', hint: 'edit the prose (memory/**), then: git tune edit' });
  });
});

describe('changes.md and the edit step', () => {
  const file = '.tune/demo/runs/batch01-nomem-run1/changes.md';
  it.each<[string, string | null, string | null, string]>([
    ['missing', null, null, 'no-changes-md'],
    ['blank', ' \n', null, 'no-changes-md'],
    ['as the last edit left it', '# Changes\nfirst\n', '# Changes\nfirst\n', 'changes-md-unchanged'],
  ])('refused when %s', (_, changes, committed, code) => {
    expect(refused(freshChanges(file, changes, committed)).code).toBe(code);
  });

  it('what a later edit added after the committed text, or the whole file when it was rewritten', () => {
    expect(freshChanges(file, 'first\nsecond\n', 'first\n')).toBe('second\n');
    expect(freshChanges(file, 'rewritten\n', 'first\n')).toBe('rewritten\n');
    expect(freshChanges(file, 'new\n', null)).toBe('new\n');
  });

  const run = planned().ran(nomem(1, 1), 'MIXED', ['a']).fold(ABC).runs.get(nomem(1, 1))!;
  const dataset = [{ id: 'a', input: 'Where is my refund for order 1234, please?' }, { id: 'b', input: 'hi' }, { id: 'c', input: 'hello' }];
  const plan = (fresh: string, added = '') => planEdit({ tuning: TUNING, run, files: ['agents/a.md', 'agents/b.md'], changesFile: file, fresh, dataset, added });

  it('the step names its run and aims; the subject its files; the body the first line that is not a heading', () => {
    expect(plan('# Edit 2\n\nTighten the refund rule.\nAims: a, b\n')).toEqual({
      step: { step: 'edit', tuning: TUNING, run: nomem(1, 1), aims: ['a', 'b'], difficult: [] },
      subject: `tune(${TUNING}): edit after ${nomem(1, 1)}: agents/a.md, agents/b.md`,
      body: 'Tighten the refund rule.', aims: ['a', 'b'], warnings: [],
    });
    expect(plan('Shorter answers.\n')).toMatchObject({ aims: null, step: { aims: null } });
  });

  it('refuses aims that are not cases of the dataset', () => {
    expect(refused(plan('x\nAims: a, zz, yy\n'))).toMatchObject({ code: 'bad-aims', message: 'Aims names cases that are not in the dataset: zz, yy', hint: `$EDITOR ${file}` });
  });

  it('warns in the body when the added prose names a case or quotes its input', () => {
    const p = plan('Refunds.\n', 'Say `a` first. Where is my refund for order 1234, please? gets a link.\n');
    expect(isRefusal(p)).toBe(false);
    const { warnings, body } = p as Exclude<typeof p, Refusal>;
    expect(warnings).toEqual(['names case id a']);
    expect(body).toBe('Refunds.\n\nWarning, this edit may tune to the test: it names case id a.');
  });
});
