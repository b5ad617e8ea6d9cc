import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTuning } from '../../src/app/tuning.js';
import { undoSteps } from '../../src/app/undo.js';
import { cachePath } from '../../src/core/paths.js';
import { openRepo } from '../../src/git/open.js';
import { ROOT, tuneAsync, tuneOkSync } from '../helpers/cli.js';
import { leftovers, TempRepo } from '../helpers/repo.js';
import { EXAMPLE, EXAMPLE_INIT, stepCommits, templateAsync, type StepCommit } from '../helpers/tuning.js';

/**
 * Issue 21: native git undoes a tuning. A `git reset --hard` into the middle
 * of a batch abandons steps whose run tags and logs were in the way of the
 * runs after it; they move aside under refs/tune-abandoned and `auto` goes
 * on to done. `git tune undo [n]` does the same the safe way and prints the
 * command that undoes it. On the example agent and on the shop agent of
 * test/fixtures/fleet (another agent and editor, no judge); what was written is read
 * with native git. One tuning of each is run to done per file and copied.
 */
/** Three cases in one batch: the whole method (both halves, an edit, the final check) in few steps. */
const SMALL = [['limit', '3'], ['minBatch', '3']] as const;
const SHOP = path.join(ROOT, 'test/fixtures/fleet');

interface Agent {
  name: string;
  build: () => Promise<TempRepo>;
}

const cleanup: Array<() => void> = [];
afterAll(() => cleanup.forEach((c) => c()));

async function tunedFrom(files: Record<string, string>, name: string, init: readonly string[], settings: ReadonlyArray<readonly [string, string]>): Promise<TempRepo> {
  const repo = TempRepo.create(files);
  tuneOkSync(repo, ['init', name, ...init]);
  for (const [key, value] of settings) tuneOkSync(repo, ['config', 'set', key, value]);
  const r = await tuneAsync(repo, ['auto']);
  if (r.code !== 0) throw new Error(`auto failed\n${r.stderr.slice(-3000)}`);
  return repo;
}

