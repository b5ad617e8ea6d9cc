import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { autoFleet } from '../../src/app/auto-fleet.js';
import { autoAll, autoTuning, newSession, type AutoOptions, type AutoSession } from '../../src/app/auto.js';
import { createFleet, reportFleet } from '../../src/app/fleet.js';
import { ROOT, tuneOkSync } from '../helpers/cli.js';
import { tuneInProcess } from '../helpers/in-process.js';
import { readRef, TempRepo } from '../helpers/repo.js';
import { exampleRepo, stepCommits, template } from '../helpers/tuning.js';

/**
 * A fleet of target models on a second agent (test/fixtures/fleet: it reads
 * TUNE_TARGET, and each target's env makes it costlier or blind to a
 * topic): `git tune fleet` makes one tuning per target from one commit,
 * `auto --fleet` drives them at once under one shared budget, and the report
 * names the winner by the rule asked. Also `auto --max-minutes` (an injected
 * clock: no waiting) and `auto --all --only`. In this process (the app and
 * runCli from src/), the CLI's start would be most of the time.
 */
const FIXTURE = path.join(ROOT, 'test/fixtures/fleet');
const TARGETS = '[{name: small, env: {}}, {name: large, env: {AGENT_COST_USD: "0.005"}}, {name: weak, env: {AGENT_COST_USD: "0.0005", AGENT_BLIND: refund}}]';

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
});

/** Tuning `shop` over three cases in one batch (its prose lacks the hours rule the editor adds), the targets defined, on main. */
function shopRepo(): TempRepo {
  const made = template('shop', () => {
    const repo = TempRepo.create({ 'agents/rules.md': '- refund: 30 days\n- shipping: 3 days\n' });
    repo.write({ 'cases.yaml': readFileSync(path.join(FIXTURE, 'cases.yaml'), 'utf8') });
    repo.git('add', 'cases.yaml');
    repo.git('commit', '-q', '-m', 'cases');
    tuneOkSync(repo, ['init', 'shop', '--prose', 'agents/**/*.md', '--runner', `node ${FIXTURE}/agent.mjs`, '--editor', `node ${FIXTURE}/editor.mjs`, '--dataset', 'cases.yaml', '--no-hooks']);
    for (const [k, v] of [['minBatch', '3'], ['maxRetries', '1'], ['targets', TARGETS]] as const) tuneOkSync(repo, ['config', 'set', k, v]);
    tuneOkSync(repo, ['select']);
    repo.git('switch', '-q', 'main');
    return repo;
  });
  const repo = TempRepo.copyOf(made, 'git-tune-fleet-');
  repos.push(repo);
  return repo;
}

const envOf = (repo: TempRepo) => ({ ...process.env, ...repo.env });
const ctxOf = (repo: TempRepo) => ({ env: envOf(repo), now: new Date() });

const tune = (repo: TempRepo, args: string[]) => tuneInProcess(repo, args);

function autoOpts(repo: TempRepo, session: AutoSession, lines: string[], prefix = '', extra: Partial<AutoOptions> = {}): AutoOptions {
  return { env: envOf(repo), session, say: (l) => lines.push(`${prefix}${l}`), detail: (t) => lines.push(`${prefix}  ${t}`), ...extra };
}

async function driveFleet(repo: TempRepo, fleet: string, session = newSession()) {
  const lines: string[] = [];
  const result = await autoFleet(repo.dir, fleet, {
    session, env: envOf(repo), say: (l) => lines.push(l),
    optionsFor: (m) => autoOpts(repo, session, lines, `[${m.target}] `),
  });
  return { result, lines };
}

/** Everything a write could change in the user's checkout, as native git reports it. */
const checkout = (repo: TempRepo) => [
  repo.git('symbolic-ref', '-q', 'HEAD'), repo.git('rev-parse', 'HEAD'), repo.git('status', '--porcelain=v1', '--untracked-files=all'),
].join('---');

