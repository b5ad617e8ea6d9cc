import type { EditState } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { latestBatchRun } from '../core/next.js';
import { parseMessage } from '../core/trailers.js';
import { revertCommits, type EditRead, type RevertRead, type RevertWording } from '../core/revert.js';
import { editRun } from '../core/edit.js';
import { isRefusal } from '../core/refusal.js';
import { historyError, usageError } from '../errors.js';
import { nextFor } from './decide.js';
import { changesPath } from './edit.js';
import { landSteps, targetOf, type WriteContext } from './commit.js';
import { Plan, type DryRunnable } from './plan.js';
import { requireWriter } from './guards.js';
import { orRefuse } from './refuse.js';
import type { Tuning } from './tuning.js';

/**
 * `git tune revert [<commit>]`: undo edits with new commits, never by
 * rewriting history (docs/method.md#edits). It reads each edit's files
 * (`readForRevert`), core works out the revert commits (src/core/revert.ts:
 * a hunk that no longer applies stops the whole revert, writing nothing) and
 * they land as one chain.
 */
export interface RevertPlan {
  reverted: Array<{ edit: EditState; files: string[] }>;
  kept: Array<{ edit: EditState; why: string }>;
}

const text = (b: Uint8Array | null) => (b === null ? null : Buffer.from(b).toString('utf8'));

export function editsToRevert(tuning: Tuning, commit?: string): { targets: EditState[]; kept: RevertPlan['kept'] } {
  const edits = tuning.state.edits;
  if (commit) {
    const matches = edits.filter((e) => e.oid.startsWith(commit.toLowerCase()));
    if (matches.length === 0) {
      throw usageError('not-an-edit', `${commit} is not an edit of tuning ${tuning.name}`, `git tune status --json   # lists the edits`);
    }
    if (matches.length > 1) throw usageError('ambiguous-commit', `${commit} names ${matches.length} edits; give more of the id`);
    const edit = matches[0]!;
    if (edit.status === 'reverted') throw historyError('already-reverted', `${edit.oid.slice(0, 7)} is already reverted (by ${edit.settledBy?.slice(0, 7)})`);
    return { targets: [edit], kept: [] };
  }
  const latest = latestBatchRun(tuning.state);
  if (!latest || latest.half === null) return { targets: [], kept: [] };
  const half = edits.filter((e) => e.batch === latest.batch && e.half === latest.half);
  return {
    targets: half.filter((e) => e.status === 'pending' || e.status === 'unconfirmed'),
    kept: half.filter((e) => e.status === 'confirmed' || e.status === 'kept')
      .map((e) => ({ edit: e, why: e.status === 'kept' ? `kept by ${e.kept?.by}: ${e.kept?.why}` : `confirmed by ${e.settledBy}` })),
  };
}

/** Why an edit is reverted, for its revert commit's body. */
const revertReason = (edit: EditState) => (edit.status === 'pending' ? 'no run has tried it' : `not confirmed by ${edit.triedBy ?? edit.settledBy}`);

/** `git tune revert`'s wording; a conflict's fix is the edit by hand that `git tune edit` records (with its line in changes.md). */
function revertWording(tuning: Tuning): RevertWording {
  const run = editRun(tuning.state, () => nextFor(tuning));
  const changes = isRefusal(run) ? 'changes.md' : changesPath(tuning, run.name);
  return {
    reason: revertReason,
    conflict: (_edit, file) => ({ context: '', hint: `edit ${file} back by hand and say so in ${changes}, then: git tune edit` }),
  };
}

/** What reverting `edits` reads (src/core/revert.ts): each edit's subject and prose files before and after it, and those files at the tip. */
export async function readForRevert(tuning: Tuning, edits: readonly EditState[]): Promise<RevertRead> {
  const { repo } = tuning;
  const config = tuning.config!;
  const isProse = matcher([...config.prose, ...config.memoryPolicy]);
  const read = new Map<string, EditRead>();
  const tip = new Map<string, string | null>();
  for (const edit of edits) {
    const info = await repo.readCommit(edit.oid);
    const parent = info.parents[0]!;
    const files: EditRead['files'] = [];
    for (const file of (await repo.changedPaths(edit.oid)).filter(isProse)) {
      files.push({ path: file, before: text(await repo.readBlobAt(parent, file)), after: text(await repo.readBlobAt(edit.oid, file)) });
      if (!tip.has(file)) tip.set(file, text(await repo.readBlobAt(tuning.tip, file)));
    }
    read.set(edit.oid, { subject: parseMessage(info.message).subject, files });
  }
  return { edits: read, tip };
}

export type Reverted = RevertPlan & { commits: string[] };

export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: WriteContext): Promise<Reverted>;
export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: DryRunnable<WriteContext>): Promise<Reverted | Plan>;
export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: DryRunnable<WriteContext>): Promise<Reverted | Plan> {
  await requireWriter(tuning);
  const { targets, kept } = editsToRevert(tuning, commit);
  if (targets.length === 0) return { reverted: [], kept, commits: [] };
  const plan = orRefuse(revertCommits(tuning.name, targets, await readForRevert(tuning, targets), revertWording(tuning)));
  const oids = await landSteps(targetOf(tuning), plan.commits, ctx);
  if (oids instanceof Plan) return oids;
  return { reverted: plan.reverted, kept, commits: oids };
}
