import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nextInputOf } from '../../src/app/decide.js';
import { parseConfig, renderConfig } from '../../src/app/config-file.js';
import { planFolderImport, readFolder } from '../../src/app/import.js';
import type { Selection } from '../../src/contracts/files.js';
import { viewDifficult } from '../../src/core/difficult.js';
import { planImport, type ImportPlan } from '../../src/core/import/replay.js';
import type { InitFlags } from '../../src/core/import/settings.js';
import { decideNext } from '../../src/core/next.js';
import { TuneError } from '../../src/errors.js';
import { ROOT } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * Each file shape the folder method's scripts write (docs/import.md), from a file in exactly that shape: what the import reads from
 * it, and what `next` then says. Written by hand from the shapes next.mjs
 * and batch.mjs read, one concern per test.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const FLAGS: InitFlags = { prose: ['agents/**/*.md'], runner: { command: ['node', 'agent.js'] } };

/** The folder as the method leaves it: exact file texts, and folders that may be empty. */
function folder(files: Record<string, string>, empty: string[] = []): { cwd: string; dir: string } {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'git-tune-shapes-'));
  dirs.push(cwd);
  const dir = path.join(cwd, 'finetune');
  mkdirSync(dir, { recursive: true });
  for (const d of empty) mkdirSync(path.join(dir, d), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return { cwd, dir };
}

async function plan(files: Record<string, string>, empty: string[] = [], flags: InitFlags = FLAGS): Promise<ImportPlan> {
  const { cwd, dir } = folder(files, empty);
  return planImport(await readFolder(dir, cwd), { tuning: 'finetune', flags, renderConfig });
}

/** What `next` says on the history the plan folds to. */
function next(p: ImportPlan) {
  const file = (suffix: string) => p.steps.flatMap((s) => s.files).findLast(([f]) => f.endsWith(suffix))?.[1];
  const config = parseConfig(file('/config.yaml')!, 'config.yaml').config;
  const selectionText = file('/selection.json');
  const selection = selectionText === undefined ? null : (JSON.parse(selectionText) as Selection);
  return decideNext(nextInputOf({ state: p.state, config, selection, dir: p.dir }));
}

const stepsOf = (p: ImportPlan) => p.steps.map((s) => s.data.step);

// The files below are written as the folder method's scripts write them (JSON.stringify(…, null, 2)).
const DATASET = `{
  "cases": [
    { "id": "billing-01", "class": "billing", "complexity": "complex", "input": "Where is my refund?",
      "rubric": [ { "id": "r1", "text": "names the 30-day window" } ] },
    { "id": "billing-02", "class": "billing", "complexity": "simple", "input": "Can I pay later?" },
    { "id": "shipping-01", "class": "shipping", "complexity": "medium", "input": "Where is my parcel?" },
    { "id": "shipping-02", "class": "shipping", "complexity": "complex", "input": "It arrived broken." }
  ]
}
`;
const CONFIG = `{
  "limit": 4,
  "minBatch": 2,
  "maxBatch": 4,
  "recheck": 1,
  "concurrency": 12,
  "seed": 3,
  "maxRetries": 2
}
`;
const SELECTION = `{
  "batch": [
    { "id": "billing-01", "input": "Where is my refund?" },
    { "id": "shipping-02", "input": "It arrived broken." },
    { "id": "billing-02", "input": "Can I pay later?" },
    { "id": "shipping-01", "input": "Where is my parcel?" }
  ]
}
`;
const CASES_B1 = `{
  "batch": [
    { "id": "billing-01", "input": "Where is my refund?" },
    { "id": "shipping-02", "input": "It arrived broken." }
  ]
}
`;
const PLAN_B1 = `{
  "batch": 1,
  "size": 2,
  "why": "batch 1 is the smoke test: minBatch 2",
  "kind": "new",
  "new": [
    "billing-01",
    "shipping-02"
  ],
  "recheck": []
}
`;
const BASE = { 'README.md': '# Fine-tuning\n', 'dataset.json': DATASET, 'config.json': CONFIG, 'selection.json': SELECTION };
const BATCH1 = { 'runs/batch01-nomem-run1/cases.json': CASES_B1, 'runs/batch01-nomem-run1/plan.json': PLAN_B1 };
const batchJson = (concurrency: number) => `{\n  "batch": {\n    "concurrency": ${concurrency},\n    "cases": 2\n  }\n}\n`;
const findings = (verdict: string, wrong: string[] = [], review = '') =>
  `# Findings\n\n## ${verdict}\n\n| case | right |\n| --- | --- |\n| billing-01 | ${wrong.includes('billing-01') ? 'no' : 'yes'} |\n| shipping-02 | ${wrong.includes('shipping-02') ? 'no' : 'yes'} |\n${review ? `\n## ${review}\n\nEvery case read.\n` : ''}`;
