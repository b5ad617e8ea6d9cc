import { promises as fs } from 'node:fs';
import path from 'node:path';
import { tagRef } from '../core/names.js';
import { formatStep, type Step } from '../core/steps.js';
import { conflictError, usageError } from '../errors.js';
import { resolveIdentity, type Env } from '../git/identity.js';
import type { FileChange, GitRepo } from '../git/types.js';
import { assertCleanGitState } from './tuning.js';

/**
 * Apply: one step becomes one commit on the tuning branch. Everything that
 * can fail is checked before the first write; the branch moves by
 * compare-and-swap; the index and working tree follow, so `git status` stays
 * clean for what was committed.
 */
export interface StepCommit {
  step: Step;
  subject: string;
  body?: string;
  changes: ReadonlyMap<string, FileChange>;
  /** Run names to tag `tune/<name>/<run>` on the new commit. */
  tags?: string[];
  /** Paths the command read from the working tree on purpose (findings.md, prose): not "dirty". */
  fromWorktree?: ReadonlySet<string>;
}

export interface CommitTarget {
  repo: GitRepo;
  ref: string;
  /** The branch tip this step builds on (null: a new branch). */
  parent: string | null;
  /** What the ref must hold now; defaults to `parent` (init: null, the branch is new). */
  expected?: string | null;
  tuning: string;
  /** Whether HEAD is on this branch (then index and working tree follow). */
  onBranch: boolean;
}

export interface WriteContext {
  env: Env;
  now: Date;
}

async function sameAsCommitted(repo: GitRepo, parent: string | null, file: string): Promise<boolean> {
  const committed = parent ? await repo.readBlobAt(parent, file) : null;
  let onDisk: Buffer | null = null;
  try {
    onDisk = await fs.readFile(path.join(repo.dir, file));
  } catch {
    onDisk = null;
  }
  if (committed === null || onDisk === null) return committed === null && onDisk === null;
  return Buffer.compare(Buffer.from(committed), onDisk) === 0;
}

/** Refuses to overwrite a user's uncommitted change to a file this step writes. */
export async function assertNotDirty(target: CommitTarget, commit: StepCommit): Promise<void> {
  if (!target.onBranch) return;
  const dirty: string[] = [];
  for (const file of commit.changes.keys()) {
    if (commit.fromWorktree?.has(file)) continue;
    if (!(await sameAsCommitted(target.repo, target.parent, file))) dirty.push(file);
  }
  if (dirty.length > 0) {
    throw usageError(
      'dirty-file',
      `uncommitted changes in ${dirty.join(', ')} would be overwritten`,
      `commit or stash them first: git stash push -- ${dirty.map((d) => `'${d}'`).join(' ')}`,
    );
  }
}

export async function commitStep(target: CommitTarget, commit: StepCommit, ctx: WriteContext): Promise<string> {
  const oids = await commitSteps(target, [commit], ctx);
  return oids[0]!;
}

/**
 * Several steps as a chain of commits that lands with one compare-and-swap:
 * all of them, or (on any failure) none.
 */
export async function commitSteps(target: CommitTarget, commits: readonly StepCommit[], ctx: WriteContext): Promise<string[]> {
  if (!target.onBranch) return writeSteps(target, commits, ctx);
  // On the checked-out branch, index.lock is held from the dirty check to the
  // checkout, as native `git commit` holds it around its ref update: of two
  // steps racing, the loser sees `ref-moved` (not a file the winner has not
  // refreshed yet, reported as dirty), and the winner's files are never
  // overwritten by a slower step's checkout.
  return target.repo.withIndexLock(async () => {
    await assertCleanGitState(target.repo);
    const expected = target.expected === undefined ? target.parent : target.expected;
    const current = await target.repo.resolveRef(target.ref);
    if (current !== expected) {
      throw conflictError(
        'ref-moved',
        `${target.ref} moved while this command ran (expected ${expected?.slice(0, 7) ?? 'no ref'}, found ${current?.slice(0, 7) ?? 'no ref'})`,
        'another command wrote a step first; run `git tune next` and try again',
      );
    }
    return writeSteps(target, commits, ctx);
  });
}

async function writeSteps(target: CommitTarget, commits: readonly StepCommit[], ctx: WriteContext): Promise<string[]> {
  const { repo } = target;
  const touched = new Set<string>();
  for (const commit of commits) {
    // A later commit of the chain may rewrite a file an earlier one wrote; only the first is checked against the disk.
    const fresh = new Map([...commit.changes].filter(([file]) => !touched.has(file)));
    await assertNotDirty(target, { ...commit, changes: fresh });
    for (const file of commit.changes.keys()) touched.add(file);
    for (const run of commit.tags ?? []) {
      const ref = tagRef(target.tuning, run);
      if (await repo.resolveRef(ref)) {
        throw usageError('tag-exists', `tag ${ref.replace('refs/tags/', '')} already exists`, `git tag -d ${ref.replace('refs/tags/', '')}   # only if it is left over from another repository`);
      }
    }
  }
  const { author, committer } = await resolveIdentity(repo.gitdir, ctx.env, ctx.now);
  const oids: string[] = [];
  let parent = target.parent;
  for (const commit of commits) {
    const message = formatStep(commit.step, commit.subject, commit.body ?? '');
    parent = await repo.writeCommit({ parent, changes: commit.changes, message, author, committer });
    oids.push(parent);
  }
  const tip = oids[oids.length - 1]!;
  await repo.compareAndSwapRef(target.ref, tip, target.expected === undefined ? target.parent : target.expected);
  for (const [i, commit] of commits.entries()) {
    for (const run of commit.tags ?? []) await repo.compareAndSwapRef(tagRef(target.tuning, run), oids[i]!, null);
  }
  if (target.onBranch) await repo.checkoutPaths(tip, [...touched]);
  return oids;
}

/** Where the next step of a loaded tuning goes: on top of the tip it was read at. */
export function targetOf(tuning: { repo: GitRepo; ref: string; tip: string; name: string; onBranch: boolean }): CommitTarget {
  return { repo: tuning.repo, ref: tuning.ref, parent: tuning.tip, tuning: tuning.name, onBranch: tuning.onBranch };
}
