import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderConfig } from '../../src/app/config-file.js';
import { hasReview, readFindings } from '../../src/core/import/findings.js';
import type { FolderInput } from '../../src/core/import/folder.js';
import { planImport } from '../../src/core/import/replay.js';
import { parseRunFolderName } from '../../src/core/import/values.js';
import type { Case } from '../../src/contracts/dataset.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * `git tune import <dir>` (docs/import.md): a folder-based tuning becomes a branch
 * whose history replays it, so `git tune next` carries on where the folder
 * stood. Each test builds a `finetune/` folder the way the folder method
 * leaves it, imports it with the real CLI, and checks what `next` says and
 * what native git sees.
 */

const CASES = Array.from({ length: 12 }, (_, i) => {
  const id = `c${String(i + 1).padStart(2, '0')}`;
  return { id, class: i % 2 === 0 ? 'billing' : 'shipping', input: `question ${i + 1}`, ...(id === 'c08' ? { complexity: 'complex' } : {}) };
});
const SELECTION = ['c03', 'c01', 'c05', 'c02', 'c04', 'c06', 'c07', 'c08'];
const CONFIG = {
  minBatch: 2, maxBatch: 4, recheck: 1, seed: 7, maxRetries: 2, maxRuns: 2,
  prose: ['agents/**/*.md'], runner: 'node agent.js',
};
const BATCH1 = { batch: 1, size: 2, why: 'batch 1 takes minBatch: 2', kind: 'new', new: ['c03', 'c01'], recheck: [] };

interface RunSpec {
  cases?: string[];
  plan?: unknown;
  /** Has a batch/ folder (started). */
  started?: boolean;
  /** batch/batch.json (finished): per-case right, or any JSON. */
  results?: Record<string, boolean> | unknown;
  findings?: string;
  changes?: string;
}

interface FolderSpec {
  dataset?: unknown;
  config?: unknown;
  selection?: unknown;
  difficult?: unknown;
  lastGood?: unknown;
  candidate?: unknown;
  runs?: Record<string, RunSpec>;
  raw?: Record<string, string>;
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

function batchJson(results: Record<string, boolean>) {
  return {
    concurrency: 6,
    results: Object.entries(results).map(([id, right]) => ({
      id, right, answer: `answer to ${id}`, usage: [{ model: 'm', inputTokens: 100, outputTokens: 20, costUsd: 0.001 }], llmCalls: 2,
    })),
  };
}

const dirs: string[] = [];
const repos: TempRepo[] = [];

function writeFolder(spec: FolderSpec): string {
  const root = path.join(mkdtempSync(path.join(os.tmpdir(), 'git-tune-folder-')), 'finetune');
  dirs.push(path.dirname(root));
  const files: Record<string, string> = { ...(spec.raw ?? {}) };
  if (spec.dataset !== null) files['dataset.json'] ??= json(spec.dataset ?? CASES);
  if (spec.config !== null) files['config.json'] ??= json(spec.config ?? CONFIG);
  if (spec.selection !== null) files['selection.json'] ??= json(spec.selection ?? SELECTION);
  if (spec.difficult !== undefined) files['difficult.json'] = json(spec.difficult);
  if (spec.lastGood !== undefined) files['memory/last-good.json'] = json(spec.lastGood);
  if (spec.candidate !== undefined) files['memory/candidate.json'] = json(spec.candidate);
  for (const [name, run] of Object.entries(spec.runs ?? {})) {
    const base = `runs/${name}`;
    if (run.cases) files[`${base}/cases.json`] = json(run.cases);
    if (run.plan) files[`${base}/plan.json`] = json(run.plan);
    if (run.started || run.results) files[`${base}/batch/c01/transcript.log`] = 'a bulky per-case log\n';
    if (run.results) {
      const values = Object.values(run.results as object);
      files[`${base}/batch/batch.json`] = json(values.every((v) => typeof v === 'boolean') ? batchJson(run.results as Record<string, boolean>) : run.results);
    }
    if (run.findings) files[`${base}/findings.md`] = run.findings;
    if (run.changes) files[`${base}/changes.md`] = run.changes;
  }
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}

function repo(): TempRepo {
  const r = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'agent.js': 'console.log("{}")\n' });
  repos.push(r);
  return r;
}

