import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createFleet } from '../../src/app/fleet.js';
import { ROOT, startTune, tuneAsync, type CliResult } from '../helpers/cli.js';
import { tuneInProcess } from '../helpers/in-process.js';
import { TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits, templateAsync } from '../helpers/tuning.js';

/**
 * One driver per tuning, through the real CLI: while `git tune auto` drives a
 * tuning, a second auto and every command that writes its steps are refused
 * at once (exit 4, the driver's pid, for how long, `git tune stop`), and the
 * read commands work; after `git tune stop` the next auto carries on to done,
 * and a driver killed with SIGKILL is taken over. On the example agent (made
 * slow by EXAMPLE_DELAY_MS), and on the fleet's agent driven by `auto --fleet`.
 */
const cleanup: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanup) c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Driver {
  pid: number;
  command: string;
}

const driverFile = (repo: TempRepo, tuning: string) => repo.path('.git', 'tune', tuning, 'driver');

function readDriver(repo: TempRepo, tuning: string): Driver | null {
  try {
    return JSON.parse(readFileSync(driverFile(repo, tuning), 'utf8')) as Driver;
  } catch {
    return null;
  }
}

/** Waits until `auto` (started) holds the driver lock of each tuning; fails if it ends first. */
async function drivenBy(repo: TempRepo, tunings: string[], auto: ReturnType<typeof startTune>): Promise<void> {
  let ended: CliResult | null = null;
  void auto.done.then((r) => (ended = r));
  while (!tunings.every((t) => readDriver(repo, t)?.pid === auto.child.pid)) {
    if (ended) throw new Error(`auto ended before it drove ${tunings.join(', ')}: ${JSON.stringify(ended)}`);
    await sleep(20);
  }
}

async function timed(run: Promise<CliResult>): Promise<CliResult & { ms: number }> {
  const started = Date.now();
  const r = await run;
  return { ...r, ms: Date.now() - started };
}

/** What a refusal while `pid` drives says: on stderr (or as --json on stdout), exit 4. */
function expectRefused(r: CliResult, pid: number, stop = /fix: git tune stop( --tuning \S+)? {3}#/): void {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(4);
  expect(r.stderr).toMatch(new RegExp(`^error: auto is already driving tuning \\S+: git tune auto[^(]*\\(pid ${pid}, for \\d+ (s|min)\\)`, 'm'));
  expect(r.stderr).toMatch(stop);
}

