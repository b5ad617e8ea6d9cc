import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { tuneInProcess } from '../helpers/in-process.js';
import { TempRepo } from '../helpers/repo.js';
import { RUNNER, RUNNER_CASES, yamlCases } from '../helpers/tuning.js';

/**
 * `--dry-run` on every command that writes steps: the step writer is told to
 * plan, so the command prints the commits it would write (subject, trailers,
 * files) and exits 0, and nothing changes: refs (branch, run tags, logs ref),
 * HEAD, index and working tree, as native git sees them. Where an outside
 * process (runner, judge) would start before the commit is known, the dry
 * run stops before it: the runner fixture counts its starts in a file.
 *
 * One tuning walked through the loop in this process (runCli, the sources),
 * a dry run before each real step: few processes, so the suite stays fast.
 */

const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup.splice(0)) c();
});

const tune = tuneInProcess;

async function ok(repo: TempRepo, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const r = await tune(repo, args, env);
  expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}\n${r.stdout}`).toBe(0);
  return r;
}

/** Everything a write could change, as native git reports it. */
function snapshot(repo: TempRepo): string {
  return [
    repo.git('for-each-ref', '--format=%(refname) %(objectname)'),
    repo.git('symbolic-ref', '-q', 'HEAD'),
    repo.git('rev-parse', 'HEAD'),
    repo.git('status', '--porcelain=v1', '--untracked-files=all'),
    repo.git('diff'),
    repo.git('diff', '--cached'),
  ].join('\n---\n');
}

interface Plan {
  dryRun: true;
  commits: Array<{ subject: string; message: string; files: Array<{ path: string; deleted: boolean }>; tags: string[] }>;
  then: string | null;
}

/** Runs `args --dry-run` twice (text, then --json): both exit 0 and leave the repository as it was. */
async function dryRun(repo: TempRepo, args: string[], env: Record<string, string> = {}): Promise<{ text: string; plan: Plan }> {
  const before = snapshot(repo);
  const text = await ok(repo, [...args, '--dry-run'], env);
  expect(snapshot(repo), `git tune ${args.join(' ')} --dry-run changed the repository`).toBe(before);
  const json = await ok(repo, [...args, '--dry-run', '--json'], env);
  expect(snapshot(repo)).toBe(before);
  const plan = JSON.parse(json.stdout) as Plan;
  expect(plan.dryRun).toBe(true);
  return { text: text.stdout, plan };
}

/** The runner fixture's cases committed as cases.yaml. */
function commitCases(repo: TempRepo): void {
  repo.write({ 'cases.yaml': yamlCases(RUNNER_CASES) });
  repo.git('add', 'cases.yaml');
  repo.git('commit', '-q', '-m', 'the cases');
}

/** A repository with a tuning desk over the runner fixture's cases, selected (no hooks); `prompt` is its prose. */
async function selectedDesk(prompt: string): Promise<TempRepo> {
  const repo = TempRepo.create({ 'agents/prompt.md': prompt });
  cleanup.push(() => repo.cleanup());
  commitCases(repo);
  await ok(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
  await ok(repo, ['select']);
  return repo;
}

const files = (plan: Plan, i = 0) => plan.commits[i]!.files.map((f) => f.path);

describe('--dry-run: the commits a step would write, and nothing written', () => {
  const repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
  cleanup.push(() => repo.cleanup());
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'git-tune-dry-'));
  cleanup.push(() => rmSync(scratch, { recursive: true, force: true }));
  // The runner fixture appends each case it starts here: a dry run starts none.
  const starts = path.join(scratch, 'starts.txt');
  const env = { TEST_INVOCATIONS: starts };
  const noStarts = () => expect(existsSync(starts), 'a runner started').toBe(false);
  const settle = () => {
    if (existsSync(starts)) unlinkSync(starts);
  };
  commitCases(repo);

  it('walks the loop, each step planned before it is taken', { timeout: 120_000 }, async () => {
    const initArgs = ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml'];

    // init in a repository with history: the init commit, and no branch, hooks or files made.
    const init = await dryRun(repo, initArgs);
    expect(init.text).toContain('tune(desk): init');
    expect(init.text).toContain('Tune-Step: init');
    expect(files(init.plan)).toEqual(expect.arrayContaining(['.tune/desk/config.yaml', '.tune/desk/README.md']));
    expect(init.plan.then).toContain('switch to tune/desk');
    expect(init.plan.then).toContain('import cases.yaml');
    expect(existsSync(repo.path('.git/hooks/post-commit'))).toBe(false);
    await ok(repo, [...initArgs, '--no-hooks']);
    // init --github alone on the tuning that exists would only install the workflows: files, said, not written.
    const github = await dryRun(repo, ['init', 'desk', '--github']);
    expect(github.plan.commits).toEqual([]);
    expect(github.plan.then).toContain('GitHub workflows');
    expect(existsSync(repo.path('.github'))).toBe(false);

    // dataset import: the dataset commit of the changed file.
    repo.write({ 'more.yaml': yamlCases([...RUNNER_CASES, { id: 'desk-bye', class: 'desk', input: 'Say goodbye', checks: [] }]) });
    repo.git('add', 'more.yaml');
    repo.git('commit', '-q', '-m', 'more cases');
    const dataset = await dryRun(repo, ['dataset', 'import', 'more.yaml']);
    expect(dataset.plan.commits[0]!.message).toContain('Tune-Step: dataset');

    // config set: the settings commit.
    const config = await dryRun(repo, ['config', 'set', 'maxBatch', '8']);
    expect(config.plan.commits.map((c) => c.subject)).toEqual(['tune(desk): config maxBatch = 8']);
    expect(files(config.plan)).toContain('.tune/desk/config.yaml');

    // select and batch keep their own dry runs: the selection and the plan, printed.
    const before = snapshot(repo);
    expect((await ok(repo, ['select', '--dry-run'])).stdout).toContain('selection: 3 of 3 cases');
    expect(snapshot(repo)).toBe(before);
    await ok(repo, ['select']);
    const batchBefore = snapshot(repo);
    expect((await ok(repo, ['batch', '--dry-run'])).stdout).toMatch(/^batch 1: 3 new \+ 0 recheck/);
    expect(snapshot(repo)).toBe(batchBefore);
    await ok(repo, ['batch']);

    // auto: every step it takes starts a runner, judge or editor, or follows one: it says the first and stops.
    const auto = await dryRun(repo, ['auto'], env);
    expect(auto.plan.commits).toEqual([]);
    expect(auto.plan.then).toContain('git tune run');
    noStarts();

    // run: the run-start commit, then it stops before any runner starts.
    const run = await dryRun(repo, ['run'], env);
    expect(run.plan.commits[0]!.subject).toContain('start batch01-nomem-run1');
    expect(run.plan.commits[0]!.message).toContain('Tune-Step: run-start');
    expect(run.plan.then).toContain('start the runner');
    noStarts();
    await ok(repo, ['run'], env);
    expect(existsSync(starts)).toBe(true);
    settle();

    // grade with a judge to run: stops before the judge starts.
    const mark = path.join(scratch, 'judged.txt');
    await ok(repo, ['config', 'set', 'judge.command', JSON.stringify(['node', '-e', `require('fs').writeFileSync(${JSON.stringify(mark)}, 'judged')`])]);
    const judged = await dryRun(repo, ['grade', '--verdict', 'PROGRESS']);
    expect(judged.plan.commits).toEqual([]);
    expect(judged.plan.then).toContain('run the judge');
    expect(existsSync(mark), 'the judge ran').toBe(false);
    await ok(repo, ['config', 'set', 'judge', 'null']);

    // grade: the grade commit with its findings.
    await ok(repo, ['grade', '--draft']);
    const grade = await dryRun(repo, ['grade']);
    const gradeCommit = grade.plan.commits[grade.plan.commits.length - 1]!;
    expect(gradeCommit.message).toContain('Tune-Step: grade');
    expect(gradeCommit.files.map((f) => f.path)).toContain('.tune/desk/runs/batch01-nomem-run1/findings.md');
    await ok(repo, ['grade']);

    // difficult add: the list's commit.
    const difficult = await dryRun(repo, ['difficult', 'add', 'tech-reset-02', '--why', 'wrong']);
    expect(difficult.plan.commits[0]!.message).toContain('tech-reset-02');

    // edit: the prose and changes.md, left uncommitted in the working tree.
    repo.write({
      'agents/prompt.md': 'Answer politely. Refunds within 30 days. Send a reset link.\n',
      '.tune/desk/runs/batch01-nomem-run1/changes.md': '# Changes\n\nSay the refund window and the reset link.\n',
    });
    const edit = await dryRun(repo, ['edit']);
    expect(edit.plan.commits[0]!.message).toContain('Tune-Step: edit');
    expect(files(edit.plan)).toEqual(expect.arrayContaining(['agents/prompt.md', '.tune/desk/runs/batch01-nomem-run1/changes.md']));
    await ok(repo, ['edit']);

    // revert: the revert commit of the pending edit.
    const revert = await dryRun(repo, ['revert']);
    expect(revert.plan.commits).toHaveLength(1);
    expect(files(revert.plan)).toContain('agents/prompt.md');
    expect(revert.plan.commits[0]!.message).toContain('Tune-Step: revert');

    // Second run (the edit fixes every case), graded PASSED: the candidate is next.
    await ok(repo, ['run'], env);
    settle();
    await ok(repo, ['grade', '--draft']);
    await ok(repo, ['grade']);
    const next = JSON.parse((await ok(repo, ['next', '--json'])).stdout) as { kind: string };
    expect(next.kind).toBe('candidate');

    // memory candidate: the candidate commit.
    const candidate = await dryRun(repo, ['memory', 'candidate']);
    expect(candidate.plan.commits[0]!.message).toContain('Tune-Step: candidate');
  });

  it('final: the run-start commit of the final check, and no runner', { timeout: 60_000 }, async () => {
    // Not due yet on this tuning (the with-memory half comes first): refused as the real one is.
    const early = await tune(repo, ['final', '--dry-run']);
    expect(early.code).toBe(3);
    // A tuning whose every batch is behind it: the final check is due.
    const done = await selectedDesk('Answer politely. Refunds within 30 days. Send a reset link.\n');
    // Every case right from the start: each run is graded PASSED.
    let checkpoints = 0;
    for (let i = 0; i < 12; i++) {
      const step = JSON.parse((await ok(done, ['next', '--json'])).stdout) as { kind: string; command: string | null };
      if (step.kind === 'final') break;
      if (step.kind === 'checkpoint') {
        const checkpoint = await dryRun(done, ['memory', 'checkpoint']);
        expect(checkpoint.plan.commits[0]!.message).toContain('Tune-Step: checkpoint');
        checkpoints++;
      }
      if (step.kind === 'grade') {
        await ok(done, ['grade', '--draft']);
        await ok(done, ['grade', '--verdict', 'PASSED']);
      } else await ok(done, step.command!.split(' ').slice(2));
    }
    expect(checkpoints).toBe(1);
    const final = await dryRun(done, ['final'], env);
    expect(final.plan.commits[0]!.subject).toContain('final-check');
    expect(final.plan.then).toContain('start the runner');
    noStarts();
  });

  it('import: the planned history of the folder, and no branch', { timeout: 30_000 }, async () => {
    const target = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n' });
    cleanup.push(() => target.cleanup());
    const folder = path.join(scratch, 'finetune');
    const write = (file: string, value: unknown) => {
      mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
      writeFileSync(path.join(folder, file), `${JSON.stringify(value, null, 2)}\n`);
    };
    write('dataset.json', RUNNER_CASES.map(({ checks: _checks, ...c }) => c));
    write('config.json', { minBatch: 3, maxBatch: 3, recheck: 1, seed: 1, maxRetries: 2, maxRuns: 2, prose: ['agents/**/*.md'], runner: 'node agent.js' });
    write('selection.json', RUNNER_CASES.map((c) => c.id));
    const plan = await dryRun(target, ['import', folder]);
    const subjects = plan.plan.commits.map((c) => c.subject);
    expect(subjects[0]).toBe('tune(finetune): init');
    expect(plan.plan.commits.some((c) => c.message.includes('Tune-Step: select'))).toBe(true);
    expect(plan.plan.then).toContain('create tune/finetune');
    expect(target.git('for-each-ref', 'refs/heads/tune')).toBe('');
  });
});

describe('run --dry-run where a run tag is in the way', () => {
  it('says the tag would go aside and moves nothing; the real run moves it to refs/tune-abandoned', { timeout: 120_000 }, async () => {
    const repo = await selectedDesk('Answer politely.\n');
    await ok(repo, ['batch']);
    // A teammate's run of the same name, fetched but not merged: its tag is on a commit the branch does not hold.
    repo.git('switch', '-q', '-c', 'side');
    repo.git('commit', '-q', '--allow-empty', '-m', 'their run');
    const theirs = repo.git('rev-parse', 'HEAD').trim();
    repo.git('switch', '-q', 'tune/desk');
    repo.git('branch', '-q', '-D', 'side');
    repo.git('update-ref', 'refs/remotes/origin/tune/desk', theirs);
    repo.git('tag', 'tune/desk/batch01-nomem-run1', theirs);
    const refs = () => repo.git('for-each-ref', '--format=%(refname) %(objectname)');
    const before = refs();
    const dry = await ok(repo, ['run', '--dry-run', '--json']);
    expect((JSON.parse(dry.stdout) as Plan).then).toContain(
      'before the commit, the run tag tune/desk/batch01-nomem-run1 (on a commit the branch does not hold) goes aside to refs/tune-abandoned');
    expect(refs()).toBe(before);
    await ok(repo, ['run']);
    expect(repo.git('for-each-ref', '--format=%(objectname)', 'refs/tune-abandoned/desk/').trim().split('\n')).toContain(theirs);
    expect(repo.git('rev-parse', 'tune/desk/batch01-nomem-run1').trim()).not.toBe(theirs);
    expect(repo.fsck()).toBe('');
  });
});
