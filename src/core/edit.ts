import type { Config } from '../contracts/config.js';
import { singleQuoted } from './argv.js';
import { closedHalf, latestGradedRun, type RunState, type TuningState } from './fold.js';
import { matcher } from './glob.js';
import type { NextStep } from './next.js';
import { refusal, type Refusal } from './refusal.js';
import { parseIds, type Step } from './steps.js';

/**
 * `git tune edit`'s rules (docs/method.md#edits): which graded run an edit responds to,
 * which files it may change, and the step it records. Pure: the app reads
 * the working tree and changes.md, and writes the one commit.
 */

/** `Aims: a, b` in changes.md names the cases an edit is meant to fix. */
export function parseAims(changes: string): string[] | null {
  const m = /^\s*(?:[-*]\s*)?\**Aims\**\s*:\s*(.+)$/im.exec(changes);
  return m ? parseIds(m[1]!.replace(/\s+/g, ',').replace(/,+/g, ',').replace(/^,|,$/g, '')) : null;
}

/** Characters that continue an id: a `.` only between two of them (a full stop ends one). */
const ID_CHARS = 'A-Za-z0-9_-';
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether `text` names the case id as a whole token, never inside a longer
 * one (`q1` is not in `faq1`, `q10` or `q1-draft`). An id of letters only or
 * digits only (`a`, `refund`, `7`) reads as an ordinary word or number in
 * prose, so it counts only quoted as an id: `a`, "a" or 'a'.
 */
export function namesCaseId(text: string, id: string): boolean {
  const e = escapeRegExp(id);
  if (/^(?:[A-Za-z]+|[0-9]+)$/.test(id)) return new RegExp(`([\`"'])${e}\\1`).test(text);
  return new RegExp(`(?<![${ID_CHARS}])(?<![${ID_CHARS}]\\.)${e}(?![${ID_CHARS}])(?!\\.[${ID_CHARS}])`).test(text);
}

/** Added lines that name a case id or quote a case input verbatim: tuning to the test. */
export function tuningToTheTest(added: string, cases: ReadonlyArray<{ id: string; input: unknown }>): string[] {
  const warnings: string[] = [];
  const strings = (v: unknown): string[] =>
    typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];
  for (const c of cases) {
    if (namesCaseId(added, c.id)) {
      warnings.push(`names case id ${c.id}`);
      continue;
    }
    const quoted = strings(c.input).find((s) => s.trim().length >= 20 && added.includes(s.trim()));
    if (quoted) warnings.push(`quotes the input of case ${c.id} verbatim ("${quoted.trim().slice(0, 40)}…")`);
  }
  return warnings;
}

/**
 * The run an edit responds to: the latest graded run, while no later run
 * waits for its grade or its finish and its half is still open. `next` is
 * asked only to say where to go when the half is closed.
 */
export function editRun(state: TuningState, next: () => NextStep): RunState | Refusal {
  const run = latestGradedRun(state);
  if (!run) return refusal('history', 'nothing-graded', 'an edit responds to a graded run, and no run is graded yet', 'git tune next');
  const latest = [...state.runs.values()].filter((r) => r.half !== null).sort((a, b) => b.startIndex - a.startIndex)[0];
  if (latest && latest !== run && !latest.grade) {
    if (!latest.finished) {
      return refusal('history', 'run-not-finished', `${latest.name} started but has not finished: finish it before editing the prose it runs`, 'git tune run');
    }
    // A VOID run says nothing about the prose: an edit made before its re-run waits for that run, as any pending edit.
    if (latest.void !== null && (latest.batch !== run.batch || latest.half !== run.half)) {
      return refusal('history', 'void-first', `${latest.name} was VOID and no run of its half is graded: run its cases again before editing`, 'git tune next');
    }
    if (latest.void === null) return refusal('history', 'grade-first', `${latest.name} is not graded yet: grade it before editing`, 'git tune grade --draft');
  }
  // Between batches (the memory checkpointed, the next batch not yet run) no run of the latest graded run's half comes:
  // an edit there would wait for a run forever. It responds to the next batch's first graded run instead.
  const closed = closedHalf(state, run.batch, run.half!);
  if (closed) {
    const step = next();
    const toFinal = state.final.length > 0 || step.kind === 'final';
    return refusal(
      'history',
      'batch-closed',
      `${run.name} is the latest graded run and ${closed}: no run of batch ${run.batch} will try an edit now, so it could never be confirmed. ` +
        (toFinal
          ? 'Every batch is done: the final check runs the prose as the batches left it'
          : `Edits respond to a graded run: run batch ${run.batch + 1}, grade its first run, then edit`) +
        ` (next: ${step.message})`,
      step.command ?? 'git tune next',
    );
  }
  return run;
}

