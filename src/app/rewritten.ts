import { branchName } from '../core/names.js';
import type { NextStep } from '../core/next.js';
import { describeRewritten, isSquashedMessage, reflogCommits, stepFilesOf, undoCommand, type RewrittenStep } from '../core/rewritten.js';
import { readReflog } from '../git/reflog.js';
import { parseStep } from '../core/steps.js';
import { historyError } from '../errors.js';
import { handCommitPaths } from './cache.js';
import type { CommitInfo } from '../git/types.js';
import type { Tuning } from './tuning.js';

/**
 * The repair of a rewritten step (src/core/rewritten.ts,
 * docs/git-model.md#rewritten-steps). An amend, a reword or a squash keeps
 * the tree and only replaces commits, and native git's reflog still names
 * the commits it replaced: when a commit the branch (or HEAD) held has the
 * tip's very tree and its first-parent line down to the last good step is
 * made of steps alone, `git reset --soft <it>` puts the original steps back
 * and touches no file. Otherwise (something was committed on top since, or
 * the reflog expired) `git tune undo <N>` goes back to the last good step.
 */
export interface Restore {
  /** The commit that holds the original steps. */
  oid: string;
  /** How many commits from it back to the last good step. */
  steps: number;
  command: string;
}

export interface Repair {
  rewritten: RewrittenStep[];
  /** The command to run: the restore when there is one, else the undo. */
  command: string;
  restore: Restore | null;
  undo: string;
}

/** How many reflog commits are tried, newest first (each costs a commit read). */
const MAX_CANDIDATES = 200;

/** The commit of the reflog that holds the original steps, or null (src/app/rewritten.ts). */
export async function findRestore(tuning: Tuning): Promise<Restore | null> {
  const { repo, state } = tuning;
  const first = state.rewritten[0];
  if (!first || first.index === 0) return null;
  const lastGood = tuning.commits[first.index - 1]?.oid;
  if (!lastGood) return null;
  const tipTree = (await repo.readCommit(tuning.tip)).tree;
  const logs = await Promise.all([readReflog(repo.gitdir, tuning.ref), readReflog(repo.gitdir, 'HEAD')]);
  const candidates = reflogCommits(logs, tuning.tip).slice(0, MAX_CANDIDATES);
  const limit = state.commits - first.index + 64;
  for (const oid of candidates) {
    const info = await repo.readCommit(oid).catch(() => null);
    if (!info || info.tree !== tipTree) continue;
    const steps = await stepsDownTo(tuning, oid, lastGood, limit);
    if (steps !== null) {
      const command = tuning.onBranch
        ? `git reset --soft ${oid}`
        : `git update-ref ${tuning.ref} ${oid} ${tuning.tip}`;
      return { oid, steps, command };
    }
  }
  return null;
}

/**
 * How many commits lead from `from` down to `lastGood` on the first-parent
 * line, when each is a step of this tuning that rewrote nothing (a hand
 * commit that changed no step file counts too); null otherwise.
 */
async function stepsDownTo(tuning: Tuning, from: string, lastGood: string, limit: number): Promise<number | null> {
  let oid: string | undefined = from;
  for (let n = 0; n <= limit && oid; n++) {
    if (oid === lastGood) return n;
    const info: CommitInfo | null = await tuning.repo.readCommit(oid).catch(() => null);
    if (!info) return null;
    const step = parseStep(info.message);
    if (isSquashedMessage(info.message)) return null;
    if (step === null || step.tuning !== tuning.name || step.step === 'note') {
      if (step?.step === 'init') return null;
      const changed = await handCommitPaths(tuning.repo, tuning.name, oid, info.parents[0]);
      if (stepFilesOf(tuning.name, changed).length > 0) return null;
    }
    oid = info.parents[0];
  }
  return null;
}

/** What repairs the tuning's rewritten steps, or null when none is rewritten. */
export async function repairOf(tuning: Tuning): Promise<Repair | null> {
  const { state } = tuning;
  const first = state.rewritten[0];
  if (!first) return null;
  const restore = await findRestore(tuning);
  const undo = undoCommand(state.commits, first);
  return { rewritten: state.rewritten, command: restore?.command ?? undo, restore, undo };
}

/** `next` with the repair's command when a step was rewritten (the pure decision knows only the undo). */
export async function withRepair(tuning: Tuning, step: NextStep): Promise<NextStep> {
  if (step.kind !== 'repair') return step;
  const repair = await repairOf(tuning);
  if (!repair?.restore) return step;
  const first = repair.rewritten[0]!;
  return {
    ...step,
    message: `${describeRewritten(first)}${repair.rewritten.length > 1 ? ` (and ${repair.rewritten.length - 1} more)` : ''}: no step goes on from a rewritten one; the reflog still holds the original steps (${repair.restore.oid.slice(0, 7)}, same files): put them back (or go back to the last good step: ${repair.undo})`,
    command: repair.restore.command,
  };
}

/**
 * A step-writing command refuses while a step stands rewritten (exit 3):
 * building on it would fold into a history that lost the step. The fix is
 * the repair `next` names.
 */
export async function requireIntactHistory(tuning: Tuning): Promise<void> {
  const repair = await repairOf(tuning);
  if (!repair) return;
  throw historyError(
    'rewritten-step',
    `${branchName(tuning.name)} has ${repair.rewritten.length === 1 ? 'a rewritten step' : `${repair.rewritten.length} rewritten steps`} (an amend, a reword or a squash): repair it before writing another step`,
    repair.restore ? `${repair.restore.command}   # or: ${repair.undo}` : repair.undo,
    repair.rewritten.map(describeRewritten),
  );
}