const ran = (run: string, verdict: string | null, wrong: string[] = [], review = '', concurrency = 12) => ({
  [`runs/${run}/batch/batch.json`]: batchJson(concurrency),
  ...(run.includes('run1') && run.includes('nomem') ? {} : { [`runs/${run}/cases.json`]: CASES_B1 }),
  ...(verdict ? { [`runs/${run}/findings.md`]: findings(verdict, wrong, review) } : {}),
});

describe('the folder method\'s shapes, each from a file in that shape', () => {
  it('dataset.json {cases: [...]} with rubric items {id, text}', async () => {
    const p = await plan({ 'README.md': '# x\n', 'dataset.json': DATASET }, [], {});
    const dataset = p.steps.find((s) => s.data.step === 'dataset')!;
    const cases = dataset.files[0]![1].trim().split('\n').map((l) => JSON.parse(l));
    expect(cases.map((c: { id: string }) => c.id)).toEqual(['billing-01', 'billing-02', 'shipping-01', 'shipping-02']);
    expect(cases[0].rubric).toEqual([{ id: 'r1', text: 'names the 30-day window' }]);
    expect(next(p).kind).toBe('config'); // no config.json, no flags: next.mjs asks for config.json too
  });

  it('dataset.json {samples: [...]} with rubric items as plain strings: ids r1, r2, … in order', async () => {
    const samples = `{\n  "samples": [\n    { "id": "a-1", "class": "a", "input": "q", "rubric": ["says hello", "says goodbye"] }\n  ]\n}\n`;
    const p = await plan({ 'dataset.json': samples });
    const line = JSON.parse(p.steps.find((s) => s.data.step === 'dataset')!.files[0]![1]);
    expect(line.rubric).toEqual([{ id: 'r1', text: 'says hello' }, { id: 'r2', text: 'says goodbye' }]);
  });

  it('config.json with the method\'s keys; init\'s flags fill prose and runner', async () => {
    const p = await plan({ ...BASE });
    const yaml = p.steps[0]!.files[0]![1];
    expect(parseConfig(yaml, 'config.yaml').config).toMatchObject({
      limit: 4, minBatch: 2, maxBatch: 4, recheck: 1, concurrency: 12, seed: 3, maxRetries: 2, maxRuns: 4,
      prose: ['agents/**/*.md'], runner: { command: ['node', 'agent.js'] },
    });
    expect(next(p).kind).toBe('batch');
    // Without --prose and --runner, the folder names no prose and no runner: config comes first.
    expect(next(await plan({ ...BASE }, [], {})).kind).toBe('config');
  });

  it('selection.json {batch: [{id, …}]} keeps the folder\'s order', async () => {
    const p = await plan({ ...BASE });
    const selection = JSON.parse(p.steps.find((s) => s.data.step === 'select')!.files[0]![1]);
    expect(selection).toMatchObject({ seed: 3, limit: 4, total: 4, ids: ['billing-01', 'shipping-02', 'billing-02', 'shipping-01'], complex: ['billing-01', 'shipping-02'] });
  });

  it('no dataset: only the init commit, next says dataset; no selection: next says select', async () => {
    const none = await plan({ 'README.md': '# x\n' }, [], {});
    expect(stepsOf(none)).toEqual(['init']);
    expect(next(none).kind).toBe('dataset');
    // A dataset.json that holds no case yet is a dataset not built (next.mjs counts its cases).
    const empty = await plan({ 'dataset.json': '{\n  "cases": []\n}\n' }, [], {});
    expect(stepsOf(empty)).toEqual(['init']);
    expect(next(empty).kind).toBe('dataset');
    const noSelection = await plan({ 'dataset.json': DATASET, 'config.json': CONFIG });
    expect(stepsOf(noSelection)).toEqual(['init', 'dataset']);
    expect(next(noSelection).kind).toBe('select');
  });

  it('a run\'s cases.json {batch: [...]} and plan.json: the batch\'s plan; laid out, not started: next says run', async () => {
    const p = await plan({ ...BASE, ...BATCH1 });
    expect(stepsOf(p)).toEqual(['init', 'dataset', 'select', 'plan']);
    expect(p.steps[3]!.data).toEqual({ step: 'plan', batch: 1, size: 2, kind: 'new', new: ['billing-01', 'shipping-02'], recheck: [] });
    expect(next(p)).toMatchObject({ kind: 'run', run: 'batch01-nomem-run1' });
  });

  it('batch/batch.json {batch: {concurrency}}: the concurrency a VOID ran at decides its re-run', async () => {
    const above = await plan({ ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'VOID', [], '', 12) });
    expect(above.steps.find((s) => s.data.step === 'run-start')!.data).toMatchObject({ concurrency: 12 });
    expect(next(above)).toMatchObject({ kind: 'void-rerun', command: 'git tune config set concurrency 6 && git tune run' });
    const floor = await plan({ ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'VOID', [], '', 4) });
    expect(next(floor).kind).toBe('void-floor');
  });

  it('a run started but never finished (batch/ without batch.json): next says resume', async () => {
    const p = await plan({ ...BASE, ...BATCH1 }, ['runs/batch01-nomem-run1/batch']);
    expect(stepsOf(p).slice(-1)).toEqual(['run-start']);
    expect(next(p)).toMatchObject({ kind: 'resume', run: 'batch01-nomem-run1' });
  });

  it('run 2 laid out after an edit: a run-plan step, next says run (not confirm)', async () => {
    const p = await plan({
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'MIXED', ['shipping-02']),
      'runs/batch01-nomem-run1/changes.md': '# Changes\n\n- name the window in days\n',
      'runs/batch01-nomem-run2/cases.json': CASES_B1,
    });
    expect(stepsOf(p).slice(-2)).toEqual(['edit', 'run-plan']);
    expect(p.steps.at(-1)!.data).toEqual({ step: 'run-plan', run: 'batch01-nomem-run2' });
    expect(next(p)).toMatchObject({ kind: 'run', run: 'batch01-nomem-run2', half: 'nomem' });
  });

  it('memory/candidate.json {from: "<run>"}, then the with-memory run 1 laid out: next says run', async () => {
    const passed = { ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED', [], 'Cost review') };
    expect(next(await plan(passed)).kind).toBe('candidate');
    const built = await plan({ ...passed, 'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n' });
    expect(stepsOf(built).slice(-1)).toEqual(['candidate']);
    expect(next(built)).toMatchObject({ kind: 'mem-run', run: 'batch01-mem-run1' });
    const laidOut = await plan({ ...passed, 'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n', 'runs/batch01-mem-run1/cases.json': CASES_B1 });
    expect(next(laidOut)).toMatchObject({ kind: 'run', run: 'batch01-mem-run1', half: 'mem' });
  });

  it('memory/last-good.json {batches: [n, …]}: the checkpoint; the next batch is due', async () => {
    const files = {
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED', [], 'Cost review'),
      'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n',
      ...ran('batch01-mem-run1', 'PASSED', [], 'Memory review'),
    };
    expect(next(await plan(files)).kind).toBe('checkpoint');
    const p = await plan({ ...files, 'memory/last-good.json': '{\n  "batches": [\n    1\n  ]\n}\n' });
    expect(stepsOf(p).slice(-1)).toEqual(['checkpoint']);
    expect(next(p)).toMatchObject({ kind: 'batch', batch: 2 });
  });

  it('a PASSED without its review is refused, even with an edit after it; with the other half\'s review too', async () => {
    const p = await plan({ ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED'), 'runs/batch01-nomem-run1/changes.md': '# Changes\n' });
    expect(next(p).kind).toBe('refused');
    expect(next(await plan({ ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED', [], 'Memory review') })).kind).toBe('refused');
  });

  it('difficult.json {cases: [{id, reasons, added, fixed}]}: the worst reason and the batch added in', async () => {
    const difficult = `{
  "cases": [
    { "id": "shipping-02", "reasons": ["costly", "regressed"], "added": "batch01-nomem-run1" },
    { "id": "billing-01", "reasons": ["wrong"], "added": "batch01-nomem-run1", "fixed": "batch01-nomem-run2" }
  ]
}
`;
    const p = await plan({
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'MIXED', ['billing-01']),
      'runs/batch01-nomem-run1/changes.md': '# Changes\n',
      ...ran('batch01-nomem-run2', 'PASSED', [], 'Cost review'),
      'difficult.json': difficult,
    });
    const view = viewDifficult(p.state, 2);
    expect(view.map((e) => [e.id, e.reason, e.batch, e.status])).toEqual([['shipping-02', 'regressed', 1, 'open'], ['billing-01', 'wrong', 1, 'fixed']]);
  });

  it('a final-check folder is the final check under way (next.mjs reads it so): resume, then grade, done, final-failed', async () => {
    const done = {
      ...BASE, 'config.json': CONFIG.replace('"limit": 4', '"limit": 2'),
      'selection.json': CASES_B1, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED', [], 'Cost review'),
      'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n',
      ...ran('batch01-mem-run1', 'PASSED', [], 'Memory review'),
      'memory/last-good.json': '{\n  "batches": [\n    1\n  ]\n}\n',
    };
    expect(next(await plan(done)).kind).toBe('final');
    expect(next(await plan(done, ['runs/final-check'])).kind).toBe('resume');
    const finished = { ...done, 'runs/final-check/batch/batch.json': batchJson(12) };
    expect(next(await plan(finished)).kind).toBe('grade');
    expect(next(await plan({ ...finished, 'runs/final-check/findings.md': '## VERIFIED\n' })).kind).toBe('done');
    expect(next(await plan({ ...finished, 'runs/final-check/findings.md': '## FAILED\n\n2 regressed\n' })).kind).toBe('final-failed');
  });

  it('an edit a run did not confirm is recorded reverted right after that run\'s grade, no file changed', async () => {
    const p = await plan({
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'MIXED', ['shipping-02']),
      'runs/batch01-nomem-run1/changes.md': '# Changes\n\nAims: shipping-02\n',
      ...ran('batch01-nomem-run2', 'NO CHANGE', ['shipping-02']),
    });
    expect(stepsOf(p).slice(-5)).toEqual(['edit', 'run-start', 'run', 'grade', 'revert']);
    expect(p.steps.at(-1)!.files).toEqual([]);
    expect(p.state.edits.map((e) => [e.status, e.settledBy === p.state.edits[0]!.settledBy])).toEqual([['reverted', true]]);
    expect(next(p).kind).toBe('edit');
  });
});

describe('a bad folder in the method\'s shapes', () => {
  it('lists every problem with file and field, and plans no step', async () => {
    const p = await plan({
      ...BASE,
      'selection.json': '{\n  "batch": [ { "id": "billing-01" }, { "id": "nope-9" } ]\n}\n',
      'difficult.json': '{\n  "cases": [ { "id": "billing-01", "reasons": ["wrong", "odd"], "added": "batch01-nomem-run1", "fixed": 7 } ]\n}\n',
      'memory/last-good.json': '{\n  "batches": [2]\n}\n',
      'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n',
      ...BATCH1, 'runs/batch01-nomem-run1/batch/batch.json': '{ "batch": ',
    });
    expect(p.steps).toEqual([]);
    expect(p.problems).toEqual([
      'finetune/selection.json: field `ids` names a case that is not in the dataset (found "nope-9")',
      'finetune/runs/batch01-nomem-run1/batch/batch.json: is not valid JSON (Unexpected end of JSON input)',
      'finetune/memory/candidate.json: field `from` must name a no-memory run graded PASSED: the candidate is built from one (found "batch01-nomem-run1")',
      'finetune/memory/last-good.json: field `batches[0]` names batch 2, which has no with-memory run graded PASSED: a checkpoint holds a batch that passed with memory (found number 2)',
      'finetune/difficult.json entry 0: field `fixed` must name the run that fixed it (e.g. "batch03-nomem-run2"), or be true or false (found number 7)',
      'finetune/difficult.json entry 0: field `reasons` must be a list of reasons, each one of wrong, regressed, flaky, memory, costly (found "odd")',
    ]);
  });

  it('a folder holding runs but no dataset is refused; the CLI writes nothing', async () => {
    const { cwd, dir } = folder({ 'config.json': CONFIG, 'selection.json': SELECTION, ...BATCH1 });
    const input = await readFolder(dir, cwd);
    let error: unknown;
    try {
      planFolderImport(input, 'finetune', FLAGS);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TuneError);
    expect((error as TuneError).details).toContain('finetune/dataset.json: is missing, yet the folder holds selection.json, runs/: the dataset comes first (a list of cases, or {"cases": [...]})');
    const r = TempRepo.create();
    try {
      const res = r.tune(['import', dir]);
      expect(res.code).toBe(2);
      expect(r.git('branch', '--list', 'tune/*')).toBe('');
      expect(r.git('status', '--porcelain')).toBe('');
    } finally {
      r.cleanup();
    }
  });
});

describe('git-tune carries on from an imported folder with its own commands', () => {
  it('run 2 laid out in the folder: git tune run runs batch01-nomem-run2, then next says grade', () => {
    const { dir } = folder({
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'MIXED', ['shipping-02']),
      'runs/batch01-nomem-run1/changes.md': '# Changes\n\n- name the window in days\n',
      'runs/batch01-nomem-run2/cases.json': CASES_B1,
    });
    const r = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    try {
      const runner = path.join(ROOT, 'test/fixtures/runner.mjs');
      const imported = r.tune(['import', dir, '--json', '--prose', 'agents/**/*.md', '--runner', `node ${runner}`]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout).next).toMatchObject({ kind: 'run', run: 'batch01-nomem-run2', command: 'git tune run' });
      const run = r.tune(['run']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('batch01-nomem-run2: finished');
      expect(r.git('tag', '-l', 'tune/finetune/*').trim().split('\n')).toEqual(['tune/finetune/batch01-nomem-run1', 'tune/finetune/batch01-nomem-run2']);
      expect(r.tuneJson(['next'])).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run2' });
      const subjects = r.git('log', '--format=%(trailers:key=Tune-Step,valueonly,separator=)', 'tune/finetune').trim().split('\n').filter(Boolean);
      expect(subjects.slice(0, 4)).toEqual(['run', 'run-start', 'run-plan', 'edit']);
      expect(r.fsck()).toBe('');
    } finally {
      r.cleanup();
    }
  });
});

describe('git tune import with init\'s flags, through the CLI', () => {
  it('a folder in the method\'s shapes imports with --prose and --runner; next and batch --dry-run as the folder method says', () => {
    const { dir } = folder({
      ...BASE, ...BATCH1, ...ran('batch01-nomem-run1', 'PASSED', [], 'Cost review'),
      'memory/candidate.json': '{\n  "from": "batch01-nomem-run1"\n}\n',
      ...ran('batch01-mem-run1', 'PASSED', [], 'Memory review'),
      'memory/last-good.json': '{\n  "batches": [\n    1\n  ]\n}\n',
    });
    const r = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agent.js': 'console.log("{}")\n' });
    try {
      const res = r.tune(['import', dir, '--json', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--judge', 'node judge.js', '--memory-policy', 'agents/memory.md']);
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout).next).toMatchObject({ kind: 'batch', batch: 2 });
      expect(r.tuneJson(['config'])).toMatchObject({
        prose: ['agents/**/*.md'], memoryPolicy: ['agents/memory.md'], runner: { command: ['node', 'agent.js'] }, judge: { command: ['node', 'judge.js'] },
        concurrency: 12, seed: 3,
      });
      // batch 1 went smoothly (1 + 1 runs, none added): 2 → 4, capped by what is left (2 unused); recheck 1 of the pool.
      expect(r.tuneJson(['batch', '--dry-run'])).toMatchObject({ batch: 2, size: 4, kind: 'new', new: ['billing-02', 'shipping-01'] });
      expect(r.fsck()).toBe('');
      const bad = r.tune(['import', dir, '--name', 'other', '--runner', '']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--runner is empty');
    } finally {
      r.cleanup();
    }
  });
});
