import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, startProcess, withCliOnPath } from '../helpers/cli.js';
import { TempRepo } from '../helpers/repo.js';

/**
 * The git hooks (docs/reports.md) in a real repository, with native git
 * running them and `git-tune` on PATH: installed beside the user's own hooks
 * (both run), a hand commit on the tuning branch gets its trailers (and loses
 * any Tune-* lines it should not have), merges, amends and other branches are
 * left alone, a push carries the run tags and logs, and uninstall puts the
 * user's hooks back.
 */
const RUNNER = path.join(ROOT, 'test/fixtures/runner.mjs');
const CASES = [
  '- { id: a, class: c, input: a, checks: [{ type: contains, value: politely }] }',
  '- { id: b, class: c, input: b, checks: [{ type: contains, value: refund }] }',
  '- { id: c, class: c, input: c, checks: [{ type: contains, value: politely }] }',
].join('\n');
const ORIGINAL_POST_COMMIT = '#!/bin/sh\necho "$(git rev-parse --short HEAD)" >> "$(git rev-parse --git-dir)/original-post-commit.log"\n';
const ORIGINAL_PRE_PUSH = '#!/bin/sh\ncat > "$(git rev-parse --git-dir)/original-pre-push.stdin"\n';

/** A command run without blocking the test worker (hooks start node several times per commit). */
const exec = (repo: TempRepo, cmd: string, args: string[], env: Record<string, string> = {}) => startProcess(cmd, args, repo.dir, { ...process.env, ...repo.env, ...env }).done;

/** Native git with its stderr (where hooks speak). */
const git = (repo: TempRepo, args: string[], env: Record<string, string> = {}) => exec(repo, 'git', args, env);
const tune = (repo: TempRepo, args: string[]) => exec(repo, process.execPath, [CLI, ...args]);

const trailers = (repo: TempRepo, rev = 'HEAD') => repo.git('log', '-1', '--format=%(trailers:only,unfold)', rev).trim().split('\n').filter(Boolean);

