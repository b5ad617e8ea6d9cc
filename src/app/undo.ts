import { singleQuoted } from '../core/argv.js';
import { branchName, tagRef } from '../core/names.js';
import { parseStep } from '../core/steps.js';
import { parseMessage } from '../core/trailers.js';
import { tuningDir } from '../core/paths.js';
import { conflictError, historyError, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { refuseWhileDriven, withToolLock } from '../git/lock-owner.js';
import { crashPoint } from '../faults/crash.js';
import { moveAside, offTheBranch, recordIdentity, type AbandonedMove } from './abandon.js';
import { forgetTagsSettled, markTagsSettled } from './tags-settled.js';
import { assertNotDirty } from './commit.js';
import { uncommittedProse } from './prose.js';
import { clearJournal, writeJournal } from './recover.js';
import { assertCleanGitState, type Tuning } from './tuning.js';

/**
 * `git tune undo [N]`: the tuning branch back N commits on its first-parent
 * line, as `git reset --keep` would do it for the tuning's own files: refused
 * with uncommitted prose or `.tune/<name>/` changes, past the init step, or
 * over steps a remote-tracking branch holds (unless forced). The run tags
 * and logs of the steps it drops are moved aside (src/app/abandon.ts), and
 * the branch's reflog gets the move, so `git reset --keep <old tip>` (or
 * `tune/<name>@{1}`) undoes the undo.
 */
export interface DroppedStep {
  commit: string;
  subject: string;
  /** The step kind, or null for a hand commit (or a step whose trailers a rewrite lost). */
  step: string | null;
  run: string | null;
}

export interface UndoOutcome {
  tuning: string;
  branch: string;
  from: string;
  to: string;
  /** Newest first. */
  dropped: DroppedStep[];
  /** Run tags the dropped steps held, moved aside. */
  runs: string[];
  /** Files the working tree and index were moved to `to` on (none when the branch is not checked out). */
  paths: string[];
  /** Dropped steps a remote-tracking branch holds (undone only with --force). */
  pushed: string[];
  dryRun: boolean;
  moved: AbandonedMove | null;
  /** The command that puts the branch back where it was. */
  restore: string;
  /** The same through the branch's reflog. */
  reflog: string;
}

export interface UndoOptions {
  count: number;
  force?: boolean;
  dryRun?: boolean;
  env: Env;
  now: Date;
}

export async function undoSteps(tuning: Tuning, opts: UndoOptions): Promise<UndoOutcome> {
  const { repo, name } = tuning;
  const n = opts.count;
  if (!Number.isInteger(n) || n < 1) throw usageError('bad-count', `the number of steps to undo must be a whole number from 1 on, not ${n}`, 'git tune undo 1');
  const commits = tuning.commits;
  const undoable = commits.length - 1; // the init commit stays
  if (n > undoable) {
    throw historyError('undo-past-init', `tune/${name} has ${undoable} step${undoable === 1 ? '' : 's'} after its init step: undo ${n} would go past it`,
      undoable > 0 ? `git tune undo ${undoable}   # back to the init step` : `git branch -D ${branchName(name)}   # to drop the whole tuning (switch away first)`);
  }
  // Not while `git tune auto` drives this tuning in another process (exit 4, src/git/lock-owner.ts).
  await refuseWhileDriven(repo.gitdir, name, !tuning.onBranch);
  const from = tuning.tip;
  const to = commits[commits.length - 1 - n]!.oid;
  const droppedOids = commits.slice(commits.length - n).map((c) => c.oid).reverse();
  const dropped: DroppedStep[] = [];
  for (const oid of droppedOids) {
    const { message } = await repo.readCommit(oid);
    const step = parseStep(message);
    const own = step?.tuning === name ? step : null;
    dropped.push({ commit: oid, subject: parseMessage(message).subject, step: own?.step ?? null, run: own && 'run' in own && typeof own.run === 'string' ? own.run : null });
  }

  const oldest = droppedOids[droppedOids.length - 1]!;
  const pushed: string[] = [];
  for (const r of await repo.listRefs('refs/remotes')) {
    if (r.ref.endsWith('/HEAD')) continue;
    if (await repo.isAncestor(oldest, r.oid).catch(() => false)) pushed.push(r.ref.replace(/^refs\/remotes\//, ''));
  }
  if (pushed.length > 0 && !opts.force) {
    throw historyError('undo-pushed', `the steps to undo are already pushed: ${pushed.join(', ')} holds ${oldest.slice(0, 7)}; undoing them here rewrites published history`,
      `git tune undo ${n} --force   # then the remote needs a forced push too`);
  }

  const dropping = new Set(droppedOids);
  const kept = new Set(commits.slice(0, commits.length - n).map((c) => c.oid));
  // The tags of the dropped runs, and any other no longer reachable from where the branch goes (an earlier reset's).
  const runs: Array<{ run: string; commit: string }> = [];
  for (const r of await repo.listRefs(tagRef(name, ''))) {
    const t = { run: r.ref.slice(tagRef(name, '').length), commit: r.oid };
    if (dropping.has(t.commit) || (await offTheBranch(repo, t.commit, kept, to))) runs.push(t);
  }

  const paths = tuning.onBranch ? await pathsBetween(tuning, droppedOids) : [];
  const restore = tuning.onBranch ? `git reset --keep ${from}` : `git branch -f ${branchName(name)} ${from}`;
  const reflog = tuning.onBranch ? `git reset --keep ${branchName(name)}@{1}` : `git branch -f ${branchName(name)} ${branchName(name)}@{1}`;
  const outcome: UndoOutcome = {
    tuning: name, branch: branchName(name), from, to, dropped, runs: runs.map((r) => r.run), paths, pushed,
    dryRun: opts.dryRun === true, moved: null, restore, reflog,
  };
  if (tuning.onBranch) await assertNothingUncommitted(tuning, from, paths, opts.env);
  if (opts.dryRun) return outcome;

  const apply = async () => {
    const current = await repo.resolveRef(tuning.ref);
    if (current !== from) {
      throw conflictError('ref-moved', `${tuning.ref} moved while this command ran (expected ${from.slice(0, 7)}, found ${current?.slice(0, 7) ?? 'no ref'})`,
        'another command wrote a step first; run `git tune next` and try again');
    }
    if (tuning.onBranch) {
      await assertCleanGitState(repo);
      await assertNothingUncommitted(tuning, from, paths, opts.env);
    }
    // Who moved the branch, for its reflog (git's own fallback when no identity is set, as `git reset` has).
    const committer = await recordIdentity(repo, { env: opts.env, now: opts.now });
    await forgetTagsSettled(repo.gitdir, name);
    outcome.moved = await moveAside(repo, name, {
      runs, why: `git tune undo ${n}`, from, tip: to, onBranch: kept,
    }, { env: opts.env, now: opts.now });
    await crashPoint('undo:after-tags');
    // A kill from here on is finished by the next command, as for a step (src/app/recover.ts).
    await writeJournal(repo, { tuning: name, ref: tuning.ref, base: from, to, tags: [], paths, head: null, command: `git tune undo ${n}` });
    await repo.compareAndSwapRef(tuning.ref, to, from, { message: `tune undo: moving back ${n} step${n === 1 ? '' : 's'} to ${to}`, committer });
    await crashPoint('undo:after-ref');
    if (paths.length > 0) await repo.checkoutPaths(to, paths);
    await clearJournal(repo, name);
    await crashPoint('undo:after-checkout');
    // The tags are settled for this tip: the next command's start need not look again (src/app/abandon.ts).
    await markTagsSettled(repo.gitdir, name, to);
  };
  await withToolLock(repo.gitdir, name, `git tune undo ${n}`, () => (tuning.onBranch ? repo.withIndexLock(apply) : apply()));
  return outcome;
}

/** Every path the dropped commits changed: what the working tree and index move back on. */
async function pathsBetween(tuning: Tuning, dropped: readonly string[]): Promise<string[]> {
  const paths = new Set<string>();
  for (const oid of dropped) for (const p of await tuning.repo.changedPaths(oid)) paths.add(p);
  return [...paths].sort();
}

/**
 * The existing dirty checks: no uncommitted prose, nothing uncommitted under
 * `.tune/<name>/`, and no file the undo moves back holding a change (on disk
 * or staged) that the old tip does not hold.
 */
async function assertNothingUncommitted(tuning: Tuning, tip: string, paths: readonly string[], env: Env): Promise<void> {
  const { repo } = tuning;
  const globs = [...(tuning.config?.prose ?? []), ...(tuning.config?.memoryPolicy ?? [])];
  const own = `${tuningDir(tuning.name)}/`;
  const dirty = new Set([
    ...(await uncommittedProse(repo, tip, globs)),
    ...(await repo.uncommittedPaths(env)).filter((p) => p.startsWith(own)),
  ]);
  if (dirty.size > 0) {
    const files = [...dirty].sort();
    throw usageError('dirty-file', `uncommitted changes in ${files.join(', ')}: undo moves the tuning's files back, and would lose them`,
      `git stash push -- ${files.map((f) => singleQuoted(f)).join(' ')}   # or commit them; then the command again`);
  }
  const changes = new Map(paths.map((p) => [p, null] as const));
  await assertNotDirty({ repo, ref: tuning.ref, parent: tip, tuning: tuning.name, onBranch: true }, { step: { step: 'note', tuning: tuning.name, difficult: [] }, subject: 'undo', changes });
}
