import { applyPatch, structuredPatch } from 'diff';
import type { EditState } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { latestBatchRun } from '../core/next.js';
import { parseMessage } from '../core/trailers.js';
import { conflictError, historyError, usageError } from '../errors.js';
import type { FileChange } from '../git/types.js';
import { landSteps, targetOf, type StepCommit, type WriteContext } from './commit.js';
import { Plan, type DryRunnable } from './plan.js';
import { requireWriter } from './guards.js';
import type { Tuning } from './tuning.js';

/**
 * `git tune revert [<commit>]`: undo edits with new commits, never by
 * rewriting history (docs/method.md#edits). A file the edit changed is restored to the
 * edit's parent where nothing touched it since; otherwise the edit's reverse
 * patch is applied to what is there now, and a hunk that no longer applies
 * stops the whole revert with the file and hunk named, writing nothing.
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

/** How a caller words a revert: why each edit goes (the commit body), and the fix when one conflicts. */
export interface RevertWording {
  reason: (edit: EditState) => string;
  /** The error's context and hint for an edit whose revert conflicts: `git tune revert`'s by default. */
  conflict: (edit: EditState, file: string) => { context: string; hint: string };
}

const REVERT_WORDING: RevertWording = {
  reason: revertReason,
  conflict: (_edit, file) => ({ context: '', hint: `edit ${file} back by hand, then: git tune edit` }),
};

/**
 * The revert commits of `targets`, newest first (they chain in that order).
 * Throws `revert-conflict` (nothing written) when a hunk no longer applies,
 * naming the edit, the file and the hunk.
 */
export async function planRevert(
  tuning: Tuning, targets: readonly EditState[], wording: RevertWording = REVERT_WORDING,
): Promise<{ commits: StepCommit[]; files: string[][]; edits: EditState[] }> {
  const { repo } = tuning;
  const config = tuning.config!;
  const isProse = matcher([...config.prose, ...config.memoryPolicy]);
  const current = new Map<string, string | null>();
  const read = async (file: string) => {
    if (!current.has(file)) current.set(file, text(await repo.readBlobAt(tuning.tip, file)));
    return current.get(file)!;
  };
  const commits: StepCommit[] = [];
  const files: string[][] = [];
  // Newest first, as `git revert` of a range does.
  const edits = [...targets].sort((a, b) => b.index - a.index);
  for (const edit of edits) {
    const info = await repo.readCommit(edit.oid);
    const parent = info.parents[0]!;
    const changed = (await repo.changedPaths(edit.oid)).filter(isProse);
    const changes = new Map<string, FileChange>();
    for (const file of changed) {
      const before = text(await repo.readBlobAt(parent, file));
      const after = text(await repo.readBlobAt(edit.oid, file));
      const now = await read(file);
      let restored: string | null;
      if (now === after) restored = before;
      else if (after === null) {
        // The edit deleted the file and something re-created it since: keep what is there.
        const { context, hint } = wording.conflict(edit, file);
        throw conflictError('revert-conflict', `${context}cannot revert ${edit.oid.slice(0, 7)}: it deleted ${file}, which exists again; nothing was written`, hint);
      } else {
        const patch = structuredPatch(file, file, after, before ?? '', '', '', { context: 3 });
        const result = applyPatch(now ?? '', patch);
        if (result === false) {
          const hunk = patch.hunks.find((h) => applyPatch(now ?? '', { ...patch, hunks: [h] }) === false) ?? patch.hunks[0];
          const { context, hint } = wording.conflict(edit, file);
          throw conflictError(
            'revert-conflict',
            `${context}cannot revert ${edit.oid.slice(0, 7)}: ${file} changed since, and its hunk @@ -${hunk?.oldStart},${hunk?.oldLines} +${hunk?.newStart},${hunk?.newLines} @@ no longer applies; nothing was written`,
            hint,
            hunk ? hunk.lines.slice(0, 12) : [],
          );
        }
        restored = before === null && result === '' ? null : result;
      }
      current.set(file, restored);
      changes.set(file, restored === null ? null : { content: restored });
    }
    const subject = parseMessage(info.message).subject;
    commits.push({
      step: { step: 'revert', tuning: tuning.name, reverts: [edit.oid], difficult: [] },
      subject: `Revert "${subject}"`,
      body: `This reverts commit ${edit.oid}: ${wording.reason(edit)}.`,
      changes,
    });
    files.push(changed);
  }
  return { commits, files, edits };
}

export type Reverted = RevertPlan & { commits: string[] };

export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: WriteContext): Promise<Reverted>;
export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: DryRunnable<WriteContext>): Promise<Reverted | Plan>;
export async function revertEdits(tuning: Tuning, commit: string | undefined, ctx: DryRunnable<WriteContext>): Promise<Reverted | Plan> {
  await requireWriter(tuning);
  const { targets, kept } = editsToRevert(tuning, commit);
  const ordered = [...targets].sort((a, b) => b.index - a.index);
  if (ordered.length === 0) return { reverted: [], kept, commits: [] };
  const plan = await planRevert(tuning, ordered);
  const oids = await landSteps(targetOf(tuning), plan.commits, ctx);
  if (oids instanceof Plan) return oids;
  return { reverted: ordered.map((edit, i) => ({ edit, files: plan.files[i]! })), kept, commits: oids };
}
