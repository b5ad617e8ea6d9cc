import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, ROOT, TempRepo } from '../helpers/repo.js';

/**
 * Helpers of the reliability tests: the real CLI run asynchronously (so
 * tests of one file can run side by side and a test can race two commands),
 * repositories copied from templates built once, and what a crash must
 * never leave behind.
 */
export const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function tuneAsync(repo: TempRepo, args: string[], extraEnv: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: repo.dir,
      env: { ...process.env, ...repo.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs the CLI and fails loudly unless it exits 0. */
export async function tuneOk(repo: TempRepo, args: string[], extraEnv: Record<string, string> = {}): Promise<Ran> {
  const r = await tuneAsync(repo, args, extraEnv);
  if (r.code !== 0) throw new Error(`git tune ${args.join(' ')} exited ${r.code ?? r.signal}\n${r.stderr}\n${r.stdout}`);
  return r;
}

/** A new repository holding a copy of `template`'s files and .git. */
export function cloneRepo(template: TempRepo, prefix = 'git-tune-rel-'): TempRepo {
  const copy = new TempRepo(prefix);
  cpSync(template.dir, copy.dir, { recursive: true, verbatimSymlinks: true });
  return copy;
}

export const yamlCases = (cases: Array<Record<string, unknown>>): string => cases.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n';

export const plainCase = (id: string, extra: Record<string, unknown> = {}) => ({
  id, class: 'c', input: id, checks: [{ type: 'contains', value: 'politely' }], ...extra,
});

/** A repository with a tuning `desk` over `cases`, selected and (unless told) planned: all cases in batch 1. */
export async function plannedRepo(cases: Array<Record<string, unknown>>, opts: { plan?: boolean; config?: Array<[string, string]> } = {}): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
  repo.write({ 'cases.yaml': yamlCases(cases) });
  await tuneOk(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml']);
  for (const [k, v] of [['minBatch', String(cases.length)], ['maxBatch', String(Math.max(10, cases.length))], ...(opts.config ?? [])] as Array<[string, string]>) {
    await tuneOk(repo, ['config', 'set', k, v]);
  }
  await tuneOk(repo, ['select']);
  if (opts.plan !== false) await tuneOk(repo, ['batch']);
  return repo;
}

/** Subject and trailers of each first-parent commit in (from, to], oldest first. */
export function stepsBetween(repo: TempRepo, from: string | null, to: string | null): string[] {
  if (to === null) return [];
  const range = from ? `${from}..${to}` : to;
  return repo.git('log', '--first-parent', '--reverse', '--format=%s%n%(trailers)%x00', range).split('\x00').map((s) => s.trim()).filter(Boolean);
}

export function revOrNull(repo: TempRepo, ref: string): string | null {
  try {
    return repo.git('rev-parse', '--verify', '-q', ref).trim() || null;
  } catch {
    return null;
  }
}

/** `git fsck --strict` exits 0 and reports no error (dangling objects of a step that never landed are fine). */
export function fsckProblems(repo: TempRepo): string {
  try {
    const out = repo.git('fsck', '--strict', '--no-dangling', '--no-progress');
    return out.split('\n').filter((l) => /error|missing|broken|bad/i.test(l)).join('\n');
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
}

/** Lock files, journals and run caches a finished command must not leave. */
export function leftovers(repo: TempRepo): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, name.name);
      if (name.isDirectory()) walk(full);
      else if (name.name.endsWith('.lock')) out.push(path.relative(repo.dir, full));
    }
  };
  walk(repo.path('.git/refs'));
  if (existsSync(repo.path('.git/index.lock'))) out.push('.git/index.lock');
  const tune = repo.path('.git/tune');
  for (const name of existsSync(tune) ? readdirSync(tune) : []) {
    if (name === '.locks') {
      for (const note of readdirSync(path.join(tune, name))) out.push(`.git/tune/.locks/${note}`);
      continue;
    }
    for (const f of ['lock', 'pending-step.json']) if (existsSync(path.join(tune, name, f))) out.push(`.git/tune/${name}/${f}`);
    const runs = path.join(tune, name, 'runs');
    for (const run of existsSync(runs) ? readdirSync(runs) : []) out.push(`.git/tune/${name}/runs/${run}`);
  }
  return out;
}

/** A `finetune/` folder the folder method leaves after one graded run (SPEC 10), inside the repository. */
export function writeFinetuneFolder(repo: TempRepo): string {
  const root = repo.path('finetune');
  const cases = ['c01', 'c02', 'c03'].map((id) => ({ id, class: 'billing', input: `question ${id}` }));
  const files: Record<string, unknown> = {
    'dataset.json': cases,
    'config.json': { minBatch: 2, maxBatch: 4, recheck: 1, seed: 7, prose: ['agents/**/*.md'], runner: 'node agent.js' },
    'selection.json': ['c01', 'c02', 'c03'],
    'runs/batch01-nomem-run1/cases.json': ['c01', 'c02'],
    'runs/batch01-nomem-run1/plan.json': { batch: 1, size: 2, why: 'batch 1 takes minBatch: 2', kind: 'new', new: ['c01', 'c02'], recheck: [] },
    'runs/batch01-nomem-run1/batch/batch.json': {
      concurrency: 4,
      results: [
        { id: 'c01', right: true, answer: 'a', usage: [{ model: 'm', inputTokens: 100, outputTokens: 20, costUsd: 0.001 }], llmCalls: 2 },
        { id: 'c02', right: false, answer: 'b', usage: [{ model: 'm', inputTokens: 100, outputTokens: 20, costUsd: 0.001 }], llmCalls: 2 },
      ],
    },
  };
  for (const [file, value] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), `${JSON.stringify(value, null, 2)}\n`);
  }
  writeFileSync(path.join(root, 'runs/batch01-nomem-run1/findings.md'), '# Findings\n\n## MIXED\n\n| case | right |\n| --- | --- |\n| c01 | yes |\n| c02 | no |\n');
  return root;
}