describe.concurrent('git tune fleet', () => {
  it('three targets from one commit, driven at once: the report names the right winner by each rule; nothing merged', async () => {
    const repo = shopRepo();
    const before = checkout(repo);
    const created = await createFleet(repo.dir, 'shop', ['small', 'large', 'weak'], ctxOf(repo));
    expect(created.members.map((m) => m.branch)).toEqual(['tune/shop@small', 'tune/shop@large', 'tune/shop@weak']);
    const shopTip = readRef(repo, 'refs/heads/tune/shop');
    for (const m of created.members) {
      // One branch per target from tune/shop's tip: init (config pinned to the target), dataset, selection.
      expect(stepCommits(repo, `${shopTip}..${m.branch}`).map((s) => s.step)).toEqual(['init', 'dataset', 'select']);
      expect(repo.git('show', `${m.branch}:.tune/${m.tuning}/config.yaml`)).toMatch(new RegExp(`^target: ${m.target}$`, 'm'));
    }

    const { result, lines } = await driveFleet(repo, 'shop');
    expect(result.tunings.map((t) => [t.tuning, t.outcome]).sort(), lines.join('\n')).toEqual([['shop@large', 'done'], ['shop@small', 'done'], ['shop@weak', 'final-failed']]);
    // weak never answers the refund case: 1 of 3 cases stuck is more than maxStuckShare (a fifth), so its final check fails (docs/method.md#final-check).
    expect(result.exitCode).toBe(6);
    // Side by side: the targets' lines interleave (one driver each in this process).
    const first = lines.findIndex((l) => l.startsWith('[small]'));
    const order = lines.slice(first, first + 40).map((l) => l.slice(1, l.indexOf(']')));
    expect(new Set(order).size).toBeGreaterThan(1);
    // Every run ran on its target: the runner saw TUNE_TARGET and the target's env (the costs differ by target).
    for (const m of created.members) {
      const meta = JSON.parse(repo.git('show', `${m.branch}:.tune/${m.tuning}/runs/final-check/run.json`));
      expect(meta.target).toBe(m.target);
    }
    const byTarget = Object.fromEntries(result.report.rows.map((r) => [r.target, r]));
    expect(byTarget.large!.costUsd).toBeCloseTo(5 * byTarget.small!.costUsd, 6);
    expect(byTarget.weak!.checked).toMatchObject({ run: 'final-check', right: 2, cases: 3 });
    expect(byTarget.small!.checked).toMatchObject({ run: 'final-check', right: 3, cases: 3 });
    expect(byTarget.small!.editsKept).toBe(1);
    expect(result.report.best).toBe('small');

    // The fleet's worktrees are gone, the user's checkout untouched, nothing merged, git is happy.
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(checkout(repo)).toBe(before);
    expect(repo.git('branch', '--merged', 'main', '--list', 'tune/*').trim()).toBe('');
    repo.fsck();

    // The report, by each rule: right-then-cost (default) small; cost: weak; right: large (tie by name).
    // weak's final check re-ran its wrong case (docs/method.md#noise), and those answers count in its cost per case; but a
    // deterministic wrong case is settled after two repeats: 5 answers at $0.0005 over 3 cases ($0.00083) is below small's $0.001.
    expect((await reportFleet(repo.dir, 'shop', 'cost')).best).toBe('weak');
    expect((await reportFleet(repo.dir, 'shop', 'right')).best).toBe('large');
    const md = await tune(repo, ['fleet', 'shop', '--report']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain('| small (best) | done | 3/3 (100%) in final-check |');
    expect(md.stdout).toContain('| weak | final-failed | 2/3 (67%) in final-check |');
    expect(md.stdout).toContain('git merge --no-ff tune/shop@small');
    const out = await tune(repo, ['fleet', 'shop', '--report', '--out', 'fleet.md']);
    expect(readFileSync(repo.path('fleet.md'), 'utf8')).toBe(`${out.stdout}`);
    const json = await tune(repo, ['fleet', 'shop', '--report', '--json', '--pick', 'cost']);
    expect(JSON.parse(json.stdout)).toMatchObject({ fleet: 'shop', pick: 'cost', best: 'weak', take: 'git merge --no-ff tune/shop@weak' });
    // The winner's branch merges as the report says.
    repo.git('merge', '-q', '--no-ff', '-m', 'take the small target', 'tune/shop@small');
    expect(repo.git('show', 'HEAD:agents/rules.md')).toContain('- hours: 9 to 5');
  }, 300_000);

  it('on the example agent: a costlier target and one that fails a case; the report names the cheap one that gets all right', async () => {
    // example-large is priced 5x by the example agent (TUNE_TARGET); flaky's env makes one case an error every time.
    const repo = exampleRepo({
      ex: { limit: '3', minBatch: '3', concurrency: '3', maxRetries: '1', targets: '[{name: example-main}, {name: example-large}, {name: flaky, env: {EXAMPLE_SIMULATE: "error@returns-condition"}}]' },
    }, 'git-tune-fleet-example-');
    repos.push(repo);
    await createFleet(repo.dir, 'ex', ['example-main', 'example-large', 'flaky'], ctxOf(repo));
    const { result, lines } = await driveFleet(repo, 'ex');
    // flaky's error case is stuck: 1 of 3 is more than maxStuckShare (a fifth), so its final check fails (docs/method.md#final-check).
    expect(result.tunings.map((t) => t.outcome), lines.join('\n')).toEqual(['done', 'done', 'final-failed']);
    const byTarget = Object.fromEntries(result.report.rows.map((r) => [r.target, r]));
    expect(byTarget['example-main']!.checked).toMatchObject({ run: 'final-check', right: 3, cases: 3 });
    expect(byTarget['example-large']!.checked).toMatchObject({ run: 'final-check', right: 3, cases: 3 });
    expect(byTarget.flaky!.checked).toMatchObject({ run: 'final-check', right: 2, cases: 3 });
    expect(byTarget['example-large']!.costUsd).toBeGreaterThan(3 * byTarget['example-main']!.costUsd);
    expect(result.report).toMatchObject({ best: 'example-main', take: 'git merge --no-ff tune/ex@example-main' });
    expect((await reportFleet(repo.dir, 'ex', 'right')).best).toBe('example-large');
    expect(repo.git('status', '--porcelain').trim()).toBe('');
    repo.fsck();
  }, 300_000);

  it('one budget for the fleet: it stops every target before any spends its own; a second auto finds nothing left', async () => {
    const repo = shopRepo();
    repo.git('switch', '-q', 'tune/shop');
    tuneOkSync(repo, ['config', 'set', 'targets', '[{name: a}, {name: b}, {name: c}]']);
    tuneOkSync(repo, ['config', 'set', 'budget.maxCostUsd', '0.012']);
    repo.git('switch', '-q', 'main');
    await createFleet(repo.dir, 'shop', ['a', 'b', 'c'], ctxOf(repo));
    const { result, lines } = await driveFleet(repo, 'shop');
    expect(result.tunings.map((t) => t.outcome), lines.join('\n')).toEqual(['over-budget', 'over-budget', 'over-budget']);
    for (const t of result.tunings) {
      expect(t.message).toContain("fleet shop's shared budget");
      // Each alone spent less than its own budget (0.012): the fleet's stopped it.
      expect(t.spent.costUsd).toBeGreaterThan(0);
      expect(t.spent.costUsd).toBeLessThan(0.012);
      expect(t.exitCode).toBe(3);
    }
    // Past the budget by at most the cases already running when it was spent (3 targets, 3 at a time, $0.001 each).
    expect(result.spent.costUsd).toBeGreaterThanOrEqual(0.012);
    expect(result.spent.costUsd).toBeLessThanOrEqual(0.012 + 9 * 0.001 + 1e-9);
    const again = await driveFleet(repo, 'shop');
    expect(again.result.spent.costUsd).toBe(0);
    expect(again.result.tunings.every((t) => t.outcome === 'over-budget')).toBe(true);
    repo.fsck();
  }, 300_000);

  it('git tune stop --fleet stops every target at its next safe point; auto --fleet again carries each on to done', async () => {
    const repo = shopRepo();
    await createFleet(repo.dir, 'shop', ['small', 'large'], ctxOf(repo));
    const session = newSession();
    const lines: string[] = [];
    let asked: Promise<unknown> | null = null;
    const result = await autoFleet(repo.dir, 'shop', {
      session, env: envOf(repo), say: (l) => lines.push(l),
      optionsFor: (m) => autoOpts(repo, session, lines, `[${m.target}] `, {
        onStep: (step, _t, n) => {
          lines.push(`[${m.target}] step ${n}: ${step.kind}`);
          if (m.target === 'small' && n === 3) asked ??= tune(repo, ['stop', '--fleet', 'shop']);
        },
      }),
    });
    expect(await asked).toMatchObject({ code: 0, stdout: 'asked auto on fleet shop (large, small) to stop: running cases finish and are kept, then it exits\n' });
    expect(result.tunings.map((t) => t.outcome), lines.join('\n')).toEqual(['stopped', 'stopped']);
    expect(result.exitCode).toBe(0);
    // A run the stop caught launches no more cases; the finished ones are kept and `next` says resume.
    for (const t of ['small', 'large']) {
      const steps = stepCommits(repo, `tune/shop@${t}`);
      const next = JSON.parse((await tune(repo, ['next', '--json', '--tuning', `shop@${t}`])).stdout);
      if (steps[steps.length - 1]!.step === 'run-start') expect(next.kind).toBe('resume');
      else expect(next.kind).not.toBe('done');
    }
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    const again = await driveFleet(repo, 'shop');
    expect(again.result.tunings.map((t) => t.outcome), again.lines.join('\n')).toEqual(['done', 'done']);
    repo.fsck();
  }, 300_000);

  it('fleet refuses a target the config does not define, an existing fleet, a bad rule; --dry-run writes nothing; a time limit already up stops every target before a step', async () => {
    const repo = shopRepo();
    const missing = await tune(repo, ['fleet', 'shop', '--targets', 'small,gpt-9']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/error: tuning shop's config defines no target gpt-9 \(targets: small, large, weak\)/);
    expect(missing.stderr).toMatch(/fix: git switch tune\/shop && git tune config set targets '.*"name":"gpt-9"/);
    const bad = await tune(repo, ['fleet', 'shop', '--targets', 'small,a b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('target "a b" cannot be part of a branch name');
    const noFleet = await tune(repo, ['fleet', 'shop', '--report']);
    expect(noFleet.code).toBe(2);
    expect(noFleet.stderr).toContain('there is no fleet shop');

    const before = [repo.git('for-each-ref'), checkout(repo)].join('\n');
    const plan = await tune(repo, ['fleet', 'shop', '--targets', 'small,weak', '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout);
    expect(planned.commits.map((c: { subject: string }) => c.subject)).toEqual([
      'tune(shop@small): init, fleet shop for target small', 'tune(shop@small): dataset of 3 cases (from shop)', 'tune(shop@small): select 3 cases (as shop)',
      'tune(shop@weak): init, fleet shop for target weak', 'tune(shop@weak): dataset of 3 cases (from shop)', 'tune(shop@weak): select 3 cases (as shop)',
    ]);
    expect([repo.git('for-each-ref'), checkout(repo)].join('\n')).toBe(before);

    const made = await tune(repo, ['fleet', 'shop', '--targets', 'small,weak']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('created tune/shop@small (target small)');
    const twice = await tune(repo, ['fleet', 'shop', '--targets', 'weak,large']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('the fleet already has tune/shop@weak');
    expect(readRef(repo, 'refs/heads/tune/shop@large')).toBeNull();
    const pick = await tune(repo, ['fleet', 'shop', '--report', '--pick', 'cheapest']);
    expect(pick.code).toBe(2);
    expect(pick.stderr).toContain('--pick takes one of held-out-then-cost, right-then-cost, right, cost (got cheapest)');
    const report = await tune(repo, ['fleet', 'shop', '--report', '--json']);
    expect(JSON.parse(report.stdout)).toMatchObject({ best: null, rows: [{ target: 'small', state: 'batch' }, { target: 'weak', state: 'batch' }] });

    // A time limit already up: every target stops before its first step (exit 3), nothing written, no worktree left.
    const tips = ['small', 'weak'].map((t) => readRef(repo, `refs/heads/tune/shop@${t}`));
    const session = newSession();
    session.deadline = { at: 0, minutes: 1 };
    const late = await driveFleet(repo, 'shop', session);
    expect(late.result.tunings.map((t) => [t.outcome, t.steps.length])).toEqual([['time-up', 0], ['time-up', 0]]);
    expect(late.result.exitCode).toBe(3);
    expect(['small', 'weak'].map((t) => readRef(repo, `refs/heads/tune/shop@${t}`))).toEqual(tips);
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);

    // A tuning's pinned target must be one of its targets.
    repo.git('switch', '-q', 'tune/shop@small');
    const pin = await tune(repo, ['config', 'set', 'target', 'gpt-9']);
    expect(pin.code).toBe(2);
    expect(pin.stderr).toMatch(/target.*must name one of `targets`/);
  }, 180_000);
});

describe.concurrent('git tune auto --max-minutes, --all --only', () => {
  it('--max-minutes stops at a step boundary once the time is up (exit 3), and auto again carries on to done', async () => {
    const repo = shopRepo();
    repo.git('switch', '-q', 'tune/shop');
    tuneOkSync(repo, ['config', 'set', 'target', 'small']);
    let now = Date.parse('2026-01-01T00:00:00Z');
    const session = newSession();
    session.deadline = { at: now + 5 * 60_000, minutes: 5 };
    const lines: string[] = [];
    // The clock jumps past the limit while step 2 (the run) is being done: that step finishes, and auto stops before step 3.
    const result = await autoTuning(repo.dir, autoOpts(repo, session, lines, '', {
      clock: () => new Date(now),
      onStep: (step, _t, n) => {
        lines.push(`step ${n}: ${step.kind}`);
        if (n === 2) now += 10 * 60_000;
      },
    }));
    expect(result.outcome, lines.join('\n')).toBe('time-up');
    expect(result.exitCode).toBe(3);
    expect(result.message).toContain('the time limit is up (--max-minutes 5)');
    expect(result.steps.map((s) => s.kind)).toEqual(['batch', 'run']);
    // The run finished and is recorded whole: its commit and tag; `next` says the step after it.
    const steps = stepCommits(repo, 'tune/shop');
    expect(steps[steps.length - 1]).toMatchObject({ step: 'run', run: 'batch01-nomem-run1' });
    expect(repo.git('tag', '-l', 'tune/shop/*').trim()).toBe('tune/shop/batch01-nomem-run1');
    const next = await tune(repo, ['next', '--json']);
    expect(JSON.parse(next.stdout)).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run1' });
    expect(repo.git('status', '--porcelain').trim()).toBe('');

    // Through the CLI: a limit already up stops before the next step, says so, exits 3, writes nothing; a bad value is refused.
    const tip = readRef(repo, 'refs/heads/tune/shop');
    const cli = await tune(repo, ['auto', '--max-minutes', '0.000001']);
    expect(cli.code).toBe(3);
    expect(cli.stdout).toMatch(/^shop: time-up: the time limit is up \(--max-minutes 0\.000001\): stopped between steps; `git tune auto` carries on from here \(0 steps/);
    expect(readRef(repo, 'refs/heads/tune/shop')).toBe(tip);
    const bad = await tune(repo, ['auto', '--max-minutes', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-minutes takes a number of minutes above 0 (got soon)');

    const rest = await autoTuning(repo.dir, autoOpts(repo, newSession(), lines));
    expect(rest.outcome, lines.join('\n')).toBe('done');
    expect(rest.steps[0]!.kind).toBe('grade');
    repo.fsck();
  }, 300_000);

  it('--only drives the tunings whose name matches, refuses a glob that matches none (listing them)', async () => {
    const repo = shopRepo();
    await createFleet(repo.dir, 'shop', ['small', 'weak'], ctxOf(repo));
    const tips = () => ['shop', 'shop@small', 'shop@weak'].map((n) => readRef(repo, `refs/heads/tune/${n}`));
    const before = tips();
    const none = await tune(repo, ['auto', '--all', '--only', 'desk*']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('error: --only desk* matches no tuning (tunings: shop, shop@small, shop@weak)');
    expect(tips()).toEqual(before);
    const alone = await tune(repo, ['auto', '--only', 'shop*']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--only filters the tunings --all drives');

    const lines: string[] = [];
    const result = await autoAll(repo.dir, { ...autoOpts(repo, newSession(), lines), only: 'shop@w*', maxSteps: 2 });
    expect(result.tunings.map((t) => t.tuning), lines.join('\n')).toEqual(['shop@weak']);
    const after = tips();
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(after[2]).not.toBe(before[2]);
    expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
  }, 180_000);
});