describe.concurrent('one driver per tuning', () => {
  it('on the example agent: a second auto, run, grade and edit are refused at once; next, status, log work; stop, then auto to done; a SIGKILLed driver is taken over', async () => {
    const repo = exampleRepo({ demo: { limit: '4', minBatch: '4', concurrency: '4', maxRetries: '1' } }, 'git-tune-driver-');
    cleanup.push(() => repo.cleanup());
    const slow = { EXAMPLE_DELAY_MS: '400' };
    const first = startTune(repo, ['auto'], slow);
    await drivenBy(repo, ['demo'], first);
    const pid = first.child.pid!;

    const second = await timed(tuneAsync(repo, ['auto', '--json']));
    expect(second.code, second.stderr).toBe(4);
    const { error } = JSON.parse(second.stdout) as { error: { code: string; message: string; hint: string } };
    expect(error.code).toBe('driver-running');
    expect(error.message).toMatch(new RegExp(`^auto is already driving tuning demo: git tune auto \\(pid ${pid}, for \\d+ s\\) writes its steps until it ends$`));
    expect(error.hint).toBe('git tune stop   # it stops at the next safe point; or wait for it to end');
    // At once: not after the tool lock's 3 s wait, nor after a step of its own.
    expect(second.ms).toBeLessThan(5000);

    const [run, grade, edit, next, status, log] = await Promise.all([
      tuneAsync(repo, ['run']), tuneAsync(repo, ['grade']), tuneAsync(repo, ['edit']),
      tuneAsync(repo, ['next']), tuneAsync(repo, ['status']), tuneAsync(repo, ['log']),
    ]);
    for (const r of [run, grade, edit]) expectRefused(r, pid, /^fix: git tune stop {3}#/m);
    for (const r of [next, status, log]) expect(r.code, r.stderr).toBe(0);
    expect(next.stdout).not.toBe('');
    expect(first.child.exitCode).toBeNull(); // the driver drove on meanwhile

    expect((await tuneAsync(repo, ['stop'])).code).toBe(0);
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(0);
    expect(stopped.stdout).toMatch(/^demo: stopped: stopped on request \(git tune stop\)/);
    expect(existsSync(driverFile(repo, 'demo'))).toBe(false);

    // A driver killed with SIGKILL leaves its lock; the next auto takes it over and carries on to done.
    const killed = startTune(repo, ['auto'], slow);
    await drivenBy(repo, ['demo'], killed);
    killed.child.kill('SIGKILL');
    expect((await killed.done).signal).toBe('SIGKILL');
    expect(readDriver(repo, 'demo')?.pid).toBe(killed.child.pid);
    const last = await tuneAsync(repo, ['auto']);
    expect(last.code, last.stderr.slice(-2000)).toBe(0);
    expect(last.stdout).toMatch(/^demo: done: the final check is VERIFIED/);
    expect(existsSync(driverFile(repo, 'demo'))).toBe(false);

    // No step of another command landed among the drivers': every run graded once, git is happy.
    const steps = stepCommits(repo, 'tune/demo');
    const grades = steps.filter((s) => s.step === 'grade').map((s) => s.run);
    expect(new Set(grades).size).toBe(grades.length);
    expect(steps.filter((s) => s.step === 'run').map((s) => s.run)).toEqual(grades);
    repo.fsck();
    expect(repo.git('status', '--porcelain').trim()).toBe('');
  }, 180_000);

  it('on the fleet agent: while auto --fleet drives, a second auto --fleet, auto --all and writes to a target are refused with stop --fleet; reads work; stop --fleet ends it', async () => {
    const repo = await shopRepo();
    const created = await createFleet(repo.dir, 'shop', ['small', 'large'], { env: { ...process.env, ...repo.env }, now: new Date() });
    const tunings = created.members.map((m) => m.tuning);
    const before = Object.fromEntries(tunings.map((t) => [t, repo.git('rev-parse', `tune/${t}`).trim()]));
    const driver = startTune(repo, ['auto', '--fleet', 'shop'], { SLOW_AGENT_MS: '400' });
    await drivenBy(repo, tunings, driver);
    const pid = driver.child.pid!;
    expect(readDriver(repo, 'shop@small')?.command).toBe('git tune auto --fleet shop');

    // In this process (the driver is another one): the CLI's start would be most of the time.
    const results: CliResult[] = [];
    for (const args of [
      ['auto', '--fleet', 'shop'], ['auto', '--all'], ['config', 'set', 'maxRetries', '2', '--tuning', 'shop@small'],
      ['difficult', 'add', 'shop-hours', '--why', 'flaky', '--tuning', 'shop@large'],
      ['status', '--tuning', 'shop@small'], ['log', '--tuning', 'shop@large'], ['fleet', 'shop', '--report'],
    ]) results.push(await tune(repo, args));
    const [again, all, config, difficult, status, log, report] = results as [CliResult, CliResult, CliResult, CliResult, CliResult, CliResult, CliResult];
    for (const r of [again, all, config, difficult]) expectRefused(r, pid, /^fix: git tune stop --fleet shop {3}#/m);
    for (const r of [status, log, report]) expect(r.code, r.stderr).toBe(0);
    // auto --all was refused before it switched a branch: the checkout is where it was.
    expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(readDriver(repo, 'shop')).toBeNull();

    expect((await tuneAsync(repo, ['stop', '--fleet', 'shop'])).code).toBe(0);
    const end = await driver.done;
    expect(end.code, end.stderr.slice(-2000)).toBe(0);
    expect(end.stdout).toMatch(/^shop@small +stopped/m);
    expect(end.stdout).toMatch(/^shop@large +stopped/m);
    for (const t of tunings) expect(existsSync(driverFile(repo, t))).toBe(false);
    // Only the driver wrote: its steps are on the targets' branches, the refused config and difficult are not.
    for (const t of tunings) {
      const steps = stepCommits(repo, `${before[t]}..tune/${t}`).map((s) => s.step);
      expect(steps.length).toBeGreaterThan(0);
      expect(steps.filter((s) => s === 'config' || s === 'difficult')).toEqual([]);
    }
    repo.fsck();
  }, 120_000);
});

/** `git tune <args>` in this process, as the user would see it. */
const tune = (repo: TempRepo, args: string[]) => tuneInProcess(repo, args);

/** The fleet agent behind a wrapper that waits SLOW_AGENT_MS first (so a driver is caught mid-drive). */
function slowAgent(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'git-tune-slow-agent-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'slow-agent.mjs');
  const agent = pathToFileURL(path.join(ROOT, 'test/fixtures/fleet/agent.mjs')).href;
  writeFileSync(file, `await new Promise((r) => setTimeout(r, Number(process.env.SLOW_AGENT_MS ?? 0)));\nawait import(${JSON.stringify(agent)});\n`);
  return file;
}

/** Tuning `shop` of the fleet fixture (three cases, one batch), targets small and large defined, on main. */
async function shopRepo(): Promise<TempRepo> {
  const made = await templateAsync('shop', async () => {
    const repo = TempRepo.create({ 'agents/rules.md': '- refund: 30 days\n- shipping: 3 days\n' });
    repo.write({ 'cases.yaml': readFileSync(path.join(ROOT, 'test/fixtures/fleet/cases.yaml'), 'utf8') });
    repo.git('add', 'cases.yaml');
    repo.git('commit', '-q', '-m', 'cases');
    for (const args of [
      ['init', 'shop', '--prose', 'agents/**/*.md', '--runner', `node ${slowAgent()}`,
        '--editor', `node ${path.join(ROOT, 'test/fixtures/fleet/editor.mjs')}`, '--dataset', 'cases.yaml', '--no-hooks'],
      ['config', 'set', 'minBatch', '3'], ['config', 'set', 'maxRetries', '1'],
      ['config', 'set', 'targets', '[{name: small}, {name: large, env: {AGENT_COST_USD: "0.005"}}]'], ['select'],
    ]) {
      const r = await tune(repo, args);
      if (r.code !== 0) throw new Error(`git tune ${args.join(' ')}: ${r.stderr}`);
    }
    repo.git('switch', '-q', 'main');
    return repo;
  });
  const repo = TempRepo.copyOf(made, 'git-tune-driver-fleet-');
  cleanup.push(() => repo.cleanup());
  return repo;
}
