import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PlannedCommit } from '../../src/app/plan.js';
import { tuneInProcess } from '../helpers/in-process.js';
import { TempRepo } from '../helpers/repo.js';
import { RUNNER, RUNNER_CASES } from '../helpers/tuning.js';

/**
 * A dry run is the plan the real run applies (src/app/plan.ts): for each
 * command below, `--dry-run --json` first, then the command itself, and the
 * commits it wrote are the ones the plan printed: subject, whole message
 * (trailers and seal included), every file, and the run tags, as native git
 * sees them.
 */

const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup.splice(0)) c();
});

async function ok(repo: TempRepo, args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await tuneInProcess(repo, args, env);
  expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}\n${r.stdout}`).toBe(0);
  return r.stdout;
}

async function planOf(repo: TempRepo, args: string[]): Promise<PlannedCommit[]> {
  return (JSON.parse(await ok(repo, [...args, '--dry-run', '--json'])) as { commits: PlannedCommit[] }).commits;
}

const lines = (text: string) => text.split('\n').filter(Boolean);

/** The commits of `range` as a plan describes them, read back with native git. */
function writtenIn(repo: TempRepo, range: string): PlannedCommit[] {
  return lines(repo.git('rev-list', '--reverse', range)).map((id) => ({
    subject: repo.git('log', '-1', '--format=%s', id).trimEnd(),
    message: repo.git('log', '-1', '--format=%B', id).trimEnd(),
    files: lines(repo.git('diff-tree', '-r', '--root', '--no-commit-id', '--name-status', id))
      .map((l) => l.split('\t'))
      .map(([status, file]) => ({ path: file!, deleted: status === 'D' }))
      .sort((a, b) => a.path.localeCompare(b.path)),
    tags: lines(repo.git('tag', '--points-at', id, '-l', 'tune/*')).sort(),
  }));
}

/** A plan as `writtenIn` reads commits back: messages without the final newline, files and tags sorted. */
const asWritten = (plan: readonly PlannedCommit[]): PlannedCommit[] => plan.map((c) => ({
  subject: c.subject,
  message: c.message.trimEnd(),
  files: [...c.files].sort((a, b) => a.path.localeCompare(b.path)),
  tags: [...c.tags].sort(),
}));

/** `args --dry-run`, then `args`: the commits written are the plan. */
async function appliesItsPlan(repo: TempRepo, args: string[], env: Record<string, string> = {}): Promise<PlannedCommit[]> {
  const refs = () => repo.git('for-each-ref', '--format=%(refname) %(objectname)');
  const untouched = refs();
  const plan = await planOf(repo, args);
  expect(refs(), `git tune ${args.join(' ')} --dry-run wrote`).toBe(untouched);
  expect(plan.length, `git tune ${args.join(' ')} --dry-run planned no commit`).toBeGreaterThan(0);
  const before = repo.git('rev-parse', 'HEAD').trim();
  await ok(repo, args, env);
  expect(writtenIn(repo, `${before}..HEAD`), `git tune ${args.join(' ')} wrote other commits than its dry run printed`).toEqual(asWritten(plan));
  return plan;
}

/** A project with its prose and cases.yaml committed, and the env that has the runner fixture count its starts in a scratch file. */
function withCases(prose: string): { repo: TempRepo; env: Record<string, string> } {
  const repo = TempRepo.create({ 'agents/prompt.md': prose });
  cleanup.push(() => repo.cleanup());
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'git-tune-applies-'));
  cleanup.push(() => rmSync(scratch, { recursive: true, force: true }));
  repo.write({ 'cases.yaml': RUNNER_CASES.map((c) => `- ${JSON.stringify(c)}`).join('\n') + '\n' });
  repo.git('add', 'cases.yaml');
  repo.git('commit', '-q', '-m', 'the cases');
  return { repo, env: { TEST_INVOCATIONS: path.join(scratch, 'starts.txt') } };
}

describe('a real run writes the commits its dry run printed', () => {
  it('dataset import, config set, grade, difficult add, edit, revert', { timeout: 120_000 }, async () => {
    const { repo, env } = withCases('Answer politely.\n');
    await ok(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--no-hooks']);

    await appliesItsPlan(repo, ['dataset', 'import', 'cases.yaml']);
    await appliesItsPlan(repo, ['config', 'set', 'maxBatch', '8']);
    await ok(repo, ['select']);
    await ok(repo, ['batch']);
    await ok(repo, ['run'], env);
    await ok(repo, ['grade', '--draft']);
    const grade = await appliesItsPlan(repo, ['grade']);
    expect(grade.at(-1)!.files.map((f) => f.path)).toContain('.tune/desk/runs/batch01-nomem-run1/findings.md');
    await appliesItsPlan(repo, ['difficult', 'add', 'tech-reset-02', '--why', 'wrong', '--note', 'asks for a link']);
    repo.write({
      'agents/prompt.md': 'Answer politely. Refunds within 30 days. Send a reset link.\n',
      '.tune/desk/runs/batch01-nomem-run1/changes.md': '# Changes\n\nSay the refund window and the reset link.\n',
    });
    await appliesItsPlan(repo, ['edit']);
    const revert = await appliesItsPlan(repo, ['revert']);
    expect(revert[0]!.files).toContainEqual({ path: 'agents/prompt.md', deleted: false });
  });

  it('final --ci --commit on a final check run but not graded: its grade planned (before, written by the dry run), then written as planned', { timeout: 120_000 }, async () => {
    const { repo, env } = withCases('Answer politely. Refunds within 30 days. Send a reset link.\n');
    await ok(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
    await ok(repo, ['select']);
    // Every case right from the start: each run is graded PASSED, until the final check is due.
    for (let i = 0; i < 12; i++) {
      const step = JSON.parse(await ok(repo, ['next', '--json'])) as { kind: string; command: string | null };
      if (step.kind === 'final') break;
      if (step.kind === 'grade') {
        await ok(repo, ['grade', '--draft']);
        await ok(repo, ['grade', '--verdict', 'PASSED']);
      } else await ok(repo, step.command!.split(' ').slice(2), env);
    }
    await ok(repo, ['final'], env);
    const plan = await appliesItsPlan(repo, ['final', '--ci', '--commit']);
    expect(plan.map((c) => c.message)).toEqual([expect.stringContaining('Tune-Step: grade')]);
  });

  it('import: the chain, its run tags, and the edits its reverts name', { timeout: 60_000 }, async () => {
    const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    cleanup.push(() => repo.cleanup());
    const folder = path.join(mkdtempSync(path.join(os.tmpdir(), 'git-tune-applies-')), 'finetune');
    cleanup.push(() => rmSync(path.dirname(folder), { recursive: true, force: true }));
    const write = (file: string, value: unknown) => {
      mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      writeFileSync(path.join(folder, file), typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
    };
    const cases = Array.from({ length: 4 }, (_, i) => ({ id: `c0${i + 1}`, class: i % 2 ? 'billing' : 'shipping', input: `question ${i + 1}` }));
    write('dataset.json', cases);
    write('config.json', { minBatch: 2, maxBatch: 4, recheck: 1, seed: 7, maxRetries: 2, maxRuns: 2, prose: ['agents/**/*.md'], runner: 'node agent.js' });
    write('selection.json', cases.map((c) => c.id));
    write('difficult.json', [{ id: 'c01', why: 'wrong', batch: 1, fixed: false, notes: 'the refund window is ambiguous' }]);
    // Run 1 leaves an edit, run 2 (the last of maxRuns) finds it unconfirmed: the import reverts both edits in its chain.
    const batch = (results: Record<string, boolean>) => ({
      concurrency: 2,
      results: Object.entries(results).map(([id, right]) => ({ id, right, answer: `answer to ${id}`, usage: [{ model: 'm', inputTokens: 100, outputTokens: 20, costUsd: 0.001 }], llmCalls: 2 })),
    });
    for (const [run, changes] of [['batch01-nomem-run1', '# Changes\n\n**Aims:** c01\n'], ['batch01-nomem-run2', '# Changes\n\ntried once more\n']] as const) {
      write(`runs/${run}/cases.json`, ['c03', 'c01']);
      write(`runs/${run}/batch/batch.json`, batch({ c03: true, c01: false }));
      write(`runs/${run}/findings.md`, `# Findings\n\n## ${run.endsWith('1') ? 'MIXED' : 'PASSED'}\n\n## Cost review\n`);
      write(`runs/${run}/changes.md`, changes);
    }
    write('runs/batch01-nomem-run1/plan.json', { batch: 1, size: 2, why: 'batch 1 takes minBatch: 2', kind: 'new', new: ['c03', 'c01'], recheck: [] });

    const plan = await planOf(repo, ['import', folder]);
    const base = repo.git('rev-parse', 'HEAD').trim();
    await ok(repo, ['import', folder]);
    const written = writtenIn(repo, `${base}..tune/finetune`);
    expect(written.map((c) => c.subject)).toEqual(plan.map((c) => c.subject));
    expect(plan.filter((c) => c.message.includes('Tune-Step: revert'))).toHaveLength(2);
    // A revert names an edit of the chain by its place in the plan: written, by its commit id (and sealed with it).
    const ids = lines(repo.git('rev-list', '--reverse', `${base}..tune/finetune`));
    const placed = (i: number) => plan[i]!.message.includes(' of the plan>');
    const unsealed = (message: string) => message.replace(/\nTune-Seal: .*$/, '');
    const named = asWritten(plan).map((c) => ({ ...c, message: c.message.replace(/<commit (\d+) of the plan>/g, (_, n: string) => ids[Number(n) - 1]!) }));
    expect(written.map((c, i) => (placed(i) ? unsealed(c.message) : c.message))).toEqual(named.map((c, i) => (placed(i) ? unsealed(c.message) : c.message)));
    expect(written.map((c) => c.tags)).toEqual(named.map((c) => c.tags));
    expect(written.flatMap((c) => c.tags)).toEqual(['tune/finetune/batch01-nomem-run1', 'tune/finetune/batch01-nomem-run2']);
    // README.md and USAGE.md join the last commit, rendered from the written chain (the plan's `then` says so).
    const reports = ['.tune/finetune/README.md', '.tune/finetune/USAGE.md'];
    expect(written.map((c, i) => c.files.filter((f) => i < written.length - 1 || !reports.includes(f.path)))).toEqual(named.map((c) => c.files));
  });
});
