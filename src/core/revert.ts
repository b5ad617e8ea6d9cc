import { applyPatch, structuredPatch } from 'diff';
import type { EditState } from './fold.js';
import { refusal, type Refusal } from './refusal.js';
import type { StepCommitData } from './steps.js';

/**
 * Reverting edits with new commits, never by rewriting history
 * (docs/method.md#edits), as data: given what the app read of each edit (its
 * subject, and for each prose file it changed the text before and after it)
 * and of the branch's tip, the revert commits. A file the edit changed is
 * restored to the edit's parent where nothing touched it since; otherwise the
 * edit's reverse patch is applied to what is there now, and a hunk that no
 * longer applies refuses the whole revert, naming the file and the hunk.
 */

/** What an edit's revert reads: its subject, and each prose file it changed (null: absent). */
export interface EditRead {
  subject: string;
  files: Array<{ path: string; before: string | null; after: string | null }>;
}

/** What reverting reads: each edit's changes, and the tip's text of every file they touch. */
export interface RevertRead {
  edits: ReadonlyMap<string, EditRead>;
  /** The text at the tip of each file an edit changed (null: absent). */
  tip: ReadonlyMap<string, string | null>;
}

/** How a caller words a revert: why each edit goes (the commit body), and the fix when one conflicts. */
export interface RevertWording {
  reason: (edit: EditState) => string;
  /** The refusal's context and hint for an edit whose revert conflicts. */
  conflict: (edit: EditState, file: string) => { context: string; hint: string };
}

export interface RevertCommits {
  /** Newest edit first, as `git revert` of a range does: they chain in that order. */
  commits: StepCommitData[];
  /** Each reverted edit and the prose files its revert writes, in the order of `commits`. */
  reverted: Array<{ edit: EditState; files: string[] }>;
}

/** The revert commits of `targets`, or a `revert-conflict` refusal (nothing is written) when a hunk no longer applies. */
export function revertCommits(tuning: string, targets: readonly EditState[], read: RevertRead, wording: RevertWording): RevertCommits | Refusal {
  const current = new Map(read.tip);
  const edits = [...targets].sort((a, b) => b.index - a.index);
  const commits: StepCommitData[] = [];
  const reverted: RevertCommits['reverted'] = [];
  for (const edit of edits) {
    const info = read.edits.get(edit.oid);
    if (!info) throw new Error(`revertCommits: ${edit.oid} was not read`);
    const changes = new Map<string, { content: string } | null>();
    for (const { path: file, before, after } of info.files) {
      const now = current.get(file) ?? null;
      let restored: string | null;
      if (now === after) restored = before;
      else if (after === null) {
        // The edit deleted the file and something re-created it since: keep what is there.
        const { context, hint } = wording.conflict(edit, file);
        return refusal('conflict', 'revert-conflict', `${context}cannot revert ${edit.oid.slice(0, 7)}: it deleted ${file}, which exists again; nothing was written`, hint);
      } else {
        const patch = structuredPatch(file, file, after, before ?? '', '', '', { context: 3 });
        const result = applyPatch(now ?? '', patch);
        if (result === false) {
          const hunk = patch.hunks.find((h) => applyPatch(now ?? '', { ...patch, hunks: [h] }) === false) ?? patch.hunks[0];
          const { context, hint } = wording.conflict(edit, file);
          return refusal(
            'conflict', 'revert-conflict',
            `${context}cannot revert ${edit.oid.slice(0, 7)}: ${file} changed since, and its hunk @@ -${hunk?.oldStart},${hunk?.oldLines} +${hunk?.newStart},${hunk?.newLines} @@ no longer applies; nothing was written`,
            hint, hunk ? hunk.lines.slice(0, 12) : [],
          );
        }
        restored = before === null && result === '' ? null : result;
      }
      current.set(file, restored);
      changes.set(file, restored === null ? null : { content: restored });
    }
    commits.push({
      step: { step: 'revert', tuning, reverts: [edit.oid], difficult: [] },
      subject: `Revert "${info.subject}"`,
      body: `This reverts commit ${edit.oid}: ${wording.reason(edit)}.`,
      changes,
    });
    reverted.push({ edit, files: info.files.map((f) => f.path) });
  }
  return { commits, reverted };
}
