import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { tuneAsync, type CliResult } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * Repositories in states a user really has them in: no commit yet, a linked
 * worktree, the middle of a merge.
 */
const BRANCH = 'tune/support-desk';
const CONFIG = '.tune/support-desk/config.yaml';
const INIT = ['init', 'support-desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js'];

/** The real CLI, asynchronously: the tests of this file are independent and run side by side. */
const tune = (repo: TempRepo, args: string[], cwd = repo.dir): Promise<CliResult> => tuneAsync({ dir: cwd, env: repo.env }, args);

/** A repository removed when the test ends (concurrent tests use their own context's hook). */
function track(ctx: TestContext, repo: TempRepo): TempRepo {
  ctx.onTestFinished(() => repo.cleanup());
  return repo;
}

describe.concurrent('repositories in the states users have them in', () => {
  describe('a repository with no commit yet (unborn HEAD)', () => {
    it('can init: the init commit is the root of the tuning branch, and the user files stay untracked', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, new TempRepo());
      repo.git('init', '-q', '-b', 'main');
      repo.write({ 'agents/prompt.md': 'Answer politely.\n', 'cases.json': JSON.stringify([{ id: 'a-1', class: 'a', input: 'hi' }]) });
      const r = await tune(repo, [...INIT, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).next.kind).toBe('dataset');

      expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/${BRANCH}`);
      expect(repo.git('rev-list', '--parents', BRANCH).trim().split(' ')).toHaveLength(1); // a root commit
      expect(repo.git('branch', '--list', 'main')).toBe(''); // the unborn branch stays unborn
      expect(repo.git('ls-files')).toBe(`.tune/support-desk/README.md\n.tune/support-desk/USAGE.md\n${CONFIG}\n`);
      expect(repo.git('status', '--porcelain')).toBe('?? agents/\n?? cases.json\n');
      expect(repo.fsck()).toBe('');

      const d = await tune(repo, ['dataset', 'import', 'cases.json']);
      expect(d.code, d.stderr).toBe(0);
      expect(repo.git('log', '--format=%s', BRANCH).trim().split('\n')).toEqual([
        'tune(support-desk): dataset of 1 cases in 1 class', 'tune(support-desk): init',
      ]);
    });
  });

  describe('a linked worktree', () => {
    it('is refused with a clear message, and nothing is written', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      const wtParent = mkdtempSync(path.join(os.tmpdir(), 'git-tune-wt-'));
      try {
        const wt = path.join(wtParent, 'wt');
        repo.git('worktree', 'add', '-q', '-b', 'feature', wt);
        for (const args of [INIT, ['next']]) {
          const r = await tune(repo, [...args, '--json'], wt);
          expect(r.code, r.stderr).toBe(2);
          expect(JSON.parse(r.stdout).error.code).toBe('linked-worktree');
          expect(r.stderr).toContain(`error: ${wt} is a linked worktree or submodule`);
          expect(r.stderr).toContain('fix: cd to the main working tree (git worktree list)');
        }
        expect(repo.git('branch', '--list', 'tune/*')).toBe('');
        expect(readFileSync(path.join(repo.dir, '.git/worktrees/wt/HEAD'), 'utf8')).toBe('ref: refs/heads/feature\n');
        expect(existsSync(path.join(wt, '.tune'))).toBe(false);
      } finally {
        rmSync(wtParent, { recursive: true, force: true });
      }
    });
  });

  describe('the middle of a merge', () => {
    async function midMerge(ctx: TestContext): Promise<TempRepo> {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      expect((await tune(repo, INIT)).code).toBe(0);
      repo.git('switch', '-q', '-c', 'side');
      repo.write({ 'agents/prompt.md': 'Answer briefly.\n' });
      repo.git('commit', '-q', '-am', 'side edit');
      repo.git('switch', '-q', BRANCH);
      repo.write({ 'agents/prompt.md': 'Answer at length.\n' });
      repo.git('commit', '-q', '-am', 'branch edit');
      expect(() => repo.git('merge', '-q', 'side')).toThrow(); // a conflict
      expect(existsSync(repo.path('.git/MERGE_HEAD'))).toBe(true);
      return repo;
    }

    it('refuses a step with the command that finishes or aborts the merge, and writes nothing', async (ctx) => {
      const { expect } = ctx;
      const repo = await midMerge(ctx);
      const tip = repo.git('rev-parse', BRANCH).trim();
      const status = repo.git('status', '--porcelain');
      const configText = readFileSync(repo.path(CONFIG), 'utf8');
      const r = await tune(repo, ['config', 'set', 'maxBatch', '8', '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error).toEqual({
        code: 'git-busy',
        message: 'git is in the middle of a merge: finish it first',
        hint: 'git merge --continue   # or: git merge --abort',
        details: [],
      });
      expect(r.stderr).toContain('fix: git merge --continue   # or: git merge --abort');
      expect(repo.git('rev-parse', BRANCH).trim()).toBe(tip);
      expect(repo.git('status', '--porcelain')).toBe(status);
      expect(readFileSync(repo.path(CONFIG), 'utf8')).toBe(configText);
      expect(readFileSync(repo.path('agents/prompt.md'), 'utf8')).toContain('<<<<<<<');
      // Reading is fine mid-merge: next still says where the tuning stands.
      const next = await tune(repo, ['next', '--json']);
      expect(next.code, next.stderr).toBe(0);
      expect(JSON.parse(next.stdout).kind).toBe('dataset');
    });

    it('refuses to init another tuning (which would switch branches) mid-merge', async (ctx) => {
      const { expect } = ctx;
      const repo = await midMerge(ctx);
      const r = await tune(repo, ['init', 'other', '--prose', 'agents/**/*.md', '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error.code).toBe('git-busy');
      expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/${BRANCH}`);
      expect(repo.git('branch', '--list', 'tune/other')).toBe('');
      expect(existsSync(repo.path('.tune/other'))).toBe(false);
    });

    it('refuses while a revert is stopped, too', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      expect((await tune(repo, INIT)).code).toBe(0);
      writeFileSync(repo.path('.git/REVERT_HEAD'), `${repo.git('rev-parse', 'HEAD').trim()}\n`);
      const r = await tune(repo, ['config', 'set', 'maxBatch', '8', '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout).error.hint).toBe('git revert --continue   # or: git revert --abort');
    });
  });

  describe('an index isomorphic-git cannot update', () => {
    it('index v4 (feature.manyFiles): refused before anything is written, init and steps alike', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      repo.git('update-index', '--index-version', '4');
      const head = repo.git('rev-parse', 'HEAD').trim();
      const r = await tune(repo, [...INIT, '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({
        code: 'index-unsupported',
        hint: 'git config index.version 3 && git update-index --index-version 3',
      });
      expect(repo.git('branch', '--list', 'tune/*')).toBe('');
      expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
      expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head);

      // Init under v3, then the index turns v4: a step must not move the branch and then fail.
      repo.git('update-index', '--index-version', '3');
      expect((await tune(repo, INIT)).code).toBe(0);
      repo.git('update-index', '--index-version', '4');
      const tip = repo.git('rev-parse', 'HEAD').trim();
      const s = await tune(repo, ['config', 'set', 'seed', '5', '--json']);
      expect(s.code, s.stderr).toBe(2);
      expect(JSON.parse(s.stdout).error.code).toBe('index-unsupported');
      expect(repo.git('rev-parse', 'HEAD').trim()).toBe(tip);
      expect(repo.git('status', '--porcelain')).toBe('');
      // The fix it prints works.
      repo.git('config', 'index.version', '3');
      repo.git('update-index', '--index-version', '3');
      expect((await tune(repo, ['config', 'set', 'seed', '5'])).code).toBe(0);
      expect(repo.git('status', '--porcelain')).toBe('');
    });

    it('a split index: refused with the fix', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      repo.git('update-index', '--split-index');
      const r = await tune(repo, [...INIT, '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({
        code: 'index-unsupported',
        hint: 'git config core.splitIndex false && git update-index --no-split-index',
      });
      expect(repo.git('branch', '--list', 'tune/*')).toBe('');
    });
  });

  describe('a branch named like the tuning branch\'s folder', () => {
    it('a branch `tune` (loose or packed) is in the way of tune/<name>: refused as native git would, naming it', async (ctx) => {
      const { expect } = ctx;
      const repo = track(ctx, TempRepo.create());
      repo.git('branch', 'tune');
      for (const packed of [false, true]) {
        if (packed) repo.git('pack-refs', '--all');
        const r = await tune(repo, [...INIT, '--json']);
        expect(r.code, r.stderr).toBe(2);
        expect(JSON.parse(r.stdout).error).toEqual({
          code: 'ref-conflict',
          message: 'cannot create refs/heads/tune/support-desk: refs/heads/tune exists, and git cannot hold both',
          hint: 'git branch -m tune tune-branch   # rename the branch in the way',
          details: [],
        });
        expect(repo.git('for-each-ref', '--format=%(refname)').trim().split('\n')).toEqual(['refs/heads/main', 'refs/heads/tune']);
        expect(repo.git('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
        expect(repo.git('status', '--porcelain')).toBe('');
      }
      repo.git('branch', '-m', 'tune', 'tune-branch');
      expect((await tune(repo, INIT)).code).toBe(0);
      expect(repo.fsck()).toBe('');
    });
  });
});
