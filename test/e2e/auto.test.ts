import { existsSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startTune as start, tuneAsync, type CliResult } from '../helpers/cli.js';
import { readRef, type TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits, story, type StepCommit } from '../helpers/tuning.js';

/**
 * `git tune auto` on the example agent, through the real CLI: to `done`;
 * killed with SIGKILL (and stopped, and interrupted) at many points and
 * resumed to the same history; stopped by three VOID runs, by a downed
 * sandbox, and by the ceiling shared by `--all`.
 *
 * The tests run side by side (each in its own repository), and the kill
 * chain is compared with the uninterrupted run of the same tuning.
 */
const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
});

/** A repository holding the example agent, with tunings made by `git tune init` and `config set`. */
function exampleRepoOf(tunings: Record<string, Record<string, string>>): TempRepo {
  const repo = exampleRepo(tunings, 'git-tune-auto-');
  repos.push(repo);
  return repo;
}

/** The tuning branch's step commits, oldest first, as native git reads their trailers. */
const history = (repo: TempRepo, branch = 'tune/demo') => stepCommits(repo, branch);

const tags = (repo: TempRepo, name = 'demo') => repo.git('tag', '-l', `tune/${name}/*`).trim().split('\n').filter(Boolean);

const storedCases = (repo: TempRepo, run: string) => {
  const dir = repo.path('.git', 'tune', 'demo', 'runs', run, 'cases');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).length : 0;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls the branch until this auto has written a step and `ready` holds, then
 * waits for a step holding index.lock to finish it.
 */
async function waitFor(repo: TempRepo, ready: (steps: StepCommit[]) => boolean, running: Promise<CliResult>): Promise<boolean> {
  let ended = false;
  void running.then(() => (ended = true));
  const before = readRef(repo, 'refs/heads/tune/demo');
  let tip = before;
  let steps: StepCommit[] = [];
  while (!ended) {
    const now = readRef(repo, 'refs/heads/tune/demo');
    if (now !== tip) {
      tip = now;
      steps = history(repo);
    }
    if (tip !== before && ready(steps)) {
      for (let i = 0; i < 100 && existsSync(repo.path('.git', 'index.lock')); i++) await sleep(5);
      return true;
    }
    await sleep(15);
  }
  return false;
}

function checkHistory(repo: TempRepo): void {
  repo.fsck();
  expect(repo.git('status', '--porcelain').trim()).toBe('');
  const steps = history(repo);
  // Every run commit carries its tag, once; no run starts again once it finished.
  const runs = steps.filter((s) => s.step === 'run');
  expect(tags(repo).sort()).toEqual(runs.map((r) => `tune/demo/${r.run}`).sort());
  for (const r of runs) expect(repo.git('rev-parse', `tune/demo/${r.run}^{commit}`).trim()).toBe(r.oid);
  for (const [i, s] of steps.entries()) {
    if (s.step === 'run-start') expect(steps.slice(0, i).some((x) => x.step === 'run' && x.run === s.run), `${s.run} started after it finished`).toBe(false);
  }
}

/**
 * 10 cases (the tenth fails its own checks) in batches of 5 and 8, two at a
 * time; a difficult case is retried once before it is stuck.
 */
const LIMIT_10 = { limit: '10', minBatch: '5', concurrency: '2', maxRetries: '1' };

