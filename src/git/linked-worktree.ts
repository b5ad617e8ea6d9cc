import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { usageError } from '../errors.js';
import type { Env } from './identity.js';
import { runGit } from './native.js';
import { recordTempsOf } from './temp-files.js';
import { NativeGitRepo } from './native-repo.js';
import type { GitRepo } from './types.js';

/**
 * A tuning driven in a linked worktree of native git (`git worktree add`),
 * so several tunings of one repository run side by side, each with its own
 * working tree, index and HEAD: `git tune auto --fleet` drives every target
 * of a fleet at once (docs/auto.md, Fleets).
 *
 * Refs, objects, locks and git-tune's own files live in the main repository
 * (its `.git`), so every step lands on the branch by the same compare-and-swap
 * as anywhere else; the working tree, its index and its HEAD are the linked
 * worktree's (its private git dir, `.git/worktrees/<id>`), which native git
 * serves. Needs native git on PATH.
 */
export interface LinkedWorktree {
  repo: GitRepo;
  /** Whether this call made the worktree (it did not exist). */
  created: boolean;
}

/** The private git dir a linked worktree's `.git` file points at, or null when `dir` is not one. */
async function privateGitdir(dir: string): Promise<string | null> {
  const text = await fs.readFile(path.join(dir, '.git'), 'utf8').catch(() => null);
  const m = text ? /^gitdir: (.+)$/m.exec(text) : null;
  return m ? path.resolve(dir, m[1]!.trim()) : null;
}

/** Opens (making it when missing) the linked worktree at `dir` with `branch` checked out. */
export async function openLinkedWorktree(main: GitRepo, branch: string, dir: string, env: Env): Promise<LinkedWorktree> {
  let created = false;
  if (!existsSync(path.join(dir, '.git'))) {
    await fs.mkdir(path.dirname(dir), { recursive: true });
    // A worktree removed by hand leaves its record behind until pruned.
    await runGit(['worktree', 'prune'], main.dir, cleanEnv(env));
    await runGit(['worktree', 'add', '--quiet', dir, branch], main.dir, cleanEnv(env));
    created = true;
  }
  const gitdir = await privateGitdir(dir);
  if (!gitdir) throw usageError('bad-worktree', `${dir} is not a linked worktree of this repository (its .git is not a gitdir file)`, `rm -rf '${dir}'   # git-tune makes it again`);
  const head = (await fs.readFile(path.join(gitdir, 'HEAD'), 'utf8').catch(() => '')).trim();
  if (head !== `ref: refs/heads/${branch}`) {
    throw usageError('bad-worktree', `the worktree ${dir} has ${head.replace('ref: refs/heads/', '') || 'nothing'} checked out, not ${branch}`,
      `git worktree remove --force '${dir}'   # git-tune makes it again`);
  }
  return { repo: new LinkedWorktreeRepo(main, new NativeGitRepo(dir, gitdir)), created };
}

/** Removes the linked worktree at `dir` when it holds no change (tracked or not); returns whether it did. */
export async function removeLinkedWorktreeIfClean(main: GitRepo, dir: string, env: Env): Promise<boolean> {
  if (!existsSync(path.join(dir, '.git'))) return false;
  const { stdout } = await runGit(['status', '--porcelain', '--untracked-files=all'], dir, cleanEnv(env));
  if (stdout.trim() !== '') return false;
  await runGit(['worktree', 'remove', dir], main.dir, cleanEnv(env));
  return true;
}

function cleanEnv(env: Env): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  for (const key of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE']) delete out[key];
  return out;
}

/** The main repository for refs and objects; the linked worktree for its files, index and HEAD. */
class LinkedWorktreeRepo implements GitRepo {
  readonly dir: string;
  readonly gitdir: string;
  readonly indexDir: string;
  readonly backend: GitRepo['backend'];

  constructor(private readonly main: GitRepo, private readonly tree: NativeGitRepo) {
    this.dir = tree.dir;
    this.gitdir = main.gitdir;
    this.indexDir = tree.gitdir;
    this.backend = main.backend;
    recordTempsOf(this);
  }

  resolveRef(ref: string) { return ref === 'HEAD' ? this.tree.headRef().then((r) => (r ? this.main.resolveRef(r) : null)) : this.main.resolveRef(ref); }
  headRef() { return this.tree.headRef(); }
  async setHeadRef(): Promise<void> {
    throw usageError('linked-worktree', 'a fleet worktree keeps its branch checked out', 'git worktree list');
  }
  listRefs(prefix: string) { return this.main.listRefs(prefix); }
  readCommit(oid: string) { return this.main.readCommit(oid); }
  firstParentLog(tip: string, opts?: { short?: boolean }) { return this.main.firstParentLog(tip, opts); }
  readBlobAt(commit: string, file: string) { return this.main.readBlobAt(commit, file); }
  listFiles(commit: string, dir: string) { return this.main.listFiles(commit, dir); }
  changedPaths(commit: string) { return this.main.changedPaths(commit); }
  treeOidAt(commit: string, file: string) { return this.main.treeOidAt(commit, file); }
  writeCommit(commit: Parameters<GitRepo['writeCommit']>[0]) { return this.main.writeCommit(commit); }
  writeBlobFiles(files: readonly string[]) { return this.main.writeBlobFiles(files); }
  writeCommitChain(parent: string | null, next: Parameters<GitRepo['writeCommitChain']>[1]) { return this.main.writeCommitChain(parent, next); }
  compareAndSwapRef(ref: string, oid: string, expected: string | null, reflog?: Parameters<GitRepo['compareAndSwapRef']>[3]) { return this.main.compareAndSwapRef(ref, oid, expected, reflog); }
  isAncestor(ancestor: string, commit: string) { return this.main.isAncestor(ancestor, commit); }
  deleteRef(ref: string, expected: string) { return this.main.deleteRef(ref, expected); }
  createRefs(refs: ReadonlyArray<readonly [string, string]>) { return this.main.createRefs(refs); }
  withIndexLock<T>(fn: () => Promise<T>) { return this.tree.withIndexLock(fn); }
  checkoutPaths(commit: string, paths: readonly string[]) { return this.tree.checkoutPaths(commit, paths); }
  readConfig(key: string) { return this.main.readConfig(key); }
  isShallow() { return this.main.isShallow(); }
  gitPath(name: string, env: Env) { return this.tree.gitPath(name, env); }
  configGet(key: string, env: Env) { return this.tree.configGet(key, env); }
  configSet(key: string, value: string, env: Env) { return this.tree.configSet(key, value, env); }
  configRemoveSection(section: string, env: Env) { return this.tree.configRemoveSection(section, env); }
  stagedPaths(env: Env) { return this.tree.stagedPaths(env); }
  readStaged(file: string, env: Env) { return this.tree.readStaged(file, env); }
  uncommittedPaths(env: Env) { return this.tree.uncommittedPaths(env); }
  push(remote: string, refspecs: readonly string[], opts: Parameters<GitRepo['push']>[2]) { return this.main.push(remote, refspecs, opts); }
  fetch(remote: string, refspecs: readonly string[], env: Env) { return this.main.fetch(remote, refspecs, env); }
  fastForward(ref: string, env: Env) { return this.tree.fastForward(ref, env); }
  switchBranch(branch: string, env: Env) { return this.tree.switchBranch(branch, env); }
  detachHead(commit: string, env: Env) { return this.tree.detachHead(commit, env); }
}
