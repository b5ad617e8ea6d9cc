import { DIFFICULT_REASONS, difficultFileSchema, type DifficultFile, type DifficultReason } from '../contracts/files.js';
import { viewDifficult, type DifficultStatus } from '../core/difficult.js';
import { parseDifficultLines, type DifficultLines } from '../core/difficult-lines.js';
import { notesById, planDifficult, type DifficultFileRead, type DifficultInput } from '../core/difficult-file.js';
import { difficultPath as difficultFileOf } from '../core/paths.js';
import type { DifficultChange } from '../core/steps.js';
import { usageError } from '../errors.js';
import { landStep, targetOf, type WriteContext } from './commit.js';
import { requireWriter } from './guards.js';
import { Plan, type DryRunnable } from './plan.js';
import { readText, type Tuning } from './tuning.js';

/**
 * The difficult list (docs/method.md#difficult-list): `git tune difficult [add|fix]`, and the
 * `## Difficult` lines of a findings file that `git tune grade` applies in
 * its own commit.
 *
 * History is the truth: which ids are on the list, their reason, the batch
 * they were added in and whether they are fixed all come from the
 * `Tune-Difficult` trailers (the fold); statuses and retries from
 * `viewDifficult`. `.tune/<name>/difficult.json` is rewritten by every step
 * that changes the list, from the fold, and is where notes live (trailers
 * carry none): one entry per id, in the order ids first joined the list, with
 * the latest entry's reason/batch/fixed and every note the id ever got.
 *
 * Decisions:
 * - `add` of an id that is on the list and not fixed (open or stuck) with
 *   another reason updates the reason (as the fold does); with the same
 *   reason it is refused (`already-on-list`, exit 2) unless a note comes with
 *   it, which is then recorded alone (a `difficult` commit without a
 *   trailer). `add` of a fixed id puts it back on the list as a new entry
 *   (added in the current batch, so its retries start again).
 * - `fix` needs the id on the list and not fixed; a stuck entry may be fixed.
 * - ids must be cases of the dataset; reasons one of DIFFICULT_REASONS.
 * - The `## Difficult` lines `git tune grade` applies follow the same rules,
 *   each checked against the list the lines before it left: a line that
 *   would change nothing (an `add` already there with that reason and no
 *   note, a `fix` of a fixed case) is refused, so no trailer the grade
 *   commit carries is a step the fold cannot place. A re-grade of findings
 *   whose lines were applied before has to drop them.
 */

export interface DifficultRow {
  id: string;
  status: DifficultStatus;
  reason: DifficultReason;
  batch: number;
  retries: number;
  fixed: boolean;
  notes: string[];
}

export interface DifficultListing {
  maxRetries: number;
  entries: DifficultRow[];
  /** Things in difficult.json that history does not back, or a file that does not parse. */
  warnings: string[];
}

const difficultPath = (tuning: Tuning) => difficultFileOf(tuning.dir);

async function readDifficultFile(tuning: Tuning): Promise<DifficultFileRead> {
  const file = difficultPath(tuning);
  const text = await readText(tuning.repo, tuning.tip, file);
  if (text === null) return { path: file, entries: [], problems: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { path: file, entries: [], problems: [`${file}: not JSON (${(e as Error).message})`] };
  }
  const parsed = difficultFileSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      path: file,
      entries: [],
      problems: parsed.error.issues.map((i) => `${file}${i.path.length ? ` entry ${i.path.join('.')}` : ''}: ${i.message}`),
    };
  }
  return { path: file, entries: parsed.data, problems: [] };
}

const maxRetriesOf = (tuning: Tuning) => tuning.config?.maxRetries ?? 3;

export async function listDifficult(tuning: Tuning): Promise<DifficultListing> {
  const maxRetries = maxRetriesOf(tuning);
  const file = await readDifficultFile(tuning);
  const notes = notesById(file.entries);
  const view = viewDifficult(tuning.state, maxRetries);
  const known = new Set(view.map((v) => v.id));
  const warnings = [...file.problems];
  for (const e of file.entries) {
    if (!known.has(e.id)) {
      warnings.push(`${difficultPath(tuning)} lists ${e.id}, but no step of the history added it: ignored (git tune difficult add ${e.id} --why ${e.reason})`);
    }
  }
  return {
    maxRetries,
    warnings,
    entries: view.map((v) => ({
      id: v.id, status: v.status, reason: v.reason, batch: v.batch, retries: v.retries, fixed: v.fixed,
      notes: notes.get(v.id) ?? [],
    })),
  };
}