describe.concurrent('git tune auto', () => {
  let reference: Promise<{ repo: TempRepo; result: CliResult }> | null = null;
  /** One uninterrupted auto to done, shared by the tests that compare with it. */
  const uninterrupted = () => {
    reference ??= (async () => {
      const repo = exampleRepoOf({ demo: LIMIT_10 });
      return { repo, result: await tuneAsync(repo, ['auto']) };
    })();
    return reference;
  };

  it('drives the example agent to done: one grade per run, a case-only case listed, stdout only the result', async () => {
    const { repo, result } = await uninterrupted();
    expect(result.code, result.stderr).toBe(0);
    // The closing line says right / wrong / stuck with ids next to the verdict (docs/method.md#noise).
    expect(result.stdout).toMatch(/^demo: done: the final check is VERIFIED: the tuning is done \(\d+ steps, [\d,]+ tokens and \$\d+\.\d{4} spent by this auto\); VERIFIED: \d+ of \d+ right \(rate \d+%, 95% CI \d+–\d+%\); wrong: [^;]+; stuck: [^;\n]+\n$/);
    // Narration on stderr, once: auto's own step lines, not the commands' `next:` lines.
    expect(result.stderr).toContain('demo · step 1 · select: order the cases into the selection\n$ git tune select\n');
    expect(result.stderr).toMatch(/^\$ git tune edit$/m);
    expect(result.stderr).not.toMatch(/^\s*next: /m);
    expect(result.stderr).not.toContain('finish it (verdict heading');

    const steps = history(repo);
    const grades = steps.filter((s) => s.step === 'grade').map((s) => s.run);
    expect(new Set(grades).size).toBe(grades.length);
    expect(steps.filter((s) => s.step === 'run').map((s) => s.run)).toEqual(grades);
    // billing-invoice-hours fails its own checks (caseOnly): listed before its run is graded, never edited for, and
    // the batch passes with it wrong once the rest is fixed.
    const listed = steps.findIndex((s) => s.step === 'difficult');
    expect(steps[listed - 1]).toMatchObject({ step: 'run', run: 'batch02-nomem-run1' });
    expect(steps[listed + 1]).toMatchObject({ step: 'grade', run: 'batch02-nomem-run1', verdict: 'NO CHANGE' });
    expect(repo.git('show', '-s', '--format=%B', steps[listed]!.oid)).toMatch(/Tune-Difficult: add billing-invoice-hours wrong/);
    const edit = steps.find((s) => s.step === 'edit' && s.run === 'batch02-nomem-run1')!;
    const aims = repo.git('show', '-s', '--format=%(trailers:key=Tune-Aims,valueonly)', edit.oid);
    expect(aims).toContain('accounts-delete');
    expect(aims).not.toContain('billing-invoice-hours');
    expect(steps.find((s) => s.run === 'batch02-nomem-run2' && s.step === 'grade')).toMatchObject({ verdict: 'PASSED' });
    expect(steps[steps.length - 1]).toMatchObject({ step: 'grade', run: 'final-check', verdict: 'VERIFIED' });
    checkHistory(repo);

    // Again: nothing to do, nothing written.
    const tip = repo.git('rev-parse', 'tune/demo').trim();
    const again = await tuneAsync(repo, ['auto', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ tuning: 'demo', outcome: 'done', steps: [{ kind: 'done' }], exitCode: 0 });
    expect(repo.git('rev-parse', 'tune/demo').trim()).toBe(tip);
  }, 180_000);

  // Once in a full-suite run at load ~10, the second auto ended at its first step (mem-run) before the
  // next kill point, with nothing on stderr after the step line; never reproduced alone or 5-up (8 runs).
  // The message now carries its exit code, signal and stdout; one retry keeps CI from failing on it
  // until it is understood (named in the issue notes).
  it('killed with SIGKILL at eight points, stopped and interrupted, and resumed: the same history, no step twice', { retry: 1, timeout: 240_000 }, async () => {
    const repo = exampleRepoOf({ demo: LIMIT_10 });
    const has = (steps: StepCommit[], step: string, run?: string) => steps.some((s) => s.step === step && (run === undefined || s.run === run));
    const proseDirty = () => repo.git('status', '--porcelain', '--', 'agents').trim() !== '';
    type Point = { name: string; ready: (steps: StepCommit[]) => boolean; how: 'kill' | 'stop' | 'int' };
    const points: Point[] = [
      { name: 'mid-run, some cases kept', how: 'kill', ready: (s) => has(s, 'run-start', 'batch01-nomem-run1') && (storedCases(repo, 'batch01-nomem-run1') > 0 || has(s, 'run', 'batch01-nomem-run1')) },
      { name: 'between grade and edit', how: 'kill', ready: (s) => has(s, 'grade', 'batch01-nomem-run1') },
      { name: 'between run and grade', how: 'kill', ready: (s) => has(s, 'run', 'batch01-mem-run1') },
      { name: 'git tune stop after a plan', how: 'stop', ready: (s) => s.filter((x) => x.step === 'plan').length >= 2 },
      { name: 'between difficult add and grade', how: 'kill', ready: (s) => has(s, 'difficult') },
      { name: 'between the editor and its edit commit', how: 'kill', ready: (s) => has(s, 'grade', 'batch02-nomem-run1') && (proseDirty() || has(s, 'edit', 'batch02-nomem-run1')) },
      { name: 'Ctrl-C mid-run', how: 'int', ready: (s) => storedCases(repo, 'batch02-nomem-run2') > 0 || has(s, 'run', 'batch02-nomem-run2') },
      { name: 'after a candidate', how: 'kill', ready: (s) => s.filter((x) => x.step === 'candidate').length >= 2 },
      { name: 'after a checkpoint', how: 'kill', ready: (s) => s.filter((x) => x.step === 'checkpoint').length >= 2 },
      { name: 'mid-run of the final check', how: 'kill', ready: (s) => has(s, 'run-start', 'final-check') },
    ];
    const landed: string[] = [];
    for (const point of points) {
      const auto = start(repo, ['auto']);
      if (!(await waitFor(repo, point.ready, auto.done))) {
        { const end = await auto.done; throw new Error(`auto ended before ${point.name} (code ${end.code}, signal ${end.signal}): ${end.stdout.slice(-400)}\n${end.stderr.slice(-1500)}`); }
      }
      if (point.how === 'stop') expect((await tuneAsync(repo, ['stop'])).code).toBe(0);
      else auto.child.kill(point.how === 'kill' ? 'SIGKILL' : 'SIGINT');
      const end = await auto.done;
      const tip = history(repo).at(-1)!;
      landed.push(`${point.name}: ${tip.step} ${tip.run}`);
      if (point.how === 'kill') expect(end.signal, `${point.name}: ${end.stderr.slice(-500)}`).toBe('SIGKILL');
      if (point.how === 'stop') {
        expect(end.code, end.stderr).toBe(0);
        expect(end.stdout).toMatch(/^demo: stopped: stopped on request \(git tune stop\)/);
      }
      if (point.how === 'int') {
        expect(end.code, end.stderr).toBe(130);
        expect(end.stdout).toMatch(/^demo: interrupted: interrupted \(Ctrl-C\)/);
      }
    }
    // The interrupted run kept its finished cases: its resume ran only the others.
    const resumed = history(repo).find((s) => s.step === 'run-start' && s.run === 'batch02-nomem-run2' && s.subject.includes('resume'));
    expect(Number(/\((\d+) of 8 cases to run/.exec(resumed?.subject ?? '')?.[1])).toBeLessThan(8);

    const last = await tuneAsync(repo, ['auto']);
    expect(last.code, `${landed.join('\n')}\n${last.stderr.slice(-1500)}`).toBe(0);
    expect(last.stdout).toMatch(/^demo: done: the final check is VERIFIED/);
    checkHistory(repo);
    const { repo: ref } = await uninterrupted();
    expect(story(history(repo))).toEqual(story(history(ref)));
    expect(tags(repo)).toEqual(tags(ref));
    expect(repo.git('ls-tree', '-r', 'tune/demo', 'agents')).toBe(ref.git('ls-tree', '-r', 'tune/demo', 'agents'));
  });

  it('three VOID runs in a row of one batch and half stop auto, with the reason', async () => {
    const repo = exampleRepoOf({ demo: { limit: '3', concurrency: '16' } });
    const r = await tuneAsync(repo, ['auto'], { EXAMPLE_SIMULATE: 'oom@returns-condition' });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/^demo: stuck: three VOID runs in a row of batch 1 nomem \(batch01-nomem-run1 at concurrency 16, batch01-nomem-run2 at concurrency 8, batch01-nomem-run3 at concurrency 4\): 1 case void \(returns-condition: /);
    const steps = history(repo);
    expect(steps.filter((s) => s.step === 'run').map((s) => s.run)).toEqual(['batch01-nomem-run1', 'batch01-nomem-run2', 'batch01-nomem-run3']);
    expect(steps.filter((s) => s.step === 'grade')).toEqual([]);
    // Each re-run halved the concurrency, lowering the configured one.
    expect(steps.filter((s) => s.step === 'config').map((s) => s.subject)).toEqual([
      'tune(demo): config limit = 3', 'tune(demo): config concurrency = 16', 'tune(demo): config concurrency = 8', 'tune(demo): config concurrency = 4',
    ]);
    repo.fsck();
  }, 120_000);

  it('a runner whose sandbox is down stops auto at once (exit 5); next says resume', async () => {
    const repo = exampleRepoOf({ demo: { limit: '3', concurrency: '1' } });
    const r = await tuneAsync(repo, ['auto', '--json'], { EXAMPLE_SIMULATE: 'sandbox-down@accounts-security-plan' });
    expect(r.code, r.stderr).toBe(5);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ outcome: 'sandbox-down', exitCode: 5 });
    expect(result.message).toMatch(/^batch01-nomem-run1 did not finish: sandbox down: simulated: /);
    expect(result.steps.map((s: { kind: string }) => s.kind)).toEqual(['select', 'batch', 'run']);
    const tip = history(repo).at(-1)!;
    expect(tip).toMatchObject({ step: 'run-stop', run: 'batch01-nomem-run1' });
    expect(tip.subject).toContain('stopped after 0 of 3 cases');
    expect(JSON.parse(repo.tune(['next', '--json']).stdout)).toMatchObject({ kind: 'resume', run: 'batch01-nomem-run1' });
  }, 120_000);

  it('--all drives every configured tuning in turn under one shared ceiling, then a table', async () => {
    const repo = exampleRepoOf({ alpha: { limit: '3' }, beta: { limit: '3' } });
    repo.git('switch', '-q', 'main');
    // A tune/* branch without a config is left out, and said so.
    repo.git('branch', 'tune/gamma', 'main');
    const r = await tuneAsync(repo, ['auto', '--all', '--max-tokens', '60000']);
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^tuning +outcome +steps +tokens +cost +why$/);
    expect(lines[1]).toMatch(/^alpha +done +\d+ +[\d,]+ +\$[\d.]+ +the final check is VERIFIED: the tuning is done; VERIFIED: \d of 3 right \(rate \d+%, 95% CI \d+–\d+%\); wrong: none; stuck: [\w, -]+$/);
    expect(lines[2]).toMatch(/^beta +over budget +\d+ +[\d,]+ +\$[\d.]+ +the ceiling of this auto is spent: [\d,]+ of 60,000 tokens$/);
    expect(lines[3]).toMatch(/^total \(this auto\) +[\d,]+ +\$[\d.]+$/);
    expect(lines[4]).toBe('skipped tune/gamma: no config.yaml on the branch');
    expect(r.stderr).toContain('── tune/alpha\n');
    expect(r.stderr).toContain('── tune/beta\n');
    // Back where it started, the working tree clean; alpha is done, beta carries on from its history.
    expect(repo.git('branch', '--show-current').trim()).toBe('main');
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    expect(history(repo, 'tune/alpha').at(-1)).toMatchObject({ step: 'grade', run: 'final-check', verdict: 'VERIFIED' });
    expect(history(repo, 'tune/beta').some((s) => s.run === 'final-check')).toBe(false);

    // The ceiling is this auto's: a new one lets beta carry on from its history; alpha is done already.
    const json = await tuneAsync(repo, ['auto', '--all', '--json', '--max-cost-usd', '0.001']);
    expect(json.code, json.stderr).toBe(3);
    const all = JSON.parse(json.stdout);
    expect(all.tunings.map((t: { tuning: string; outcome: string }) => [t.tuning, t.outcome])).toEqual([['alpha', 'done'], ['beta', 'over-budget']]);
    expect(all.tunings[0].steps).toEqual([{ kind: 'done', run: 'final-check', command: null }]);
    expect(all.tunings[1].steps[0]).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run2' });
    expect(all.tunings[1].message).toMatch(/^the ceiling of this auto is spent: \$0\.\d{4} of \$0\.001$/);
    expect(all).toMatchObject({ ceiling: { maxCostUsd: 0.001, maxTokens: null }, skipped: [{ tuning: 'gamma' }], exitCode: 3 });
    repo.fsck();

    // A dirty working tree is refused before any switch.
    repo.write({ 'agents/prompts/house.md': 'changed by hand\n' });
    const dirty = await tuneAsync(repo, ['auto', '--all']);
    expect(dirty.code).toBe(2);
    expect(dirty.stderr).toContain('error: --all switches branches, and the working tree has uncommitted changes: agents/prompts/house.md');
    expect(repo.git('branch', '--show-current').trim()).toBe('main');
  }, 150_000);
});
