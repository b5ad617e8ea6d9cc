import { DIFFICULT_REASONS, type DifficultFile } from '../contracts/files.js';
import { checkDifficultChanges } from './difficult-lines.js';
import { viewDifficult } from './difficult.js';
import { foldHistory, type TuningState } from './fold.js';
import { refusal, type Refusal } from './refusal.js';
import { formatStep, type DifficultChange } from './steps.js';
import type { HistoryCommit } from './tuning-state.js';

/**
 * `.tune/<name>/difficult.json` after changes to the list, as data
 * (docs/method.md#difficult-list): the app reads the file at the tip, the
 * dataset's ids and the history; this checks the changes and writes the file
 * from the fold, where notes live (trailers carry none).
 */

/** The file as read at the tip: its entries, and what kept it from reading (then no entries). */
export interface DifficultFileRead {
  path: string;
  entries: DifficultFile;
  problems: string[];
}

/** What planning a change to the list reads. */
export interface DifficultInput {
  tuning: string;
  /** The fold of `commits`: the list the changes are checked against. */
  state: TuningState;
  commits: readonly HistoryCommit[];
  selection: readonly string[];
  dataset: ReadonlySet<string>;
  maxRetries: number;
  file: DifficultFileRead;
}

export interface DifficultPlan {
  /** The changes that move the fold (a same-reason `add` that only brings a note is dropped). */
  changes: DifficultChange[];
  /** The state after them. */
  state: TuningState;
  file: { path: string; content: string };
  problems: string[];
}

/** Notes per id in the file (every entry of an id, in order). */
export function notesById(entries: DifficultFile): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of entries) out.set(e.id, [...(out.get(e.id) ?? []), ...e.notes]);
  return out;
}

/** The file's content for a state: one entry per id, extra keys a user added kept. */
function formatDifficultFile(state: TuningState, maxRetries: number, previous: DifficultFile, notes: Map<string, string[]>): string {
  const extra = new Map(previous.map((e) => [e.id, e]));
  const entries = viewDifficult(state, maxRetries).map((v) => ({
    ...(extra.get(v.id) ?? {}),
    id: v.id, reason: v.reason, batch: v.batch, fixed: v.fixed, notes: notes.get(v.id) ?? [],
  }));
  return `${JSON.stringify(entries, null, 2)}\n`;
}

/**
 * Checks `changes` (in order, each against the list as the ones before it
 * left it) and `notes`, and works out the list after them. Never refuses a
 * bad change: every one is named in `problems`.
 */
export function planDifficult(
  input: DifficultInput, changes: readonly DifficultChange[], notes: ReadonlyMap<string, readonly string[]> = new Map(),
): DifficultPlan {
  const { file } = input;
  const problems = [...file.problems.map((p) => `${p}: fix or delete the file first`)];
  const { moving, problems: ruled } = checkDifficultChanges(input.state.difficult, input.dataset, changes, notes);
  problems.push(...ruled);
  const message = formatStep({ step: 'difficult', tuning: input.tuning, difficult: moving }, 'planned');
  const state = foldHistory(input.tuning, [...input.commits, { oid: '0'.repeat(40), message }], input.selection);
  const allNotes = notesById(file.entries);
  for (const [id, texts] of notes) {
    const kept = texts.map((t) => t.trim()).filter(Boolean);
    if (kept.length > 0) allNotes.set(id, [...(allNotes.get(id) ?? []), ...kept]);
  }
  return { changes: moving, state, problems, file: { path: file.path, content: formatDifficultFile(state, input.maxRetries, file.entries, allNotes) } };
}

/** For `git tune grade`: the difficult.json its commit writes when it applies the `## Difficult` lines of its findings, or a refusal listing every line that cannot be applied. */
export function difficultFileAfter(
  input: DifficultInput, changes: readonly DifficultChange[], notes?: ReadonlyMap<string, readonly string[]>,
): { path: string; content: string } | Refusal {
  const plan = planDifficult(input, changes, notes);
  if (plan.problems.length === 0) return plan.file;
  return refusal(
    'usage', 'bad-difficult-lines', `${plan.problems.length} line(s) of the difficult list cannot be applied`,
    `edit the \`## Difficult\` section: one line each, \`add <id> <reason>\` (${DIFFICULT_REASONS.join(', ')}) or \`fix <id>\`; see git tune difficult`,
    plan.problems,
  );
}