afterEach(() => {
  for (const r of repos.splice(0)) r.cleanup();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const findings = (verdict: string, rows: Record<string, boolean> = {}, extra = '') =>
  [
    '# Findings', '', `## ${verdict}`, '',
    ...(Object.keys(rows).length ? ['| case | right | tokens |', '| --- | --- | --- |', ...Object.entries(rows).map(([id, r]) => `| ${id} | ${r ? 'yes' : 'no'} | 120 |`), ''] : []),
    extra, '',
  ].join('\n');

const run1 = (over: RunSpec = {}): RunSpec => ({ cases: ['c03', 'c01'], plan: BATCH1, started: true, ...over });

function importFolder(r: TempRepo, folder: string, extra: string[] = []) {
  const res = r.tune(['import', folder, '--json', ...extra]);
  if (res.code !== 0) throw new Error(`import exited ${res.code}\n${res.stderr}\n${res.stdout}`);
  return JSON.parse(res.stdout) as { tuning: string; branch: string; commits: number; tags: string[]; warnings: string[]; next: { kind: string; run: string | null; command: string | null; notes: string[] } };
}

function nextOf(r: TempRepo) {
  return r.tuneJson<{ kind: string; run: string | null; batch: number | null; half: string | null; command: string | null; notes: string[] }>(['next']);
}

/** `git log` of the tuning branch, oldest first: subject and trailers. */
function history(r: TempRepo): Array<{ oid: string; subject: string; trailers: string }> {
  const out = r.git('log', '--reverse', '--format=%H%x00%s%x00%(trailers)%x01', 'tune/finetune');
  return out.split('\x01').map((s) => s.trim()).filter(Boolean).map((entry) => {
    const [oid, subject, trailers] = entry.split('\x00');
    return { oid: oid!, subject: subject!, trailers: trailers!.trim() };
  });
}

function steps(r: TempRepo): string[] {
  return history(r).filter((c) => c.trailers.includes('Tune-Step')).map((c) => /Tune-Step: (\S+)/.exec(c.trailers)![1]!);
}

function expectCleanGit(r: TempRepo) {
  expect(r.fsck()).toBe('');
  expect(r.git('status', '--porcelain')).toBe('');
  expect(r.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('tune/finetune');
}

describe('git tune import', () => {
  it('a run graded MIXED with changes.md: the edit is pending, next says confirm', () => {
    const r = repo();
    const folder = writeFolder({
      runs: {
        'batch01-nomem-run1': run1({
          results: { c03: true, c01: true },
          // The findings table is the grader's word: it overrides batch.json.
          findings: findings('MIXED', { c03: true, c01: false }),
          changes: '# Changes\n\nAims: c01\n\n- state the refund window in days\n',
        }),
      },
    });
    const out = importFolder(r, folder);
    expect(out.tuning).toBe('finetune');
    expect(out.next.kind).toBe('confirm');
    const next = nextOf(r);
    expect(next).toMatchObject({ kind: 'confirm', run: 'batch01-nomem-run2', batch: 1, half: 'nomem', command: 'git tune run' });
    expect(next.notes).toContain('limit 8 of 12 cases: 4 are never tuned against');
    expect(steps(r)).toEqual(['init', 'dataset', 'select', 'plan', 'run-start', 'run', 'grade', 'edit']);
    const log = history(r);
    expect(log.find((c) => c.trailers.includes('Tune-Step: grade'))!.trailers).toContain('Tune-Wrong: c01');
    expect(log.find((c) => c.trailers.includes('Tune-Step: edit'))!.trailers).toContain('Tune-Aims: c01');
    expect(r.git('tag', '-l', 'tune/*').trim().split('\n')).toEqual(['tune/finetune/batch01-nomem-run1']);
    expect(r.git('rev-parse', 'tune/finetune/batch01-nomem-run1^{commit}').trim()).toBe(log.find((c) => c.trailers.includes('Tune-Step: run\n') || /Tune-Step: run$/m.test(c.trailers))!.oid);
    expectCleanGit(r);
    // The compact files are on the branch, the bulky per-case log is not.
    const files = r.git('ls-tree', '-r', '--name-only', 'HEAD', '.tune/finetune').trim().split('\n');
    expect(files).toEqual([
      '.tune/finetune/README.md',
      '.tune/finetune/USAGE.md',
      '.tune/finetune/batches/batch01.json',
      '.tune/finetune/config.yaml',
      '.tune/finetune/dataset.jsonl',
      '.tune/finetune/runs/batch01-nomem-run1/batch/batch.json',
      '.tune/finetune/runs/batch01-nomem-run1/cases.json',
      '.tune/finetune/runs/batch01-nomem-run1/changes.md',
      '.tune/finetune/runs/batch01-nomem-run1/findings.md',
      '.tune/finetune/runs/batch01-nomem-run1/plan.json',
      '.tune/finetune/runs/batch01-nomem-run1/results.json',
      '.tune/finetune/selection.json',
    ]);
    const selection = JSON.parse(readFileSync(r.path('.tune/finetune/selection.json'), 'utf8'));
    expect(selection).toMatchObject({ seed: 7, limit: 8, total: 12, ids: SELECTION, complex: ['c08'] });
    const config = r.tuneJson(['config']);
    expect(config).toMatchObject({ minBatch: 2, maxBatch: 4, recheck: 1, seed: 7, maxRuns: 2, prose: ['agents/**/*.md'] });
    // `git tune show` reads the run as if git tune had run it.
    const results = JSON.parse(readFileSync(r.path('.tune/finetune/runs/batch01-nomem-run1/results.json'), 'utf8'));
    expect(results.map((x: { id: string; tokens: number }) => [x.id, x.tokens])).toEqual([['c03', 120], ['c01', 120]]);
    expect(log.find((c) => /Tune-Step: run$/m.test(c.trailers))!.trailers).toContain('Tune-Tokens: 240');
  });

  it('a graded run without changes.md: next says edit', () => {
    const r = repo();
    // Wrong cases from batch.json alone (no table in the findings).
    const folder = writeFolder({ runs: { 'batch01-nomem-run1': run1({ results: { c03: false, c01: true }, findings: findings('NO CHANGE') }) } });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'edit', run: 'batch01-nomem-run1', command: 'git tune edit' });
    expect(history(r).find((c) => c.trailers.includes('Tune-Step: grade'))!.trailers).toContain('Tune-Verdict: NO CHANGE');
    expect(history(r).find((c) => c.trailers.includes('Tune-Step: grade'))!.trailers).toContain('Tune-Wrong: c03');
    expectCleanGit(r);
  });

  it('a run folder holding its cases but never started imports as planned: next says run', () => {
    const r = repo();
    const folder = writeFolder({ runs: { 'batch01-nomem-run1': { cases: ['c03', 'c01'], plan: BATCH1 } } });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'run', run: 'batch01-nomem-run1', command: 'git tune run' });
    expect(steps(r)).toEqual(['init', 'dataset', 'select', 'plan']);
    expect(r.git('tag', '-l', 'tune/*')).toBe('');
    expectCleanGit(r);
  });

  it('a run started but never finished (batch/ without batch.json) imports as started: next says resume', () => {
    const r = repo();
    const folder = writeFolder({
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: false, c01: true }, findings: findings('REGRESSION'), changes: '# Changes\n' }),
        'batch01-nomem-run2': { cases: ['c03', 'c01'], started: true },
      },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'resume', run: 'batch01-nomem-run2' });
    expect(steps(r)).toEqual(['init', 'dataset', 'select', 'plan', 'run-start', 'run', 'grade', 'edit', 'run-start']);
    expect(r.git('tag', '-l', 'tune/*').trim()).toBe('tune/finetune/batch01-nomem-run1');
    expectCleanGit(r);
  });

  it('a no-memory run graded PASSED and no candidate from it: next says candidate', () => {
    const r = repo();
    const folder = writeFolder({
      runs: { 'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Cost review\n\nNothing left to cut.') }) },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'candidate', run: 'batch01-nomem-run1', command: 'git tune memory candidate' });
    expect(history(r).find((c) => c.trailers.includes('Tune-Step: grade'))!.trailers).toContain('Tune-Review: yes');
    expectCleanGit(r);
  });

  it('a with-memory run graded PASSED, checkpointed, with unused cases: next says batch, and batch --dry-run plans batch 2 exactly', () => {
    const r = repo();
    const folder = writeFolder({
      candidate: { run: 'batch01-nomem-run1' },
      lastGood: { batch: 1 },
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Cost review\n') }),
        'batch01-mem-run1': { cases: ['c03', 'c01'], started: true, results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Memory review\n\nsaved twice: 0') },
      },
    });
    // The folder lives in the project, committed: the branch starts from it.
    const inRepo = r.path('finetune');
    copyTree(folder, inRepo);
    r.git('add', 'finetune');
    r.git('commit', '-q', '-m', 'the folder-based tuning');
    const out = importFolder(r, 'finetune');
    expect(out.tags).toEqual(['tune/finetune/batch01-nomem-run1', 'tune/finetune/batch01-mem-run1']);
    expect(nextOf(r)).toMatchObject({ kind: 'batch', batch: 2, command: 'git tune batch' });
    expect(steps(r)).toEqual(['init', 'dataset', 'select', 'plan', 'run-start', 'run', 'grade', 'candidate', 'run-start', 'run', 'grade', 'checkpoint']);

    // docs/method.md#batches by hand: batch 1 went smoothly (1 + 1 runs, no difficult case) so 2 → min(4, 4) = 4;
    // new = the first 4 unused in the folder's selection order; the recheck pool is [c03, c01]
    // (neither complex), keyed from s0 = ((7 × 7919 + 2 × 104729) mod 2147483646) + 1 = 264892:
    // c03 → 2049183497, c01 → 892319220, so recheck (1) takes c01.
    const plan = r.tuneJson(['batch', '--dry-run']);
    expect(plan).toEqual({
      batch: 2, size: 4, kind: 'new', new: ['c05', 'c02', 'c04', 'c06'], recheck: ['c01'],
      why: 'batch 1 went smoothly (1 no-memory + 1 with-memory runs, no new difficult case): 2 → 4',
    });
    expect(r.git('tag', '-l', 'tune/*').trim().split('\n').sort()).toEqual(['tune/finetune/batch01-mem-run1', 'tune/finetune/batch01-nomem-run1']);
    expectCleanGit(r);
    // and the plan is written as git tune would: the branch then goes on as usual
    const written = r.tuneJson(['batch']);
    expect(written).toMatchObject({ batch: 2, new: ['c05', 'c02', 'c04', 'c06'], recheck: ['c01'] });
    expect(nextOf(r)).toMatchObject({ kind: 'run', run: 'batch02-nomem-run1' });
  });

  it('a final check graded VERIFIED: next says done', () => {
    const r = repo();
    const folder = writeFolder({
      selection: { ids: ['c03', 'c01'] },
      candidate: 'batch01-nomem-run1',
      lastGood: 'batch01',
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Cost review\n') }),
        'batch01-mem-run1': { cases: ['c03', 'c01'], started: true, results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Memory review\n') },
        'final-check': { started: true, results: { c03: true, c01: true }, findings: findings('VERIFIED') },
      },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'done', run: 'final-check', command: null });
    expect(steps(r).slice(-4)).toEqual(['checkpoint', 'run-start', 'run', 'grade']);
    expect(r.git('tag', '-l', 'tune/*').trim().split('\n').sort()).toEqual([
      'tune/finetune/batch01-mem-run1', 'tune/finetune/batch01-nomem-run1', 'tune/finetune/final-check',
    ]);
    expectCleanGit(r);
  });

  it('a final check with any other verdict has failed', () => {
    const r = repo();
    const folder = writeFolder({
      selection: ['c03', 'c01'],
      lastGood: { batch: 1 },
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Cost review\n') }),
        'batch01-mem-run1': { cases: ['c03', 'c01'], started: true, results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Memory review\n') },
        'final-check': { started: true, results: { c03: true, c01: false }, findings: findings('2 cases regressed') },
      },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'final-failed' });
    expect(history(r).at(-1)!.trailers).toContain('Tune-Verdict: FAILED');
    expect(history(r).at(-1)!.trailers).toContain('Tune-Wrong: c01');
  });

  it('PASSED after maxRuns runs with changes.md imports those edits as already reverted', () => {
    const r = repo();
    const folder = writeFolder({
      difficult: [{ id: 'c01', why: 'wrong', batch: 1, fixed: false, notes: 'the refund window is ambiguous' }],
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: false }, findings: findings('MIXED'), changes: '# Changes\n\n**Aims:** c01\n' }),
        // run 2 of maxRuns 2: c01 still wrong, so the first edit is unconfirmed; the second was never tried.
        'batch01-nomem-run2': run1({ plan: undefined, results: { c03: true, c01: false }, findings: findings('PASSED', {}, '## Cost review\n'), changes: '# Changes\n\ntried once more\n' }),
      },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'candidate', run: 'batch01-nomem-run2' });
    const log = history(r);
    // run 2's grade finds the first edit unconfirmed: reverted by hand, as the folder method does;
    // the edit after run 2 is still pending at the run limit: reverted before PASSED was written.
    expect(steps(r)).toEqual([
      'init', 'dataset', 'select', 'plan',
      'run-start', 'run', 'grade', 'edit',
      'run-start', 'run', 'grade', 'revert', 'edit', 'revert', 'difficult',
    ]);
    const edits = log.filter((c) => c.trailers.includes('Tune-Step: edit')).map((c) => c.oid);
    const reverts = log.filter((c) => c.trailers.includes('Tune-Step: revert'));
    expect(reverts.map((c) => c.trailers.split('\n').filter((l) => l.startsWith('Tune-Reverts:')))).toEqual(edits.map((oid) => [`Tune-Reverts: ${oid}`]));
    // the reverts record the hand reverts of the folder method: nothing changes in the tree
    for (const revert of reverts) expect(r.git('diff', '--name-only', `${revert.oid}^`, revert.oid)).toBe('');
    const difficult = log.find((c) => c.trailers.includes('Tune-Step: difficult'))!;
    expect(difficult.trailers).toContain('Tune-Difficult: add c01 wrong');
    expect(r.git('log', '-1', '--format=%b', difficult.oid)).toContain('c01: the refund window is ambiguous');
    const status = r.tuneJson<{ difficult?: unknown }>(['status']);
    expect(JSON.stringify(status)).toContain('c01');
    expectCleanGit(r);
  });

  it('at maxRuns without PASSED: next says stop-batch', () => {
    const r = repo();
    const folder = writeFolder({
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: false }, findings: findings('MIXED'), changes: '# Changes\n' }),
        'batch01-nomem-run2': run1({ results: { c03: true, c01: false }, findings: findings('NO CHANGE') }),
      },
    });
    importFolder(r, folder);
    const next = nextOf(r);
    expect(next.kind).toBe('stop-batch');
    expect(next.command).toBe('git tune revert && git tune difficult add c01 --why wrong && git tune grade --verdict PASSED --run batch01-nomem-run2');
  });

  it('a VOID run says how to re-run it', () => {
    const r = repo();
    const folder = writeFolder({
      runs: { 'batch01-nomem-run1': run1({ results: { concurrency: 12, void: 'exit 137: killed for memory', results: [] } }) },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'void-rerun', command: 'git tune run --concurrency 6' });
  });

  it('a later batch: the plan comes from plan.json with other key spellings, the difficult list counts toward its size', () => {
    const r = repo();
    const folder = writeFolder({
      candidate: { batch: 2 },
      lastGood: { run: 'batch02-mem-run1' },
      difficult: {
        entries: [
          { case: 'c01', reason: 'costly', addedIn: 1, fixed: true, notes: ['12 llm calls', 'fixed by the shorter rule'] },
          { case: 'c03', reason: 'Regressed', addedIn: 'batch02', status: 'open' },
        ],
      },
      runs: {
        'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Cost review\n') }),
        'batch01-mem-run1': { started: true, results: { c03: true, c01: true }, findings: findings('PASSED', {}, '## Memory review\n') },
        'batch2-nomem-run1': {
          cases: ['c05', 'c02', 'c04', 'c06', 'c03'],
          plan: { batch: 'batch02', size: 4, kind: 'new', newCases: ['c05', 'c02', 'c04', 'c06'], recheckCases: ['c03'] },
          started: true,
          results: { c05: true, c02: true, c04: true, c06: true, c03: false },
          findings: findings('PASSED', {}, '## Cost review\n'),
        },
        'batch02-mem-run1': { started: true, results: { c05: true, c02: true, c04: true, c06: true, c03: false }, findings: findings('PASSED', {}, '## Memory review\n') },
      },
    });
    importFolder(r, folder);
    expect(nextOf(r)).toMatchObject({ kind: 'batch', batch: 3 });
    // batch 2 added a difficult case, so batch 3 stays at 4; c03 is open, so it is rechecked first.
    const plan = r.tuneJson(['batch', '--dry-run']);
    expect(plan).toMatchObject({ batch: 3, size: 4, kind: 'new', new: ['c07', 'c08'], recheck: ['c03'] });
    const log = history(r);
    expect(log.find((c) => c.trailers.includes('Tune-Step: plan') && c.trailers.includes('Tune-Batch: 2'))!.trailers)
      .toContain('Tune-Recheck: c03');
    // a run folder without cases.json runs its batch's plan: its wrong cases come from batch.json
    const grades = log.filter((c) => c.trailers.includes('Tune-Step: grade')).map((c) => /Tune-Wrong: (.*)/.exec(c.trailers)![1]);
    expect(grades).toEqual(['(none)', '(none)', 'c03', 'c03']);
    expect(steps(r)).toEqual([
      'init', 'dataset', 'select',
      'plan', 'run-start', 'run', 'grade', 'candidate', 'run-start', 'run', 'grade', 'difficult', 'checkpoint',
      'plan', 'run-start', 'run', 'grade', 'candidate', 'run-start', 'run', 'grade', 'difficult', 'checkpoint',
    ]);
    // a fixed entry is added and fixed in the batch that last held it; notes go in the body
    const difficult = log.filter((c) => c.trailers.includes('Tune-Step: difficult'));
    expect(difficult.map((c) => c.trailers.split('\n').filter((l) => l.startsWith('Tune-Difficult')))).toEqual([
      ['Tune-Difficult: add c01 costly', 'Tune-Difficult: fix c01'],
      ['Tune-Difficult: add c03 regressed'],
    ]);
    expect(r.git('log', '-1', '--format=%b', difficult[0]!.oid)).toContain('- c01: 12 llm calls; fixed by the shorter rule');
    expectCleanGit(r);
  });

  it('refuses a bad folder whole, listing every problem, and leaves the repository byte for byte as it was', () => {
    const r = repo();
    const dataset = [...CASES.slice(0, 4), { id: 'c02', class: 'billing', input: 'again' }, { id: 'bad id', input: 'x' }];
    const folder = writeFolder({
      dataset,
      difficult: [{ id: 'c01', reason: 'hard', batch: 1, fixed: false }],
      runs: { 'batch01-nomem-run1': run1({ results: { c03: true, c01: true }, findings: findings('GREAT') }) },
      raw: { 'config.json': '{ "maxBatch": 3, ' },
    });
    const before = snapshot(r.path('.git'));
    const headBefore = r.git('rev-parse', 'HEAD');
    const res = r.tune(['import', folder]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: the folder was refused');
    expect(res.stderr).toContain('nothing was written');
    const name = path.relative(r.dir, folder);
    expect(res.stderr).toContain(`${name}/dataset.json case 5: field \`id\` repeats the id of ${name}/dataset.json case 2; ids must be unique`);
    expect(res.stderr).toMatch(/dataset\.json case 6: field `id`/);
    expect(res.stderr).toMatch(/dataset\.json case 6: field `class`/);
    expect(res.stderr).toContain(`${name}/config.json line 1: is not valid JSON`);
    expect(res.stderr).toContain(`${name}/difficult.json entry 0: field \`reason\` must be one of wrong, regressed, flaky, memory, costly (found "hard")`);
    expect(res.stderr).toContain(`${name}/runs/batch01-nomem-run1/findings.md: field \`first ## heading\` must be the verdict`);
    expect(snapshot(r.path('.git'))).toEqual(before);
    expect(r.git('rev-parse', 'HEAD')).toBe(headBefore);
    expect(r.git('branch', '--list', 'tune/*')).toBe('');
    expect(r.git('status', '--porcelain')).toBe('');

    const json = r.tune(['import', folder, '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.code).toBe('bad-folder');
  });

  it('refuses ids the dataset does not hold and settings the config does not allow, writing nothing', () => {
    const r = repo();
    const folder = writeFolder({
      config: { ...CONFIG, max_runs: 'four', model: 'gpt' },
      selection: ['c03', 'c01', 'c99', 'c03'],
      difficult: [{ id: 'c42', reason: 'wrong', batch: 1 }, { id: 'c01', reason: 'wrong' }],
      candidate: { run: 'batch01-nomem-run1' },
      runs: {
        'batch01-nomem-run1': run1({ cases: ['c03', 'c01', 'c77'], results: { c03: true, c01: true }, findings: findings('MIXED') }),
        'batch01-nomem-run2': { cases: ['c03', 'c01'], changes: '# Changes\n' },
      },
    });
    const before = snapshot(r.path('.git'));
    const res = r.tune(['import', folder]);
    expect(res.code).toBe(2);
    const name = path.relative(r.dir, folder);
    const problems = res.stderr.split('\n').filter((l) => l.startsWith('  - ')).map((l) => l.slice(4).replaceAll(`${name}/`, ''));
    expect(problems).toEqual([
      'config.json: field `maxRuns` must be a whole number (runs per half) (found "four")',
      'selection.json item 3: repeats an id; the selection holds each case once (found "c03")',
      'selection.json: field `ids` names a case that is not in the dataset (found "c99")',
      'runs/batch01-nomem-run1/cases.json: field `cases` names a case that is not in the dataset (found "c77")',
      'runs/batch01-nomem-run1/cases.json: holds other cases than batch 1\'s plan (runs/batch01-nomem-run1/plan.json): every run of a batch uses the same cases',
      'runs/batch01-nomem-run2/changes.md: is an edit after batch01-nomem-run2, which is not graded: an edit responds to a graded run',
      'memory/candidate.json: field `from` must name a no-memory run graded PASSED: the candidate is built from one (found "batch01-nomem-run1")',
      'difficult.json entry 0: field `id` must name a case of the dataset (found "c42")',
      'difficult.json entry 1: field `batch` must be the batch the entry was added in (a run name such as "batch02-nomem-run1", or a number; 0 = before batch 1) (found nothing)',
    ]);
    expect(snapshot(r.path('.git'))).toEqual(before);
  });

  it('refuses runs that contradict each other: a run started after one that never finished, a missing plan', () => {
    const r = repo();
    const folder = writeFolder({
      runs: {
        'batch01-nomem-run1': { cases: ['c03', 'c01'], plan: BATCH1, started: true },
        'batch01-nomem-run2': run1({ results: { c03: true, c01: true }, findings: findings('PASSED') }),
        'batch03-nomem-run1': { started: true },
      },
    });
    const res = r.tune(['import', folder]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('batch 3 follows batch 1: batches are numbered 1, 2, … without a gap');
    expect(res.stderr).toContain('started, but the run before it (batch01-nomem-run1) never finished (no batch/batch.json)');
    expect(res.stderr).toContain('batch 3 has neither plan.json nor cases.json');
    expect(r.git('branch', '--list', 'tune/*')).toBe('');
  });

  it('refuses a tuning that exists, and names a tuning with --name', () => {
    const r = repo();
    const folder = writeFolder({ runs: { 'batch01-nomem-run1': { cases: ['c03', 'c01'], plan: BATCH1 } } });
    importFolder(r, folder);
    const again = r.tune(['import', folder]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('tuning finetune already exists');
    r.git('switch', '-q', 'main');
    const other = r.tune(['import', folder, '--name', 'support-desk', '--json']);
    expect(other.code).toBe(0);
    expect(JSON.parse(other.stdout)).toMatchObject({ tuning: 'support-desk', branch: 'tune/support-desk' });
    expect(r.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('tune/support-desk');
    expect(r.git('status', '--porcelain')).toBe('');
  });
});

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, entry.name);
    const b = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(a, b);
    else writeFileSync(b, readFileSync(a));
  }
}

/** Every file under a folder with the hash of its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = `${statSync(p).size}:${createHash('sha1').update(readFileSync(p)).digest('hex')}`;
    }
  };
  walk(dir);
  return out;
}

describe('reading a folder tolerantly (pure)', () => {
  it('reads the verdict from the first level-2 heading, in the spellings folders use', () => {
    expect(readFindings('# Findings\n\n## PASSED\n\n## Cost review\n').verdict).toBe('PASSED');
    expect(readFindings('## Verdict: no_change\n').verdict).toBe('NO CHANGE');
    expect(readFindings('## **MIXED** — 3 of 5 right\n').verdict).toBe('MIXED');
    expect(readFindings('## Verdict\n\nREGRESSION\n\n## Table\n').verdict).toBe('REGRESSION');
    expect(readFindings('```\n## PASSED\n```\n## VOID\n').verdict).toBe('VOID');
    expect(readFindings('# Findings\n\nno heading yet\n')).toMatchObject({ heading: null, verdict: null });
    expect(hasReview(readFindings('## PASSED\n'), 'nomem')).toBe(false);
    expect(hasReview(readFindings('## PASSED\n\n## Memory review\n'), 'mem')).toBe(true);
    // Each half needs its own review (a with-memory PASSED is not passed on cost).
    expect(hasReview(readFindings('## PASSED\n\n## Cost review\n'), 'mem')).toBe(false);
    expect(hasReview(readFindings('## PASSED\n\n## Review\n'), 'nomem')).toBe(true);
  });

  it('reads right and wrong from a findings table and a Wrong line', () => {
    const f = readFindings([
      '## MIXED', '', '| Case | tokens | Right |', '|:---|---:|:---:|',
      '| `c01` | 10 | ✅ |', '| [c02](runs/c02.md) | 12 | ❌ |', '| c03 | 9 | partial |', '',
      '**Wrong:** c02, c05', '',
    ].join('\n'));
    expect([...f.table]).toEqual([['c01', true], ['c02', false]]);
    expect(f.wrongLine).toEqual(['c02', 'c05']);
    expect(readFindings('## PASSED\n\nWrong: (none)\n').wrongLine).toEqual([]);
  });

  it('names runs as git tune does, from the spellings folders use', () => {
    expect(parseRunFolderName('batch3-mem-run2')).toEqual({ kind: 'batch', batch: 3, half: 'mem', number: 2 });
    expect(parseRunFolderName('batch03-nomem-run1')).toEqual({ kind: 'batch', batch: 3, half: 'nomem', number: 1 });
    expect(parseRunFolderName('final-check')).toEqual({ kind: 'final' });
    expect(parseRunFolderName('notes')).toBeNull();
    expect(parseRunFolderName('batch00-nomem-run1')).toBeNull();
  });

  it('plans the same steps for the same folder, with warnings for what it left out or guessed', () => {
    const cases = CASES.map((c) => ({ complexity: 'medium', ...c, rev: 'r' })) as Case[];
    const input: FolderInput = {
      shown: 'finetune', datasetFile: 'dataset.json', cases, problems: [],
      files: new Map([
        ['config.json', JSON.stringify({ ...CONFIG, MIN_BATCH: 2, model: 'gpt-x' })],
        ['runs/batch01-nomem-run1/cases.json', JSON.stringify({ cases: [{ id: 'c03' }, { id: 'c01' }] })],
        ['runs/batch01-nomem-run1/batch/batch.json', JSON.stringify({ cases: { c03: { status: 'pass', tokens: 5 }, c01: { error: 'timeout', tokens: 7 } } })],
        ['runs/batch01-nomem-run1/findings.md', '## PROGRESS\n'],
      ]),
      runFolders: [
        { folder: 'batch01-nomem-run1', hasBatchDir: true, files: ['cases.json', 'findings.md', 'batch/batch.json'] },
        { folder: 'scratch', hasBatchDir: false, files: [] },
      ],
    };
    const plan = planImport(input, { tuning: 'demo', renderConfig });
    expect(plan.steps.map((s) => s.data.step)).toEqual(['init', 'dataset', 'select', 'plan', 'run-start', 'run', 'grade']);
    expect(plan.steps[3]!.data).toMatchObject({ step: 'plan', batch: 1, kind: 'new', new: ['c03', 'c01'], recheck: [] });
    // batch.json names no concurrency and config.json none: the folder method ran at 16.
    expect(plan.steps[5]!.data).toMatchObject({ step: 'run', tokens: 12, concurrency: 16 });
    expect(plan.steps[6]!.data).toMatchObject({ step: 'grade', verdict: 'PROGRESS', wrong: ['c01'], review: false });
    expect(plan.tags).toEqual(['batch01-nomem-run1']);
    expect(plan.warnings).toEqual([
      'finetune/config.json: `model` is not a git-tune setting: left out',
      'finetune/selection.json is missing: the selection is git tune select\'s order',
      'finetune/runs/scratch names no run (batchNN-nomem-runN, batchNN-mem-runN, final-check): left out',
      'batch 1 has no plan.json: planned from finetune/runs/batch01-nomem-run1/cases.json (cases never used before are new, the others recheck)',
    ]);
    expect(planImport(input, { tuning: 'demo', renderConfig }).steps).toEqual(plan.steps);
  });
});
