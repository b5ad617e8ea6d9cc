import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sealMessage } from '../../src/core/steps.js';
import { ROOT, tuneOk, tuneOkSync } from './cli.js';
import { TempRepo } from './repo.js';

/**
 * Tuning histories in real repositories: a tuning planned over fixture cases,
 * the example agent with its tunings, a PASSED grade written by native git,
 * the folder the folder method leaves; and the step commits read back with
 * native git.
 */
export const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
export const EXAMPLE = path.join(ROOT, 'templates/example');

/** Three cases the runner fixture (RUNNER) answers, one per class: right once the prose says what each check looks for. */
export const RUNNER_CASES = [
  { id: 'desk-hello', class: 'desk', input: 'Say hello to the customer', checks: [{ type: 'contains', value: 'politely' }] },
  { id: 'billing-refund-03', class: 'billing', input: 'Can I get a refund after 40 days?', checks: [{ type: 'contains', value: '30 days' }] },
  { id: 'tech-reset-02', class: 'tech', input: 'How do I reset my password?', checks: [{ type: 'contains', value: 'reset link' }] },
];

export const yamlCases = (cases: Array<Record<string, unknown>>): string => cases.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n';

/** A case test/fixtures/runner.mjs answers politely. */
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

export const EXAMPLE_INIT = ['--prose', 'agents/**/*.md', '--memory-policy', 'agents/memory-policy.md',
  '--runner', 'node agent.mjs', '--judge', 'node judge.mjs', '--editor', 'node editor.mjs', '--dataset', 'cases.yaml'];

/**
 * A repository holding the example agent, with tunings made by `git tune
 * init` and `config set`, the first one checked out. Built once per set of
 * tunings in a test file; each call gets its own copy (the same commits).
 */
export function exampleRepo(tunings: Record<string, Record<string, string>>, prefix = 'git-tune-example-'): TempRepo {
  return TempRepo.copyOf(template(`example ${JSON.stringify(tunings)}`, () => buildExampleRepo(tunings)), prefix);
}

const templates = new Map<string, TempRepo | Promise<TempRepo>>();
const made: TempRepo[] = [];

function kept(repo: TempRepo): TempRepo {
  if (made.length === 0) process.once('exit', () => made.forEach((t) => t.cleanup()));
  made.push(repo);
  return repo;
}

/**
 * A repository made once in this test file by `build` (removed when the
 * file's process ends), for tests that start from the same history: they
 * work in copies of it (TempRepo.copyOf), which hold the very commits a
 * rebuild would write.
 */
export function template(key: string, build: () => TempRepo): TempRepo {
  if (!templates.has(key)) templates.set(key, kept(build()));
  return templates.get(key) as TempRepo;
}

/** The same for a history the CLI builds asynchronously; tests running side by side wait for the one build. */
export function templateAsync(key: string, build: () => Promise<TempRepo>): Promise<TempRepo> {
  if (!templates.has(key)) templates.set(key, build().then(kept));
  return templates.get(key) as Promise<TempRepo>;
}

function buildExampleRepo(tunings: Record<string, Record<string, string>>): TempRepo {
  const repo = new TempRepo('git-tune-example-');
  repo.git('init', '-q', '-b', 'main');
  cpSync(EXAMPLE, repo.dir, { recursive: true });
  repo.git('add', '-A');
  repo.git('commit', '-q', '-m', 'the example agent');
  for (const [name, settings] of Object.entries(tunings)) {
    tuneOkSync(repo, ['init', name, ...EXAMPLE_INIT]);
    for (const [key, value] of Object.entries(settings)) tuneOkSync(repo, ['config', 'set', key, value]);
    repo.git('switch', '-q', 'main');
  }
  repo.git('switch', '-q', `tune/${Object.keys(tunings)[0]}`);
  return repo;
}

/**
 * A PASSED grade of `run` written by native git, sealed as the tool seals its
 * steps (the fold reads commit messages only, and trusts sealed steps only).
 */
export function passGrade(repo: TempRepo, run: string, tuning = 'desk'): void {
  const message = sealMessage(`tune(${tuning}): grade ${run}: PASSED\n\n${[`Tune-Tuning: ${tuning}`, 'Tune-Step: grade', `Tune-Run: ${run}`, 'Tune-Verdict: PASSED', 'Tune-Wrong: (none)', 'Tune-Review: yes'].join('\n')}\n`);
  repo.git('commit', '-q', '--allow-empty', '--cleanup=verbatim', '-m', message);
}

export interface StepCommit {
  oid: string;
  subject: string;
  step: string;
  run: string;
  verdict: string;
  aims: string;
}

/** A tuning branch's step commits, oldest first, as native git reads their trailers. */
export function stepCommits(repo: TempRepo, branch: string): StepCommit[] {
  const t = (key: string) => `%(trailers:key=${key},valueonly,separator=%x2c)`;
  const out = repo.git('log', '--first-parent', '--reverse', `--format=%H%x1f%s%x1f${t('Tune-Step')}%x1f${t('Tune-Run')}%x1f${t('Tune-Verdict')}%x1f${t('Tune-Aims')}%x1e`, branch);
  return out.split('\x1e').map((r) => r.trim()).filter(Boolean).map((r) => {
    const [oid, subject, step, run, verdict, aims] = r.split('\x1f').map((x) => x.trim());
    return { oid: oid!, subject: subject!, step: step!, run: run!, verdict: verdict!, aims: aims! };
  });
}

/** What a tuning did, leaving out the run-start commits a resumed run adds. */
export const story = (steps: StepCommit[]) => steps.filter((s) => s.step !== 'run-start').map((s) => `${s.step} ${s.run} ${s.verdict}`.trim());

/** Subject and trailers of each first-parent commit in (from, to], oldest first. */
export function stepsBetween(repo: TempRepo, from: string | null, to: string | null): string[] {
  if (to === null) return [];
  const range = from ? `${from}..${to}` : to;
  return repo.git('log', '--first-parent', '--reverse', '--format=%s%n%(trailers)%x00', range).split('\x00').map((s) => s.trim()).filter(Boolean);
}

/** A `finetune/` folder the folder method leaves after one graded run, inside the repository. */
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