type ProseConfig = Pick<Config, 'prose' | 'memoryPolicy'>;

/** The globs an edit after `run` may change: a with-memory run's edit changes memory-policy files only. */
export function editGlobs(config: ProseConfig, run: RunState): string[] {
  return run.half === 'mem' ? config.memoryPolicy : [...config.prose, ...config.memoryPolicy];
}

/** Paths named on the command line must be prose of the tuning. */
export function notProseRefusal(config: ProseConfig, paths: readonly string[]): Refusal | null {
  const isProse = matcher([...config.prose, ...config.memoryPolicy]);
  const outside = paths.filter((p) => !isProse(p));
  if (outside.length === 0) return null;
  return refusal('usage', 'not-prose', `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not prose of this tuning (prose: ${config.prose.join(', ')})`,
    `git tune config set prose ${singleQuoted(JSON.stringify([...config.prose, ...outside]))}   # if they are`);
}

/**
 * The prose files the edit records: the changed ones (`dirty`, read from the
 * working tree), only those named when paths are given; in a with-memory
 * half nothing but memory-policy files.
 */
export function editedFiles(config: ProseConfig, run: RunState, paths: readonly string[], dirty: readonly string[], tip: string): string[] | Refusal {
  const files = paths.length > 0 ? dirty.filter((f) => paths.includes(f)) : [...dirty];
  if (run.half === 'mem') {
    const allowed = matcher(config.memoryPolicy);
    const refused = files.filter((f) => !allowed(f));
    if (refused.length > 0) {
      return refusal('usage', 'memory-half', `${run.name} is a with-memory run: only memory-policy files (${config.memoryPolicy.join(', ') || 'none set'}) may change; also changed: ${refused.join(', ')}`, `git restore ${refused.join(' ')}`);
    }
  }
  if (files.length === 0) {
    return refusal('usage', 'no-edit', `no prose file changed since ${tip.slice(0, 7)}`, `edit the prose (${editGlobs(config, run).join(', ')}), then: git tune edit`);
  }
  return files;
}

/**
 * What this edit adds to changes.md (which says what changed and why): all
 * of it, or, after an earlier edit of the same run, the part after what that
 * edit committed.
 */
export function freshChanges(changesFile: string, changes: string | null, committed: string | null): string | Refusal {
  if (changes === null || !changes.trim()) {
    return refusal('usage', 'no-changes-md', `${changesFile} is missing: an edit says what changed and why`, `$EDITOR ${changesFile}   # then: git tune edit`);
  }
  if (changes === committed) {
    return refusal('usage', 'changes-md-unchanged', `${changesFile} does not describe this edit yet (it is as the last edit left it)`, `$EDITOR ${changesFile}   # add what this edit changes, then: git tune edit`);
  }
  return committed !== null && changes.startsWith(committed) ? changes.slice(committed.length) : changes;
}

export interface EditInput {
  tuning: string;
  run: RunState;
  files: readonly string[];
  changesFile: string;
  /** What this edit adds to changes.md (`freshChanges`). */
  fresh: string;
  dataset: ReadonlyArray<{ id: string; input: unknown }>;
  /** The lines the edit adds to the prose (tuning to the test is looked for there). */
  added: string;
}

export interface EditPlan {
  step: Step;
  subject: string;
  body: string;
  /** The aims changes.md names (null: none named, the run's wrong cases are meant). */
  aims: string[] | null;
  warnings: string[];
}

/** The edit step: its aims (only cases of the dataset), its summary line, and a warning when it may tune to the test. */
export function planEdit(input: EditInput): EditPlan | Refusal {
  const { fresh, changesFile, run } = input;
  const aims = parseAims(fresh);
  const unknownAims = (aims ?? []).filter((id) => !input.dataset.some((c) => c.id === id));
  if (unknownAims.length > 0) return refusal('usage', 'bad-aims', `Aims names cases that are not in the dataset: ${unknownAims.join(', ')}`, `$EDITOR ${changesFile}`);
  const warnings = tuningToTheTest(input.added, input.dataset);
  const body = [
    fresh.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.trim() ?? '',
    warnings.length ? `Warning, this edit may tune to the test: it ${warnings.join('; it ')}.` : '',
  ].filter(Boolean).join('\n\n');
  return {
    step: { step: 'edit', tuning: input.tuning, run: run.name, aims, difficult: [] },
    subject: `tune(${input.tuning}): edit after ${run.name}: ${input.files.join(', ')}`,
    body, aims, warnings,
  };
}
