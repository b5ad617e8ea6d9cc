import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { afterAll, describe, it } from 'vitest';
import { tuneAsync, tuneOk } from '../helpers/cli.js';
import { fsckProblems, leftovers, revOrNull, TempRepo } from '../helpers/repo.js';
import { plainCase, plannedRepo, stepsBetween } from '../helpers/tuning.js';

/**
 * Issue 9, races: two committing commands on one tuning at once never lose a
 * step. One wins; the other fails with exit 4 (`ref-moved`, or the tuning is
 * busy, naming who holds it) and a retry goes through. A lock left by a
 * process that died does not block forever, and a lock nobody can account
 * for is reported with the command that frees it.
 */
const repos: TempRepo[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const r of repos.splice(0)) r.cleanup();
});

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
let template: Promise<TempRepo> | null = null;
function fresh(): Promise<TempRepo> {
  template ??= plannedRepo(IDS.map((id) => plainCase(id)), { config: [['concurrency', '1']] }).then((t) => {
    repos.push(t);
    return t;
  });
  return template.then((t) => {
    const repo = TempRepo.copyOf(t);
    repos.push(repo);
    return repo;
  });
}

const BRANCH = 'refs/heads/tune/desk';
export const RACES = { rounds: 5 };

/** A pid no process has any more. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

function liveProcess(): ChildProcess {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

function holder(pid: number, command: string) {
  return JSON.stringify({ pid, start: null, host: os.hostname(), command, since: new Date().toISOString() });
}

/** A git lock file as a git-tune process would leave it: empty, with its note beside it. */
function gitTuneLock(repo: TempRepo, lock: string, pid: number): void {
  writeFileSync(repo.path('.git', lock), '');
  const st = statSync(repo.path('.git', lock));
  mkdirSync(repo.path('.git/tune/.locks'), { recursive: true });
  writeFileSync(repo.path('.git/tune/.locks', `${lock.split('/').join('%')}.owner`),
    JSON.stringify({ ...JSON.parse(holder(pid, 'git tune grade')), ino: st.ino, mtimeMs: st.mtimeMs }));
}

