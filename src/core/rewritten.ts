import { BASELINE_DIR, BATCHES_DIR, DATASET_FILE, DIFFICULT_FILE, HELD_OUT_FILE, readmePath, RUN_FILES, RUNS_DIR, SELECTION_FILE, tuningDir } from './paths.js';
import { SEAL_TRAILER } from './steps.js';

/**
 * Rewritten steps (docs/git-model.md#rewritten-steps): a commit on the
 * tuning branch that changed files only a step writes, but is not that step
 * any more. `git commit --amend -m …` of a step drops its trailers, a
 * `git rebase -i` that rewords a step may too, and a squash of two steps
 * leaves one commit carrying both trailer blocks. Left alone, the fold reads
 * such a commit as a hand commit (or the later step only) and `next` goes
 * back, as if the step had never been written. Pure: the reader gives the
 * paths a commit changed, the fold records what it found.
 */
export type RewrittenKind =
  /** No trailers of this tuning (or not sealed): an amend or reword that dropped or changed them. */
  | 'unsealed'
  /** A `note` (the trailers the commit hooks give a hand commit) that changed step files: an amend with the hooks on. */
  | 'note'
  /** More than one sealed trailer block in one message: steps squashed together. */
  | 'squashed';

export interface RewrittenStep {
  oid: string;
  /** Its place in the fold (0: the init commit): `git tune undo <commits - index>` goes back to the step before it. */
  index: number;
  kind: RewrittenKind;
  /** The step files it changed (for `unsealed` and `note`). */
  files: string[];
}

/**
 * Files under `.tune/<name>/` that a person may change in a hand commit:
 * config.yaml (its keys are read at the tip), README.md's hand-written part
 * (its generated part: `generatedReadme`), USAGE.md (regenerated, as a
 * merge may), a run's findings.md and changes.md (a hand edit writes its
 * changes.md), and the memory trees (memory/: a person may seed or tidy
 * the last good memory by hand; the next checkpoint replaces it whole). Anything else there (results, run folders, batch
 * plans, the selection, the dataset, memory trees, the baseline, the
 * difficult list) only a step writes. Prose lives outside `.tune/`.
 */
const HAND_RUN_FILES: ReadonlySet<string> = new Set([RUN_FILES.findings, RUN_FILES.changes]);
const STEP_ENTRIES: ReadonlySet<string> = new Set([
  SELECTION_FILE, DATASET_FILE, HELD_OUT_FILE, DIFFICULT_FILE, BASELINE_DIR, BATCHES_DIR, RUNS_DIR,
]);

/**
 * Every step rewrites README.md's generated part (docs/reports.md); a hand
 * commit never does (it may change the hand-written part only). So a hand
 * commit whose README differs from its parent's outside the hand-written
 * part is a step that lost its trailers: a grade, a config step or an empty
 * candidate change no other step file. The reader adds this name to the
 * paths of such a commit (no file of a repository can be named so: a space
 * and parentheses after `.md`).
 */
export const generatedReadme = (tuning: string) => `${readmePath(tuningDir(tuning))} (generated part)`;

const HAND_START_RE = /<!-- git-tune:hand-written:start[^>]*-->/;
const HAND_END = '<!-- git-tune:hand-written:end -->';

/** A README without its hand-written part (between the markers, which stay): what only a step writes. */
export function generatedPart(readme: string): string {
  const start = HAND_START_RE.exec(readme);
  if (!start) return readme;
  const from = start.index + start[0].length;
  const end = readme.indexOf(HAND_END, from);
  return end < 0 ? readme : readme.slice(0, from) + readme.slice(end);
}

/** Does `file` (repository-relative) belong to what only a step of `tuning` writes? */
export function isStepFile(tuning: string, file: string): boolean {
  if (file === generatedReadme(tuning)) return true;
  const prefix = `${tuningDir(tuning)}/`;
  if (!file.startsWith(prefix)) return false;
  const parts = file.slice(prefix.length).split('/');
  const top = parts[0]!;
  if (!STEP_ENTRIES.has(top)) return false;
  if (top === RUNS_DIR && parts.length === 3 && HAND_RUN_FILES.has(parts[2]!)) return false;
  return true;
}

/** The step files among the paths a commit changed. */
export function stepFilesOf(tuning: string, paths: readonly string[]): string[] {
  return paths.filter((p) => isStepFile(tuning, p));
}

const SEAL_LINE = `\n${SEAL_TRAILER}:`;

/** A message holding two sealed trailer blocks: a squash of steps (git keeps both messages). */
export function isSquashedMessage(message: string): boolean {
  const first = message.indexOf(SEAL_LINE);
  return first >= 0 && message.indexOf(SEAL_LINE, first + 1) >= 0;
}

/** How many first-parent commits `git tune undo` moves back to leave only the steps before the first rewritten one. */
export function undoCount(commits: number, first: RewrittenStep): number {
  return commits - first.index;
}

export const undoCommand = (commits: number, first: RewrittenStep) => `git tune undo ${undoCount(commits, first)}`;

/** One line per rewritten commit, for `status`, `next`'s notes and a refusal's details. */
export function describeRewritten(r: RewrittenStep): string {
  const id = r.oid.slice(0, 7);
  const files = r.files.length > 3 ? `${r.files.slice(0, 3).join(', ')}, … (${r.files.length} files)` : r.files.join(', ');
  switch (r.kind) {
    case 'unsealed':
      return `commit ${id} changed step files (${files}) without a step's trailers: a step amended or reworded`;
    case 'note':
      return `commit ${id} is a note (the hooks' trailers) that changed step files (${files}): a step amended`;
    case 'squashed':
      return `commit ${id} holds the trailers of more than one step: steps squashed together`;
  }
}

/** What a reflog entry says (src/git/reflog.ts reads them): what the ref held before and after, and when. */
export interface ReflogMove {
  old: string;
  new: string;
  /** Seconds since the epoch, as git wrote it. */
  time: number;
}

const ZERO = /^0{40}$/;

/**
 * The commits reflogs name, newest first, each once, without `except` (the
 * tip): where an original step may still be after an amend or a rebase
 * (the value a ref held before, and every value it took).
 */
export function reflogCommits(logs: ReadonlyArray<readonly ReflogMove[]>, except: string): string[] {
  const seen = new Set<string>([except]);
  const out: string[] = [];
  // Newest first by time, then by place in its file (entries of one second keep their order).
  const newestFirst = logs.flatMap((log) => log.map((e, i) => ({ e, i }))).sort((a, b) => b.e.time - a.e.time || b.i - a.i);
  for (const { e } of newestFirst) {
    for (const oid of [e.old, e.new]) {
      if (ZERO.test(oid) || seen.has(oid)) continue;
      seen.add(oid);
      out.push(oid);
    }
  }
  return out;
}