/** The example agent, its tuning over three cases. */
const example: Agent = {
  name: 'demo',
  build: async () => {
    const files: Record<string, string> = {};
    const walk = (dir: string) => {
      for (const e of readdirSync(path.join(EXAMPLE, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) walk(rel);
        else files[rel] = readFileSync(path.join(EXAMPLE, rel), 'utf8');
      }
    };
    walk('');
    return tunedFrom(files, 'demo', EXAMPLE_INIT, SMALL);
  },
};
/**
 * Another agent (test/fixtures/fleet: it answers from agents/rules.md on a
 * target model, and its editor knows one fix), no judge.
 */
const shop: Agent = {
  name: 'shop',
  build: () => tunedFrom(
    { 'agents/rules.md': '- refund: 30 days\n- shipping: 3 days\n', 'cases.yaml': readFileSync(path.join(SHOP, 'cases.yaml'), 'utf8') },
    'shop', ['--prose', 'agents/**/*.md', '--runner', `node ${SHOP}/agent.mjs`, '--editor', `node ${SHOP}/editor.mjs`, '--dataset', 'cases.yaml'],
    [['targets', '[{name: small, env: {}}]'], ['target', 'small']],
  ),
};

/** A copy of the agent's tuning, run to done once per file. */
async function tuned(agent: Agent): Promise<TempRepo> {
  const repo = TempRepo.copyOf(await templateAsync(`undo ${agent.name}`, agent.build), 'git-tune-undo-');
  cleanup.push(() => repo.cleanup());
  return repo;
}

const tags = (repo: TempRepo, name: string): Map<string, string> => new Map(
  repo.git('for-each-ref', '--format=%(refname:lstrip=4) %(objectname)', `refs/tags/tune/${name}/`).trim().split('\n').filter(Boolean)
    .map((l) => l.split(' ') as [string, string]),
);
const firstParent = (repo: TempRepo, name: string) => new Set(repo.git('log', '--first-parent', '--format=%H', `tune/${name}`).trim().split('\n'));
const tip = (repo: TempRepo, name: string) => repo.git('rev-parse', `tune/${name}`).trim();
const fsckClean = (repo: TempRepo) => expect(repo.git('fsck', '--full', '--strict', '--no-dangling', '--no-progress')).toBe('');

/** The run-start of the last batch run: a reset there lands in the middle of a batch, its run started and not finished. */
function midBatch(steps: StepCommit[]): { index: number; run: string } {
  const starts = steps.map((s, i) => ({ s, i })).filter(({ s }) => s.step === 'run-start' && s.run.startsWith('batch'));
  const { s, i } = starts[starts.length - 1]!;
  return { index: i, run: s.run };
}

describe.concurrent('abandoned steps after a reset, and git tune undo', () => {
  for (const agent of [example, shop]) {
    it(`${agent.name}: git reset --hard into a batch, then auto to done; the abandoned tags and logs are moved aside`, async () => {
      const repo = await tuned(agent);
      const { name } = agent;
      const steps = stepCommits(repo, `tune/${name}`);
      const before = tags(repo, name);
      const oldTip = tip(repo, name);
      const { index, run } = midBatch(steps);
      const back = steps.length - 1 - index;
      repo.git('reset', '-q', '--hard', `HEAD~${back}`);

      const r = await tuneAsync(repo, ['auto']);
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^${name}: done: the final check is VERIFIED`));
      fsckClean(repo);

      // Every run tag is on the branch, the run started before the reset and those after it on new commits.
      const line = firstParent(repo, name);
      const after = tags(repo, name);
      for (const [t, oid] of after) expect(line.has(oid), t).toBe(true);
      expect(after.get(run)).toBeDefined();
      expect(after.get(run)).not.toBe(before.get(run));
      expect(after.get('final-check')).not.toBe(before.get('final-check'));
      // The logs ref holds the runs of the branch, each its own: the abandoned ones left it with their tags.
      const logged = repo.git('ls-tree', '--name-only', `refs/tune-logs/${name}`).trim().split('\n').sort();
      expect(logged).toEqual([...after.keys()].sort());

      // What moved aside: the runs of the abandoned steps, at their old commits, with the old tip kept.
      const abandoned = [...before].filter(([t, oid]) => after.get(t) !== oid);
      const log = repo.tuneJson(['log', '--abandoned']);
      expect(log.moves).toHaveLength(1);
      expect(log.moves[0]).toMatchObject({ n: 1, steps: back, from: oldTip, why: 'the branch was rewritten (reset or rebase)' });
      expect(new Map(log.moves[0].kept.map((k: { run: string; commit: string }) => [k.run, k.commit]))).toEqual(new Map(abandoned));
      for (const [t, oid] of abandoned) expect(repo.git('rev-parse', `refs/tune-abandoned/${name}/1/tags/${t}`).trim()).toBe(oid);
      expect(repo.git('rev-parse', `refs/tune-abandoned/${name}/1/tip`).trim()).toBe(oldTip);
      // The old logs are kept too, out of the logs ref's tip.
      expect(repo.git('ls-tree', '--name-only', `refs/tune-abandoned/${name}/1/logs`)).toContain('final-check');
      const status = repo.tuneJson(['status']);
      expect(status.abandoned).toMatchObject({ steps: back, moves: 1 });
      expect(repo.tune(['status']).stdout).toContain(`abandoned: ${back} steps left the branch (1 move aside, the last at `);
      expect(repo.tune(['log', '--abandoned']).stdout).toContain(`tuning ${name}: ${back} abandoned steps in 1 move`);
    }, 240_000);
  }

  it('demo: undo and undo 3 drop steps, move their run tags aside, and the printed line puts them back', async () => {
    const repo = await tuned(example);
    const start = tip(repo, 'demo');
    const before = tags(repo, 'demo');
    const dry = repo.tune(['undo', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^would undo 1 step of tune\/demo: /);
    expect(tip(repo, 'demo')).toBe(start);

    const one = repo.tune(['undo']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('grade final-check VERIFIED');
    expect(tip(repo, 'demo')).toBe(repo.git('rev-parse', `${start}~1`).trim());
    expect(tags(repo, 'demo')).toEqual(before); // the grade held no run tag
    expect(repo.git('status', '--porcelain')).toBe('');

    const mid = tip(repo, 'demo');
    const three = repo.tuneJson(['undo', '3']);
    expect(three.dropped.map((d: { step: string }) => d.step)).toEqual(['run', 'run-start', 'checkpoint']);
    expect(three.runs).toEqual(['final-check']);
    expect(tip(repo, 'demo')).toBe(repo.git('rev-parse', `${mid}~3`).trim());
    expect(tags(repo, 'demo').has('final-check')).toBe(false);
    expect(repo.git('rev-parse', 'refs/tune-abandoned/demo/2/tags/final-check').trim()).toBe(before.get('final-check'));
    // Index and working tree follow, as after git reset --keep; native git's reflog has the move.
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.git('reflog', '-1', '--format=%gs', 'tune/demo').trim()).toBe(`tune undo: moving back 3 steps to ${tip(repo, 'demo')}`);
    expect(repo.git('reflog', '-1', '--format=%gs').trim()).toMatch(/^tune undo: moving back 3 steps/);
    expect(repo.tuneJson(['next']).kind).toBe('checkpoint');
    expect(three.restore).toBe(`git reset --keep ${mid}`);
    expect(three.reflog).toBe('git reset --keep tune/demo@{1}');

    // The printed reflog line undoes the undo; the next command puts the run tag back.
    execSync(three.reflog, { cwd: repo.dir, env: { ...process.env, ...repo.env }, stdio: 'ignore' });
    expect(tip(repo, 'demo')).toBe(mid);
    const status = repo.tune(['status']);
    expect(status.stdout).toContain('the branch holds final-check again');
    expect(tags(repo, 'demo')).toEqual(before);
    expect(repo.tuneJson(['status']).abandoned.steps).toBe(1); // only the first undo's grade is still off the branch
    fsckClean(repo);
  }, 240_000);

  it('shop: undo 2 on another agent, and its refusals: dirty prose, past the init step, pushed steps unless --force', async () => {
    const repo = await tuned(shop);
    const start = tip(repo, 'shop');
    const afterInit = stepCommits(repo, 'tune/shop').length - 2; // not the project's commit, nor the init step

    const past = repo.tune(['undo', String(afterInit + 1), '--json']);
    expect(past.code).toBe(3);
    expect(JSON.parse(past.stdout).error).toMatchObject({ code: 'undo-past-init', hint: `git tune undo ${afterInit}   # back to the init step` });
    expect(repo.tune(['undo', 'two']).code).toBe(2);

    writeFileSync(repo.path('agents/rules.md'), 'changed by hand\n');
    const dirty = repo.tune(['undo', '--json']);
    expect(dirty.code).toBe(2);
    expect(JSON.parse(dirty.stdout).error).toMatchObject({ code: 'dirty-file', hint: "git stash push -- 'agents/rules.md'   # or commit them; then the command again" });
    repo.git('checkout', '--', 'agents/rules.md');

    const remote = mkdtempSync(path.join(os.tmpdir(), 'git-tune-undo-remote-'));
    cleanup.push(() => rmSync(remote, { recursive: true, force: true }));
    execSync(`git init -q --bare '${remote}'`);
    repo.git('remote', 'add', 'origin', remote);
    repo.git('push', '-q', 'origin', 'tune/shop');
    repo.git('fetch', '-q', 'origin');
    const pushed = repo.tune(['undo', '2', '--json']);
    expect(pushed.code).toBe(3);
    expect(JSON.parse(pushed.stdout).error).toMatchObject({ code: 'undo-pushed', hint: 'git tune undo 2 --force   # then the remote needs a forced push too' });
    expect(tip(repo, 'shop')).toBe(start);

    const forced = repo.tune(['undo', '2', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('warning: origin/tune/shop still holds them');
    expect(tip(repo, 'shop')).toBe(repo.git('rev-parse', `${start}~2`).trim());
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(tags(repo, 'shop').has('final-check')).toBe(false);
    fsckClean(repo);
  }, 240_000);

  it('shop: undo killed after moving the tags, or after moving the branch: the next command finishes or takes it back', async () => {
    const repo = await tuned(shop);
    const start = tip(repo, 'shop');
    const before = tags(repo, 'shop');
    const killed = await tuneAsync(repo, ['undo', '2'], { GIT_TUNE_CRASH_AT: 'undo:after-tags' });
    expect(killed.signal).toBe('SIGKILL');
    expect(tip(repo, 'shop')).toBe(start);
    expect(tags(repo, 'shop').has('final-check')).toBe(false); // moved aside, the branch not moved yet
    expect(repo.tune(['status']).stdout).toContain('warning: the branch holds final-check again: its run tag was put back from refs/tune-abandoned');
    expect(tags(repo, 'shop')).toEqual(before);

    const cut = await tuneAsync(repo, ['undo', '5'], { GIT_TUNE_CRASH_AT: 'undo:after-ref' });
    expect(cut.signal).toBe('SIGKILL');
    const back = repo.git('rev-parse', `${start}~5`).trim();
    expect(tip(repo, 'shop')).toBe(back);
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).not.toBe(''); // the files lag behind the branch
    const status = repo.tune(['status']);
    expect(status.stdout).toMatch(/warning: an interrupted git tune undo 5 was finished: \d+ files? checked out/);
    expect(repo.git('status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(leftovers(repo)).toEqual([]);
    fsckClean(repo);
  }, 240_000);

  it('shop: a rebase rewrites the run commits: the old tags move aside and the rewritten runs are tagged', async () => {
    const repo = await tuned(shop);
    const before = tags(repo, 'shop');
    // Rewritten, not replayed as they were: another committer date gives every commit a new id.
    execSync('git rebase -q --force-rebase HEAD~3', { cwd: repo.dir, env: { ...process.env, ...repo.env, GIT_COMMITTER_DATE: '@1767312000 +0000' }, stdio: 'ignore' });
    const runCommit = repo.git('log', '-1', '--format=%H', '--grep=^Tune-Step: run$', 'tune/shop').trim();
    expect(runCommit).not.toBe(before.get('final-check'));
    const status = repo.tune(['status']);
    expect(status.stdout).toContain('warning: 1 run tag of steps no longer on the branch moved aside (3 abandoned steps)');
    expect(status.stdout).toContain('warning: run tag made for final-check: the branch holds that run on commits no tag named (rewritten)');
    expect(tags(repo, 'shop').get('final-check')).toBe(runCommit);
    expect(repo.tuneJson(['log', '--abandoned']).moves[0].kept).toEqual([{ run: 'final-check', commit: before.get('final-check') }]);
    expect(repo.tuneJson(['next']).kind).toBe('done');
    fsckClean(repo);
  }, 240_000);

  it('the fold cache never serves the abandoned state: after git reset and after undo it folds the branch as it is', async () => {
    const repo = await tuned(example);
    const git = await openRepo(repo.dir);
    const fresh = async () => {
      rmSync(cachePath(repo.path('.git'), 'demo'), { recursive: true, force: true });
      return loadTuning(await openRepo(repo.dir), 'demo');
    };
    const summary = (t: Awaited<ReturnType<typeof loadTuning>>) => ({
      tip: t.tip, commits: t.state.commits, runs: [...t.state.runs.keys()], final: t.state.final.length, edits: t.state.edits.length,
      next: t.state.tipOid,
    });
    const warm = await loadTuning(git, 'demo'); // the cache holds the finished tuning
    expect(warm.state.final).toHaveLength(1);

    repo.git('reset', '-q', '--hard', 'HEAD~4');
    const afterReset = await loadTuning(await openRepo(repo.dir), 'demo');
    expect(afterReset.state.final).toHaveLength(0);
    expect(summary(afterReset)).toEqual(summary(await fresh()));

    const cached = await loadTuning(await openRepo(repo.dir), 'demo');
    await undoSteps(cached, { count: 2, env: { ...process.env, ...repo.env }, now: new Date('2026-01-01T00:00:00Z') });
    const afterUndo = await loadTuning(await openRepo(repo.dir), 'demo');
    expect(afterUndo.tip).toBe(repo.git('rev-parse', 'HEAD~0').trim());
    expect(afterUndo.state.commits).toBe(cached.state.commits - 2);
    expect(summary(afterUndo)).toEqual(summary(await fresh()));
  }, 240_000);
});