describe.concurrent('two committing commands at once', () => {
  it(`two difficult adds at once, ${RACES.rounds} rounds: one wins, the other exits 4 and its retry goes through; no step is lost`, async ({ expect }) => {
    const repo = await fresh();
    const start = revOrNull(repo, BRANCH);
    let losers = 0;
    for (let round = 0; round < RACES.rounds; round++) {
      const pair = [IDS[2 * round]!, IDS[2 * round + 1]!];
      const runs = await Promise.all(pair.map((id) => tuneAsync(repo, ['difficult', 'add', id, '--why', 'flaky'])));
      expect(runs.some((r) => r.code === 0), runs.map((r) => r.stderr).join('\n')).toBe(true);
      for (const [i, r] of runs.entries()) {
        if (r.code === 0) continue;
        losers++;
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toMatch(/moved while this command ran|is busy/);
        expect(r.stderr).toMatch(/\nfix: /);
        await tuneOk(repo, ['difficult', 'add', pair[i]!, '--why', 'flaky']);
      }
    }
    const steps = stepsBetween(repo, start, revOrNull(repo, BRANCH));
    expect(steps).toHaveLength(IDS.length);
    for (const id of IDS) expect(steps.filter((s) => s.includes(`Tune-Difficult: add ${id} flaky`))).toHaveLength(1);
    const list = JSON.parse(readFileSync(repo.path('.tune/desk/difficult.json'), 'utf8'));
    expect(JSON.stringify(list)).toContain('"j"');
    expect(repo.git('status', '--porcelain')).toBe('?? cases.yaml\n');
    expect(fsckProblems(repo)).toBe('');
    expect(leftovers(repo)).toEqual([]);
    // On two cores the second command usually loads after the first commits; either way nothing is lost.
    expect(losers).toBeGreaterThanOrEqual(0);
  });

  it('a difficult add, a config change and a second run while a run is running: each told the tuning is busy and by whom; retried after, nothing lost', async ({ expect }) => {
    const repo = await fresh();
    const invocations = repo.path('invocations.txt');
    const start = revOrNull(repo, BRANCH)!;
    const running = tuneAsync(repo, ['run'], { TEST_SLEEP_MS: '700', TEST_INVOCATIONS: invocations });
    const deadline = Date.now() + 30_000;
    while (!existsSync(repo.path('.git/tune/desk/lock')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [difficult, config, second] = await Promise.all([
      tuneAsync(repo, ['difficult', 'add', 'a', '--why', 'flaky']),
      tuneAsync(repo, ['config', 'set', 'seed', '11']),
      tuneAsync(repo, ['run'], { TEST_INVOCATIONS: invocations }),
    ]);
    for (const r of [difficult, config, second]) {
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/tuning desk is busy: git tune run \(pid \d+/);
      expect(r.stderr).toMatch(/fix: wait for it to finish/);
    }
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    await tuneOk(repo, ['config', 'set', 'seed', '11']);
    const subjects = stepsBetween(repo, start, revOrNull(repo, BRANCH)).map((s) => s.split('\n')[0]);
    expect(subjects).toEqual([
      expect.stringMatching(/start batch01-nomem-run1/),
      expect.stringMatching(/batch01-nomem-run1: 10\/10 right/),
      expect.stringMatching(/difficult/),
      expect.stringMatching(/config seed = 11/),
    ]);
    // The second run never started a case: each ran once.
    expect(readFileSync(invocations, 'utf8').trim().split('\n').sort()).toEqual(IDS);
    expect(fsckProblems(repo)).toBe('');
    expect(leftovers(repo)).toEqual([]);
  });
});

describe.concurrent('locks left behind', () => {
  it("a dead git-tune's tool lock is taken over", async ({ expect }) => {
    const repo = await fresh();
    writeFileSync(repo.path('.git/tune/desk/lock'), holder(deadPid(), 'git tune run'));
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(leftovers(repo)).toEqual([]);
  });

  it("a live git-tune's tool lock is never taken: exit 4 naming it; once it is gone the step goes through", async ({ expect }) => {
    const repo = await fresh();
    const live = liveProcess();
    writeFileSync(repo.path('.git/tune/desk/lock'), holder(live.pid!, 'git tune run'));
    const tip = revOrNull(repo, BRANCH);
    const r = await tuneAsync(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`tuning desk is busy: git tune run (pid ${live.pid}`);
    expect(r.stderr).toContain(`kill ${live.pid}`);
    expect(r.stderr).not.toContain('rm ');
    expect(revOrNull(repo, BRANCH)).toBe(tip);
    live.kill('SIGKILL');
    await new Promise((resolve) => live.on('exit', resolve));
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(leftovers(repo)).toEqual([]);
  });

  it("index.lock and the branch's .lock a dead git-tune left are removed; native git is unblocked too", async ({ expect }) => {
    const repo = await fresh();
    gitTuneLock(repo, 'index.lock', deadPid());
    gitTuneLock(repo, 'refs/heads/tune/desk.lock', deadPid());
    expect(() => repo.git('commit', '--allow-empty', '-q', '-m', 'blocked')).toThrow(/index\.lock/);
    const status = await tuneOk(repo, ['status']);
    expect(status.stdout).toContain('lock files left by a git-tune that was killed were removed: .git/index.lock, .git/refs/heads/tune/desk.lock');
    expect(leftovers(repo)).toEqual([]);
    await tuneOk(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    repo.git('commit', '--allow-empty', '-q', '-m', 'native git works again');
  });

  it("a git lock file nobody accounts for is reported with the rm that frees it; one a live git-tune holds, without it", async ({ expect }) => {
    const repo = await fresh();
    writeFileSync(repo.path('.git/index.lock'), ''); // as native git leaves it
    const tip = revOrNull(repo, BRANCH);
    const r = await tuneAsync(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('the index is locked by another git process');
    expect(r.stderr).toContain(`rm '${repo.path('.git/index.lock')}'`);
    expect(revOrNull(repo, BRANCH)).toBe(tip);

    const live = liveProcess();
    mkdirSync(repo.path('.git/tune/other'), { recursive: true });
    writeFileSync(repo.path('.git/tune/other/lock'), holder(live.pid!, 'git tune run'));
    const busy = await tuneAsync(repo, ['difficult', 'add', 'a', '--why', 'flaky']);
    expect(busy.code).toBe(4);
    expect(busy.stderr).toContain(`the index is locked by git tune run (pid ${live.pid}`);
    expect(busy.stderr).not.toContain('rm ');
    live.kill('SIGKILL');
  });
});