/** What planning a change to the list reads (src/core/difficult-file.ts): the file at the tip, the dataset's ids, the history. */
export async function difficultInput(tuning: Tuning): Promise<DifficultInput> {
  return {
    tuning: tuning.name, state: tuning.state, commits: tuning.commits, selection: tuning.selection?.ids ?? [],
    dataset: new Set((await tuning.loadDataset()).map((c) => c.id)), maxRetries: maxRetriesOf(tuning), file: await readDifficultFile(tuning),
  };
}

export { parseDifficultLines, type DifficultLines };

export interface DifficultOutcome {
  commit: string;
  change: DifficultChange | null;
  entry: DifficultRow;
}

/** `git tune difficult add|fix`: one `difficult` commit with its trailer and the new difficult.json. */
export async function recordDifficult(
  tuning: Tuning,
  change: DifficultChange,
  note: string | undefined,
  ctx: DryRunnable<WriteContext>,
): Promise<DifficultOutcome | Plan> {
  await requireWriter(tuning);
  if (change.op === 'add' && !(DIFFICULT_REASONS as readonly string[]).includes(change.reason)) {
    throw usageError('bad-reason', `--why must be one of ${DIFFICULT_REASONS.join(', ')} (found "${change.reason}")`, `git tune difficult add ${change.id} --why wrong`);
  }
  const notes = new Map(note?.trim() ? [[change.id, [note.trim()]]] : []);
  const plan = planDifficult(await difficultInput(tuning), [change], notes);
  if (plan.problems.length > 0) throw refusal(tuning, change, plan.problems);
  const moved = plan.changes[0] ?? null;
  const subject = moved === null
    ? `tune(${tuning.name}): difficult note on ${change.id}`
    : moved.op === 'add'
      ? `tune(${tuning.name}): difficult add ${moved.id} (${moved.reason})`
      : `tune(${tuning.name}): difficult fix ${moved.id}`;
  const commit = await landStep(targetOf(tuning), {
    step: { step: 'difficult', tuning: tuning.name, difficult: plan.changes },
    subject,
    body: note?.trim() ? `Note: ${note.trim()}` : '',
    changes: new Map([[plan.file.path, { content: plan.file.content }]]),
  }, ctx);
  if (commit instanceof Plan) return commit;
  const view = viewDifficult(plan.state, maxRetriesOf(tuning)).find((v) => v.id === change.id)!;
  const fileNotes = (JSON.parse(plan.file.content) as DifficultFile).find((e) => e.id === change.id)?.notes ?? [];
  return {
    commit,
    change: moved,
    entry: { id: view.id, status: view.status, reason: view.reason, batch: view.batch, retries: view.retries, fixed: view.fixed, notes: fileNotes },
  };
}

function refusal(tuning: Tuning, change: DifficultChange, problems: string[]) {
  const onList = tuning.state.difficult.find((e) => e.id === change.id && !e.fixed);
  const first = problems[0] ?? '';
  if (first.startsWith(difficultPath(tuning))) {
    return usageError('bad-difficult-file', `${difficultPath(tuning)} does not read as the difficult list`, `"$EDITOR" ${difficultPath(tuning)} && git commit -m 'repair the difficult list file' -- ${difficultPath(tuning)}   # a list of {id, reason, batch, fixed, notes}`, problems);
  }
  if (first.includes('not a case of the dataset')) {
    return usageError('unknown-case', `${change.id} is not a case of the dataset`, 'git tune status   # the dataset and selection', problems);
  }
  if (change.op === 'add') {
    return usageError('already-on-list', `${change.id} is already on the difficult list with reason ${onList?.reason ?? change.reason}`,
      `git tune difficult add ${change.id} --why ${change.reason} --note "…"   # to add a note; or another --why to change the reason`, problems);
  }
  return usageError('not-on-list', `${change.id} is not open on the difficult list`, 'git tune difficult', problems);
}
