import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tuneAsync, type CliResult } from '../helpers/cli.js';
import { processesFor, sameGroupAlive, recordedGroups, signalGroup, sleep, startGroup, waitUntil } from '../helpers/group.js';
import { fsckProblems, type TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits } from '../helpers/tuning.js';

/**
 * Ctrl-C as a terminal sends it: SIGINT to the whole foreground process
 * group, once or twice (an impatient user). git-tune leads its group here
 * (spawned detached) and its runners, judge and editor run in groups of
 * their own, so only git-tune gets the signal and decides: once, running
 * cases finish and are kept (exit 130); twice, they are killed and leave no
 * result (never a VOID "out of memory"), and the next `auto` carries on to
 * done with nothing recorded twice. Also `git tune stop --now`, a SIGKILL of
 * the group (the orphaned runners are ended by the next auto) and git's lock
 * files: a live holder is waited for, a dead git-tune's is removed.
 */
// Each test drives the example agent to done (14 steps) once or twice; a loaded 2-core machine needs minutes.
const TIMEOUT = 300_000;
const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

// A judge that takes SLOW_JUDGE_MS before it judges (only the auto that sets it is slow).
const SLOW_JUDGE = path.join(os.tmpdir(), 'git-tune-signals-slow-judge.mjs');
writeFileSync(SLOW_JUDGE, `const ms = Number(process.env.SLOW_JUDGE_MS ?? 0);
if (ms > 0) await new Promise((r) => setTimeout(r, ms));
await import(new URL(process.argv[2], 'file://' + process.cwd() + '/').href);
`);

const SETTINGS = { limit: '2', minBatch: '2', concurrency: '2', maxRetries: '1', 'judge.command': `node ${SLOW_JUDGE} judge.mjs` };

function newRepo(): TempRepo {
  const repo = exampleRepo({ demo: SETTINGS }, 'git-tune-signals-');
  cleanup.push(() => repo.cleanup());
  return repo;
}

/** What a user would call wrong in the history: a VOID, a run recorded twice, a broken repository. */
function expectCleanHistory(repo: TempRepo): void {
  const steps = stepCommits(repo, 'tune/demo');
  const runs = steps.filter((s) => s.step === 'run').map((s) => s.run);
  expect(runs.length, runs.join(' ')).toBe(new Set(runs).size);
  const subjects = steps.map((s) => s.subject).join('\n');
  expect(subjects).not.toMatch(/VOID|out of memory/);
  expect(fsckProblems(repo)).toBe('');
}

async function autoToDone(repo: TempRepo): Promise<CliResult> {
  const r = await tuneAsync(repo, ['auto', '--plain']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/demo: done: /);
  expect(r.stderr).not.toMatch(/out of memory|VOID/);
  return r;
}

const runners = (repo: TempRepo) => recordedGroups(repo, 'demo').filter((g) => g.command.includes('agent.mjs'));
const judges = (repo: TempRepo) => recordedGroups(repo, 'demo').filter((g) => g.command.includes(SLOW_JUDGE));
const caseFiles = (repo: TempRepo) => {
  const runs = repo.path('.git', 'tune', 'demo', 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs).flatMap((run) => {
    const dir = path.join(runs, run, 'cases');
    return existsSync(dir) ? readdirSync(dir).map((f) => `${run}/${f}`) : [];
  });
};

