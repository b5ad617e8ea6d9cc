import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, startProcess, tuneOk } from '../helpers/cli.js';
import { fsckProblems, TempRepo } from '../helpers/repo.js';
import { exampleRepo, templateAsync } from '../helpers/tuning.js';

/**
 * Native `git revert` and `git cherry-pick` of an edit on a tuning branch
 * (docs/git-model.md#merge-driver), with the hooks and the merge driver
 * `git tune init` installs: no conflict in the README git-tune generates,
 * the revert recorded as a `revert` step (next says what `git tune revert`
 * would lead to), a cherry-picked edit of another tuning a hand edit here;
 * and without the driver, the same revert stops on a conflict.
 *
 * Two agents: the fleet fixture (test/fixtures/fleet: three cases, an editor
 * that adds one rule), driven on to `done` after the revert, and the bundled
 * example agent.
 */
const FLEET = path.join(ROOT, 'test/fixtures/fleet');
const README = '.tune/shop/README.md';

/** A folder holding `git-tune` (the built CLI), for PATH: the hooks run it from there. */
const bin = mkdtempSync(path.join(os.tmpdir(), 'git-tune-md-bin-'));
symlinkSync(CLI, path.join(bin, 'git-tune'));
const PATH = [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);

const repos: TempRepo[] = [];
afterAll(() => {
  for (const r of repos) r.cleanup();
  rmSync(bin, { recursive: true, force: true });
});

const withPath = (repo: TempRepo) => {
  repo.env.PATH = PATH;
  repo.env.TUNE_TARGET = 'small';
  return repo;
};
const git = (repo: TempRepo, args: string[], env: Record<string, string> = {}) => startProcess('git', args, repo.dir, { ...process.env, ...repo.env, ...env }).done;
const tune = (repo: TempRepo, args: string[]) => tuneOk(repo, args);
const json = async <T = any>(repo: TempRepo, args: string[]): Promise<T> => JSON.parse((await tune(repo, [...args, '--json'])).stdout) as T;
const trailers = (repo: TempRepo, rev = 'HEAD') => repo.git('log', '-1', '--format=%(trailers:only,unfold)', rev).trim().split('\n').filter(Boolean);
const show = (repo: TempRepo, rev: string, file: string) => repo.git('show', `${rev}:${file}`);

interface Shop {
  repo: TempRepo;
  /** The edit recorded by `git tune edit` after batch01-nomem-run1 (run2 ran since). */
  edit: string;
}

/**
 * Tuning `shop` on the fleet fixture, hooks and driver installed by init:
 * run 1 graded NO CHANGE, an edit adding the hours rule, run 2 run (the
 * README changed since the edit). Tuning `other` was started from tune/shop
 * after run 1 (so it holds .tune/shop/ as it was then: its README differs
 * from the one the edit changed) and has a graded run of its own. Built
 * once, copied per test.
 */
async function shop(): Promise<Shop> {
  const made = await templateAsync('shop', async () => {
    const repo = withPath(TempRepo.create({ 'agents/rules.md': '- refund: 30 days\n- shipping: 3 days\n' }));
    repo.write({ 'cases.yaml': readFileSync(path.join(FLEET, 'cases.yaml'), 'utf8') });
    repo.git('add', 'cases.yaml');
    repo.git('commit', '-q', '-m', 'cases');
    const init = ['--prose', 'agents/**/*.md', '--runner', `node ${FLEET}/agent.mjs`, '--editor', `node ${FLEET}/editor.mjs`, '--dataset', 'cases.yaml'];
    await tune(repo, ['init', 'shop', ...init]);
    for (const [k, v] of [['minBatch', '3'], ['maxRetries', '1']]) await tune(repo, ['config', 'set', k!, v!]);
    for (const step of [['select'], ['batch'], ['run']]) await tune(repo, step);
    await tune(repo, ['init', 'other', ...init]);
    for (const step of [['config', 'set', 'minBatch', '3'], ['select'], ['batch'], ['run'], ['grade', '--draft', '--force'], ['grade']]) await tune(repo, step);
    repo.git('switch', '-q', 'tune/shop');
    for (const step of [['grade', '--draft', '--force'], ['grade']]) await tune(repo, step);
    repo.write({ 'agents/rules.md': '- refund: 30 days\n- shipping: 3 days\n- hours: 9 to 5\n', '.tune/shop/runs/batch01-nomem-run1/changes.md': '# Changes\n\nAdded the opening hours.\n\nAims: shop-hours\n' });
    await tune(repo, ['edit']);
    repo.git('tag', 'the-edit');
    await tune(repo, ['run']);
    return repo;
  });
  const repo = withPath(TempRepo.copyOf(made, 'git-tune-md-'));
  repos.push(repo);
  return { repo, edit: repo.git('rev-parse', 'the-edit').trim() };
}