describe('git hooks on a tuning branch', () => {
  let repo: TempRepo;
  let hooksDir: string;

  beforeAll(async () => {
    repo = TempRepo.create({ 'agents/prompt.md': 'Answer politely.\n', 'cases.yaml': `${CASES}\n` });
    withCliOnPath(repo);
    hooksDir = repo.path('.git', 'hooks');
    mkdirSync(hooksDir, { recursive: true });
    writeFileSync(path.join(hooksDir, 'post-commit'), ORIGINAL_POST_COMMIT);
    chmodSync(path.join(hooksDir, 'post-commit'), 0o755);
    writeFileSync(path.join(hooksDir, 'pre-push'), ORIGINAL_PRE_PUSH);
    chmodSync(path.join(hooksDir, 'pre-push'), 0o755);
    const ok = async (args: string[]) => {
      const r = await tune(repo, args);
      expect(r.code, `git tune ${args.join(' ')}\n${r.stderr}`).toBe(0);
    };
    await ok(['init', 'desk', '--prose', 'agents/**/*.md', '--runner', `node ${RUNNER}`, '--dataset', 'cases.yaml', '--no-hooks']);
    await ok(['select']);
    await ok(['batch']);
    await ok(['run']);
    await ok(['grade', '--verdict', 'PROGRESS']);
  });
  afterAll(() => repo.cleanup());

  it('git tune hooks install: beside the hooks already there, which are kept and chained', async () => {
    const r = repo.tuneJson(['hooks', 'install']);
    expect(r.dir).toBe(hooksDir);
    expect(r.installed.sort()).toEqual(['commit-msg', 'prepare-commit-msg']);
    expect(r.chained.sort()).toEqual(['post-commit', 'pre-push']);
    expect(readFileSync(path.join(hooksDir, 'post-commit.pre-git-tune'), 'utf8')).toBe(ORIGINAL_POST_COMMIT);
    expect(readFileSync(path.join(hooksDir, 'post-commit'), 'utf8')).toContain('git-tune hook post-commit');
    // Installing again changes nothing.
    expect(repo.tuneJson(['hooks', 'install'])).toMatchObject({ installed: [], chained: [], updated: [] });
  });

  it('a hand commit of prose after a graded run is an edit of that run: trailers, sealed; both post-commit hooks run', async () => {
    repo.write({
      'agents/prompt.md': 'Answer politely. Offer a refund.\n',
      '.tune/desk/runs/batch01-nomem-run1/changes.md': '## Refunds\nOffer a refund.\nAims: b\n',
    });
    const r = await git(repo, ['commit', '-q', '-m', 'Offer a refund', '--', 'agents/prompt.md']);
    expect(r.code, r.stderr).toBe(0);
    // changes.md is untracked here: only prose was committed; the edit aims at the run's wrong cases.
    expect(trailers(repo)).toEqual([
      'Tune-Tuning: desk', 'Tune-Step: edit', 'Tune-Run: batch01-nomem-run1', expect.stringMatching(/^Tune-Seal: v1 [0-9a-f]{16}$/),
    ]);
    expect(r.stderr).toContain('git-tune: this commit is an edit after batch01-nomem-run1 (agents/prompt.md)');
    expect(r.stderr).toContain('git-tune next: run the same cases again to confirm the pending edit');
    expect(readFileSync(repo.path('.git', 'original-post-commit.log'), 'utf8').trim()).toBe(repo.git('rev-parse', '--short', 'HEAD').trim());
    const next = repo.tuneJson(['next']);
    expect(next).toMatchObject({ kind: 'confirm', run: 'batch01-nomem-run2' });
    expect(repo.tuneJson(['log']).steps[0]).toMatchObject({ step: 'edit', edit: { status: 'pending', run: 'batch01-nomem-run1', aims: ['b'] } });
  });

  it('Aims come from the run\'s changes.md committed with it; Tune-* lines typed into the message are removed', async () => {
    repo.write({ 'agents/prompt.md': 'Answer politely. Offer a refund. Be brief.\n', '.tune/desk/runs/batch01-nomem-run1/changes.md': '## Brief\nAims: a, b\n' });
    repo.git('add', '-A', 'agents', '.tune');
    const r = await git(repo, ['commit', '-q', '-m', 'Be brief', '-m', 'Tune-Tuning: desk\nTune-Step: grade\nTune-Run: batch01-nomem-run1\nTune-Verdict: PASSED']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('removed trailers a hand commit cannot claim: Tune-Step: grade; Tune-Verdict: PASSED');
    expect(trailers(repo).slice(0, 4)).toEqual(['Tune-Tuning: desk', 'Tune-Step: edit', 'Tune-Run: batch01-nomem-run1', 'Tune-Aims: a,b']);
    expect(repo.tuneJson(['status']).warnings).toEqual([]);
  });

  it('a commit that touches no prose is a note; a message written in the editor gets its trailers after it is written', async () => {
    const editor = repo.path('.git', 'test-editor.sh');
    writeFileSync(editor, '#!/bin/sh\n{ printf "Why batches stay small\\n\\nThe runner is slow.\\n"; cat "$1"; } > "$1.new" && mv "$1.new" "$1"\n');
    chmodSync(editor, 0o755);
    repo.write({ 'notes.md': 'the runner is slow\n' });
    repo.git('add', 'notes.md');
    const r = await git(repo, ['commit', '-q'], { GIT_EDITOR: editor });
    expect(r.code, r.stderr).toBe(0);
    expect(repo.git('log', '-1', '--format=%B').startsWith('Why batches stay small\n\nThe runner is slow.\n\nTune-Tuning: desk\nTune-Step: note\nTune-Seal: v1 ')).toBe(true);
    // Left empty in the editor, the message still aborts the commit.
    repo.write({ 'notes.md': 'the runner is very slow\n' });
    repo.git('add', 'notes.md');
    const before = repo.git('rev-parse', 'HEAD');
    const empty = await git(repo, ['commit', '-q'], { GIT_EDITOR: 'true' });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain('empty commit message');
    expect(repo.git('rev-parse', 'HEAD')).toBe(before);
    expect((await git(repo, ['commit', '-q', '-m', 'slower'])).code).toBe(0);
  });

  it('an amend keeps the trailers it has; a merge gets none; another branch is left alone', async () => {
    const head = trailers(repo);
    expect((await git(repo, ['commit', '-q', '--amend', '-m', 'slower still', '-m', head.join('\n')])).code).toBe(0);
    expect(trailers(repo)).toEqual(head);
    repo.git('branch', 'side', 'main');
    repo.git('switch', '-q', 'side');
    repo.write({ 'side.txt': 'x\n' });
    repo.git('add', 'side.txt');
    const side = await git(repo, ['commit', '-q', '-m', 'on a side branch']);
    expect(side.stderr).not.toContain('git-tune');
    expect(trailers(repo)).toEqual([]);
    repo.git('switch', '-q', 'tune/desk');
    expect((await git(repo, ['merge', '-q', '--no-ff', '-m', 'Merge side', 'side'])).code).toBe(0);
    expect(trailers(repo)).toEqual([]);
    expect(repo.tuneJson(['next']).kind).toBe('confirm');
    expect(repo.fsck()).toBe('');
  });

  it('pre-push: pushing the tuning branch pushes its run tags and logs ref too; the chained hook got the same refs', async () => {
    const remote = new TempRepo('git-tune-remote-');
    try {
      remote.git('init', '-q', '--bare');
      repo.git('remote', 'add', 'origin', remote.dir);
      const r = await git(repo, ['push', '-q', 'origin', 'tune/desk']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('git-tune: pushed refs/tags/tune/desk/*, refs/tune-logs/desk to origin');
      const refs = remote.git('for-each-ref', '--format=%(refname)').trim().split('\n');
      expect(refs).toEqual(['refs/heads/tune/desk', 'refs/tags/tune/desk/batch01-nomem-run1', 'refs/tune-logs/desk']);
      expect(readFileSync(repo.path('.git', 'original-pre-push.stdin'), 'utf8')).toMatch(/^refs\/heads\/tune\/desk [0-9a-f]{40} refs\/heads\/tune\/desk 0{40}\n$/);
      // Another branch: nothing else is pushed.
      const main = await git(repo, ['push', '-q', 'origin', 'main']);
      expect(main.stderr).not.toContain('git-tune');
    } finally {
      remote.cleanup();
    }
  });

  it('git tune hooks uninstall: ours removed, the originals back in place', async () => {
    const r = repo.tuneJson(['hooks', 'uninstall']);
    expect(r.removed.sort()).toEqual(['commit-msg', 'post-commit', 'pre-push', 'prepare-commit-msg']);
    expect(r.restored.sort()).toEqual(['post-commit', 'pre-push']);
    expect(readFileSync(path.join(hooksDir, 'post-commit'), 'utf8')).toBe(ORIGINAL_POST_COMMIT);
    expect(readFileSync(path.join(hooksDir, 'pre-push'), 'utf8')).toBe(ORIGINAL_PRE_PUSH);
    for (const name of ['prepare-commit-msg', 'commit-msg', 'post-commit.pre-git-tune', 'pre-push.pre-git-tune']) {
      expect(existsSync(path.join(hooksDir, name)), name).toBe(false);
    }
    // A hand commit now gets no trailers (the fold still counts prose after a graded run as an edit).
    repo.write({ 'notes.md': 'no hooks\n' });
    repo.git('commit', '-q', '-am', 'no hooks');
    expect(trailers(repo)).toEqual([]);
  });
});

describe('git tune init', () => {
  it('installs the hooks, and with --agent-skill adds the skill file to its commit', async () => {
    const repo = TempRepo.create();
    try {
      const r = await tune(repo, ['init', 'desk', '--prose', 'agents/**/*.md', '--runner', 'node agent.js', '--agent-skill']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('added the skill file for coding agents: .claude/skills/git-tune/SKILL.md');
      expect(r.stderr).toContain('installed git hooks in .git/hooks, and the merge driver of the generated README.md and USAGE.md (so native git revert and cherry-pick do not conflict in them); `git tune hooks uninstall` removes them');
      for (const name of ['prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-push']) {
        expect(readFileSync(repo.path('.git', 'hooks', name), 'utf8')).toContain(`git-tune hook ${name}`);
      }
      const skill = readFileSync(path.join(ROOT, 'templates/skill/SKILL.md'), 'utf8');
      expect(repo.git('show', 'tune/desk:.claude/skills/git-tune/SKILL.md')).toBe(skill);
      expect(repo.git('diff-tree', '--no-commit-id', '--name-only', '-r', 'tune/desk').trim().split('\n')).toEqual([
        '.claude/skills/git-tune/SKILL.md', '.tune/desk/README.md', '.tune/desk/USAGE.md', '.tune/desk/config.yaml',
      ]);
      expect(repo.git('status', '--porcelain')).toBe('');
    } finally {
      repo.cleanup();
    }
  });
});

describe('where hooks go, and what happens without git-tune', () => {
  it('installs into core.hooksPath, and the scripts do nothing when git-tune cannot be found', async () => {
    const repo = TempRepo.create();
    try {
      repo.git('config', 'core.hooksPath', 'githooks');
      const r = repo.tuneJson(['hooks', 'install']);
      expect(r.dir).toBe(repo.path('githooks'));
      expect(existsSync(repo.path('githooks', 'prepare-commit-msg'))).toBe(true);
      // No git-tune on PATH and none in node_modules: the hooks stand aside.
      const c = spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'plain'], {
        cwd: repo.dir, env: { ...process.env, ...repo.env, PATH: ['/usr/bin', '/bin', path.dirname(process.execPath)].join(path.delimiter) }, encoding: 'utf8',
      });
      expect(c.status, c.stderr).toBe(0);
      expect(c.stderr).toBe('');
    } finally {
      repo.cleanup();
    }
  });
});