describe.concurrent('Ctrl-C and kills, as a terminal sends them', () => {
  it('Ctrl-C twice while cases run: the cases are killed and leave no result, never VOID; the next auto resumes the run to done', async () => {
    const repo = newRepo();
    const auto = startGroup(repo, ['auto', '--plain'], { EXAMPLE_DELAY_MS: '60000' });
    await waitUntil(() => runners(repo).length === 2, 60_000, 'two runners');
    const groups = runners(repo);
    signalGroup(auto.pgid, 'SIGINT');
    await sleep(200);
    signalGroup(auto.pgid, 'SIGINT');
    const r = await auto.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).not.toMatch(/out of memory|VOID/);
    for (const g of groups) expect(sameGroupAlive(g)).toBe(false);
    expect(caseFiles(repo)).toEqual([]); // killed on request: nothing kept
    const next = await tuneAsync(repo, ['next', '--json']);
    expect(JSON.parse(next.stdout).kind, next.stdout).toBe('resume');
    await autoToDone(repo);
    expectCleanHistory(repo);
  }, TIMEOUT);

  it('Ctrl-C once while cases run: they finish and are kept (exit 130); the next auto does not run them again', async () => {
    const repo = newRepo();
    const auto = startGroup(repo, ['auto', '--plain'], { EXAMPLE_DELAY_MS: '2500' });
    await waitUntil(() => runners(repo).length === 2, 60_000, 'two runners');
    signalGroup(auto.pgid, 'SIGINT');
    const r = await auto.done;
    expect(r.code, r.stderr).toBe(130);
    // Both running cases finished and are kept. Both are wrong on a first answer, so their repeats (noise.repeats)
    // are due before the run commit; after Ctrl-C none starts, so the run is not recorded yet (and not VOID).
    expect(caseFiles(repo).sort()).toEqual(['batch01-nomem-run1/accounts-security-plan.json', 'batch01-nomem-run1/billing-payment-plan.json']);
    expect(r.stderr).toMatch(/re-running 2 cases up to \d+ times before it decides/);
    expect(stepCommits(repo, 'tune/demo').filter((c) => c.step === 'run').map((c) => c.run)).toEqual([]);
    await autoToDone(repo);
    expectCleanHistory(repo);
  }, TIMEOUT);

  it('Ctrl-C twice while the judge runs: no grade is recorded from a killed judge; the next auto grades to done', async () => {
    const repo = newRepo();
    const auto = startGroup(repo, ['auto', '--plain'], { SLOW_JUDGE_MS: '60000' });
    // The grade asks the judge about both cases at once (concurrency 2): one judge running is enough, two are fine.
    await waitUntil(() => judges(repo).length >= 1, 90_000, 'the judge').catch(async (err: Error) => {
      // What auto did instead, for the report.
      signalGroup(auto.pgid, 'SIGKILL');
      const r = await auto.done;
      throw new Error(`${err.message}; auto (exit ${r.code}) said: ${r.stdout.slice(-1500)}\n${r.stderr.slice(-1500)}`);
    });
    const before = stepCommits(repo, 'tune/demo').length;
    signalGroup(auto.pgid, 'SIGINT');
    await sleep(200);
    signalGroup(auto.pgid, 'SIGINT');
    const r = await auto.done;
    expect(r.code, r.stderr).toBe(130);
    const steps = stepCommits(repo, 'tune/demo');
    expect(steps.slice(before).filter((c) => c.step === 'grade').map((c) => c.subject)).toEqual([]);
    await autoToDone(repo);
    expectCleanHistory(repo);
  }, TIMEOUT);

  it('Ctrl-C twice during a commit: the commit lands whole, auto exits 130 after it, the next auto reaches done', async () => {
    const repo = newRepo();
    const pause = path.join(repo.dir, '..', `${path.basename(repo.dir)}.pause`);
    cleanup.push(() => rmSync(pause, { force: true }));
    const auto = startGroup(repo, ['auto', '--plain'], { GIT_TUNE_PAUSE_AT: 'grade:after-objects', GIT_TUNE_PAUSE_FILE: pause });
    await waitUntil(() => existsSync(pause), 90_000, 'the pause inside the grade commit');
    signalGroup(auto.pgid, 'SIGINT');
    await sleep(200);
    signalGroup(auto.pgid, 'SIGINT');
    await sleep(100);
    rmSync(pause);
    const r = await auto.done;
    expect(r.code, r.stderr).toBe(130);
    expect(stepCommits(repo, 'tune/demo').at(-1)!.step).toBe('grade');
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    await autoToDone(repo);
    expectCleanHistory(repo);
  }, TIMEOUT);

  it('git tune stop --now kills the running cases (not kept, not VOID); auto stops (exit 0) and the next one resumes to done', async () => {
    const repo = newRepo();
    const auto = startGroup(repo, ['auto', '--plain'], { EXAMPLE_DELAY_MS: '60000' });
    await waitUntil(() => runners(repo).length === 2, 60_000, 'two runners');
    const stop = await tuneAsync(repo, ['stop', '--now']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toMatch(/killed and not kept/);
    const r = await auto.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/stopped on request/);
    expect(caseFiles(repo)).toEqual([]);
    await autoToDone(repo);
    expectCleanHistory(repo);
  }, TIMEOUT);

  it('SIGKILL of the whole group: the runners (own groups) outlive it; the next auto ends them before it writes, and reaches done', async () => {
    const repo = newRepo();
    const auto = startGroup(repo, ['auto', '--plain'], { EXAMPLE_DELAY_MS: '60000' });
    await waitUntil(() => runners(repo).length === 2, 60_000, 'two runners');
    const orphans = runners(repo);
    signalGroup(auto.pgid, 'SIGKILL');
    await auto.done;
    await sleep(100);
    for (const g of orphans) expect(sameGroupAlive(g)).toBe(true); // not in the killed group: still running
    const next = startGroup(repo, ['auto', '--plain']);
    // Ended at the next auto's start (they would run a minute on their own).
    await waitUntil(() => orphans.every((g) => !sameGroupAlive(g)), 15_000, 'the orphaned runners to be ended');
    const r = await next.done;
    expect(r.code, r.stderr).toBe(0);
    expect(processesFor(repo.dir)).toEqual([]);
    expectCleanHistory(repo);
  }, TIMEOUT);
});

describe.concurrent('git lock files', () => {
  it('a ref lock held by a live process is waited for (core.filesRefLockTimeout); one a killed git-tune left is removed, saying so', async () => {
    const repo = newRepo();
    repo.git('config', 'core.filesRefLockTimeout', '3000');
    const lock = repo.path('.git', 'refs', 'heads', 'tune', 'demo.lock');
    // A live holder: the lock goes after 600 ms, within the 3 s git waits.
    writeFileSync(lock, '');
    const released = sleep(600).then(() => rmSync(lock, { force: true }));
    const select = await tuneAsync(repo, ['select']);
    await released;
    expect(select.code, select.stderr).toBe(0);

    // A killed git-tune: its tool lock names a dead process, and the ref lock (no note) was made while it held it.
    const dead = startGroup(repo, ['--version']);
    await dead.done;
    const since = new Date(Date.now() - 5000).toISOString();
    mkdirSync(repo.path('.git', 'tune', 'demo'), { recursive: true });
    writeFileSync(repo.path('.git', 'tune', 'demo', 'lock'), JSON.stringify({ pid: dead.pgid, start: '1', host: os.hostname(), command: 'git tune auto', since }));
    writeFileSync(lock, '');
    const batch = await tuneAsync(repo, ['batch']);
    expect(batch.code, batch.stderr).toBe(0);
    expect(batch.stderr).toMatch(/removed .*demo\.lock: left by git tune auto \(pid \d+\), which was killed/);
    expect(existsSync(lock)).toBe(false);

    // Nobody accounts for it: it stays, and the error says how to remove it.
    writeFileSync(lock, '');
    const run = await tuneAsync(repo, ['run'], { EXAMPLE_DELAY_MS: '0' });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toMatch(/remove the stale lock: rm /);
    expect(existsSync(lock)).toBe(true);
  }, TIMEOUT);
});