// Generous limits: the template alone is 16 CLI steps, and a loaded CI machine is slow.
describe.concurrent('native git revert and cherry-pick of an edit, with the merge driver', { timeout: 180_000 }, () => {
  it('init installed the driver: [merge "git-tune"] in .git/config, the attributes in .git/info/attributes, nothing committed', async () => {
    const { repo } = await shop();
    expect(repo.git('config', '--get', 'merge.git-tune.driver')).toContain('merge-driver');
    expect(readFileSync(repo.path('.git', 'info', 'attributes'), 'utf8')).toContain('.tune/*/README.md merge=git-tune\n.tune/*/USAGE.md merge=git-tune\n');
    expect(repo.git('check-attr', 'merge', '--', README).trim()).toBe(`${README}: merge: git-tune`);
    expect(repo.git('ls-files', '.gitattributes').trim()).toBe('');
  });

  it('git revert --no-edit <edit>: no conflict, a revert step; next as after `git tune revert`; auto goes on to done', async () => {
    const { repo, edit } = await shop();
    const before = repo.git('rev-parse', 'HEAD').trim();
    const r = await git(repo, ['revert', '--no-edit', edit]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('CONFLICT');
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
    expect(trailers(repo)).toEqual(['Tune-Tuning: shop', 'Tune-Step: revert', `Tune-Reverts: ${edit}`, expect.stringMatching(/^Tune-Seal: v1 [0-9a-f]{16}$/)]);
    expect(readFileSync(repo.path('agents/rules.md'), 'utf8')).toBe('- refund: 30 days\n- shipping: 3 days\n');
    // The driver kept the tip's README (the next step regenerates it for the history it lands on).
    expect(show(repo, 'HEAD', README)).toBe(show(repo, before, README));
    const revert = repo.git('rev-parse', 'HEAD').trim();
    const log = await json(repo, ['log']);
    expect(log.steps[0]).toMatchObject({ step: 'revert' });
    expect(log.steps.find((s: any) => s.commit === edit)).toMatchObject({ edit: { status: 'reverted', revertedBy: repo.git('rev-parse', 'HEAD').trim() } });

    // What `git tune revert` of the same edit leads to, in a copy made before.
    const tool = withPath(TempRepo.copyOf(repo, 'git-tune-md-tool-'));
    repos.push(tool);
    tool.git('reset', '-q', '--hard', before);
    await tune(tool, ['revert', edit]);
    const [next, toolNext] = await Promise.all([json(repo, ['next']), json(tool, ['next'])]);
    expect(next).toEqual(toolNext);
    expect(next).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run2' });

    // The revert leaves shop-hours wrong for good: 1 of 3 cases stuck is over the default maxStuckShare (a fifth); this test is about the merge driver.
    await tune(repo, ['config', 'set', 'maxStuckShare', '0.5']);
    const auto = await tune(repo, ['auto', '--plain']);
    expect(auto.stdout + auto.stderr).toContain('done');
    expect((await json(repo, ['next'])).kind).toBe('done');
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
    // The steps after it regenerated the README with the revert in it.
    expect(show(repo, 'HEAD', README)).toContain(`reverted by ${revert.slice(0, 7)}`);
  });

  it('without the driver (git tune hooks uninstall removes it), the same revert stops on a conflict in the README', async () => {
    const { repo, edit } = await shop();
    const attributes = repo.path('.git', 'info', 'attributes');
    writeFileSync(attributes, `*.png binary\n${readFileSync(attributes, 'utf8')}`);
    const out = await json(repo, ['hooks', 'uninstall']);
    expect(out.mergeDriver).toMatchObject({ config: 'removed', attributeLines: 'removed' });
    // The user's own lines stay.
    expect(readFileSync(attributes, 'utf8')).toBe('*.png binary\n');
    expect((await git(repo, ['config', '--get-regexp', '^merge\\.git-tune'])).stdout).toBe('');
    const r = await git(repo, ['revert', '--no-edit', edit]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain(`CONFLICT (content): Merge conflict in ${README}`);
    await git(repo, ['revert', '--abort']);
    repo.git('switch', '-q', 'tune/other');
    const pick = await git(repo, ['cherry-pick', edit]);
    expect(pick.code).not.toBe(0);
    expect(pick.stdout).toContain(`CONFLICT (content): Merge conflict in ${README}`);
    await git(repo, ['cherry-pick', '--abort']);
    repo.git('switch', '-q', 'tune/shop');
    // hooks install puts it back for a tuning that exists, and the revert goes through.
    expect((await json(repo, ['hooks', 'install'])).mergeDriver).toMatchObject({ config: 'installed', attributeLines: 'installed' });
    expect(readFileSync(attributes, 'utf8')).toMatch(/^\*\.png binary\n\n# git-tune: .*\n\.tune\/\*\/README\.md merge=git-tune\n\.tune\/\*\/USAGE\.md merge=git-tune\n$/);
    expect((await git(repo, ['revert', '--no-edit', edit])).code).toBe(0);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it('git cherry-pick -e of an edit from another tuning: a hand edit of this one, its foreign trailers replaced; no conflict', async () => {
    const { repo, edit } = await shop();
    repo.git('switch', '-q', 'tune/other');
    const before = repo.git('rev-parse', 'HEAD').trim();
    // With -e, git tells prepare-commit-msg the message comes from a `merge` (and runs no commit-msg): still a hand commit here.
    const r = await git(repo, ['cherry-pick', '-x', '-e', edit], { GIT_EDITOR: 'true' });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
    expect(trailers(repo)).toEqual(['Tune-Tuning: other', 'Tune-Step: edit', 'Tune-Run: batch01-nomem-run1', expect.stringMatching(/^Tune-Seal: v1 /)]);
    expect(repo.git('log', '-1', '--format=%B')).toContain(`(cherry picked from commit ${edit})`);
    expect(readFileSync(repo.path('agents/rules.md'), 'utf8')).toContain('- hours: 9 to 5');
    // shop's README on this branch is what this branch had (the driver kept ours): a file of shop's history, not of this one.
    expect(show(repo, 'HEAD', README)).toBe(show(repo, before, README));
    const log = await json(repo, ['log']);
    expect(log.steps[0]).toMatchObject({ step: 'edit', run: 'batch01-nomem-run1', edit: { status: 'pending' } });
    expect(await json(repo, ['status'])).toMatchObject({ warnings: [] });
    expect(await json(repo, ['next'])).toMatchObject({ kind: 'confirm', run: 'batch01-nomem-run2' });
    // The next step writes other's README with the edit in it, no conflict.
    await tune(repo, ['run']);
    expect(show(repo, 'HEAD', '.tune/other/README.md')).toContain('edit after batch01-nomem-run1: pending');
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});

describe('the same on the bundled example agent', { timeout: 180_000 }, () => {
  it('git revert --no-edit of an edit after a later run: no conflict, a revert step, next as after `git tune revert`; the next step regenerates the README', async () => {
    const repo = withPath(exampleRepo({ desk: {} }, 'git-tune-md-example-'));
    repos.push(repo);
    const readme = '.tune/desk/README.md';
    for (const step of [['select'], ['batch'], ['run'], ['grade', '--draft', '--force'], ['grade']]) await tune(repo, step);
    const returns = repo.path('agents/prompts/returns.md');
    const prose = readFileSync(returns, 'utf8');
    writeFileSync(returns, `${prose.trimEnd()}\n- Always say how many days are left to return an item.\n`);
    repo.write({ '.tune/desk/runs/batch01-nomem-run1/changes.md': '# Changes\n\nSay the days left.\n' });
    await tune(repo, ['edit']);
    const edit = repo.git('rev-parse', 'HEAD').trim();
    await tune(repo, ['run']);
    const before = repo.git('rev-parse', 'HEAD').trim();
    const tool = withPath(TempRepo.copyOf(repo, 'git-tune-md-example-tool-'));
    repos.push(tool);

    const r = await git(repo, ['revert', '--no-edit', edit]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
    expect(readFileSync(returns, 'utf8')).toBe(prose);
    expect(trailers(repo).slice(0, 3)).toEqual(['Tune-Tuning: desk', 'Tune-Step: revert', `Tune-Reverts: ${edit}`]);
    expect(show(repo, 'HEAD', readme)).toBe(show(repo, before, readme));
    const revert = repo.git('rev-parse', 'HEAD').trim();
    await tune(tool, ['revert', edit]);
    const [next, toolNext] = await Promise.all([json(repo, ['next']), json(tool, ['next'])]);
    expect(next).toEqual(toolNext);
    expect(next).toMatchObject({ kind: 'grade', run: 'batch01-nomem-run2' });
    // The next steps (as next says) regenerate the README, with the revert in it; no conflict, nothing left over.
    for (const step of [['grade', '--draft', '--force'], ['grade']]) await tune(repo, step);
    expect(show(repo, 'HEAD', readme)).toContain(`reverted by ${revert.slice(0, 7)}`);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(fsckProblems(repo)).toBe('');
  });
});
