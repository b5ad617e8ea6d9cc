import { promises as fs } from 'node:fs';
import path from 'node:path';
import { diffLines } from 'diff';
import { singleQuoted } from '../core/argv.js';
import { closedHalf, defaultAims, latestGradedRun } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { parseIds } from '../core/steps.js';
import { historyError, usageError } from '../errors.js';
import type { FileChange } from '../git/types.js';
import { commitStep, targetOf, type WriteContext } from './commit.js';
import { nextFor } from './decide.js';
import { requireOnBranch } from './guards.js';
import { uncommittedProse } from './prose.js';
import { readText, type Tuning } from './tuning.js';
import { RUN_FILES, runFilePath } from '../core/paths.js';

/**
 * `git tune edit`: the prose edits made after a graded run and that run's
 * changes.md, one commit (SPEC 3.5). In a with-memory half only
 * memory-policy files may change.
 */
export const changesPath = (tuning: Tuning, run: string) => runFilePath(tuning.dir, run, RUN_FILES.changes);

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

export interface EditOutcome {
  run: string;
  files: string[];
  aims: string[];
  warnings: string[];
  commit: string;
}

export async function recordEdit(tuning: Tuning, paths: readonly string[], ctx: WriteContext): Promise<EditOutcome> {
  requireOnBranch(tuning);
  const config = tuning.config!;
  const run = latestGradedRun(tuning.state);
  if (!run) throw historyError('nothing-graded', 'an edit responds to a graded run, and no run is graded yet', 'git tune next');
  const latest = [...tuning.state.runs.values()].filter((r) => r.half !== null).sort((a, b) => b.startIndex - a.startIndex)[0];
  if (latest && latest !== run && !latest.grade) {
    if (!latest.finished) {
      throw historyError('run-not-finished', `${latest.name} started but has not finished: finish it before editing the prose it runs`, 'git tune run');
    }
    // A VOID run says nothing about the prose: an edit made before its re-run waits for that run, as any pending edit.
    if (latest.void !== null && (latest.batch !== run.batch || latest.half !== run.half)) {
      throw historyError('void-first', `${latest.name} was VOID and no run of its half is graded: run its cases again before editing`, 'git tune next');
    }
    if (latest.void === null) throw historyError('grade-first', `${latest.name} is not graded yet: grade it before editing`, 'git tune grade --draft');
  }
  // Between batches (the memory checkpointed, the next batch not yet run) no run of the latest graded run's half comes:
  // an edit there would wait for a run forever. It responds to the next batch's first graded run instead.
  const closed = closedHalf(tuning.state, run.batch, run.half!);
  if (closed) {
    const step = nextFor(tuning);
    const toFinal = tuning.state.final.length > 0 || step.kind === 'final';
    throw historyError(
      'batch-closed',
      `${run.name} is the latest graded run and ${closed}: no run of batch ${run.batch} will try an edit now, so it could never be confirmed. ` +
        (toFinal
          ? 'Every batch is done: the final check runs the prose as the batches left it'
          : `Edits respond to a graded run: run batch ${run.batch + 1}, grade its first run, then edit`) +
        ` (next: ${step.message})`,
      step.command ?? 'git tune next',
    );
  }
  const globs = run.half === 'mem' ? config.memoryPolicy : [...config.prose, ...config.memoryPolicy];
  const isProse = matcher([...config.prose, ...config.memoryPolicy]);
  const allowed = matcher(globs);
  const outside = paths.filter((p) => !isProse(p));
  if (outside.length > 0) {
    throw usageError('not-prose', `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not prose of this tuning (prose: ${config.prose.join(', ')})`, `git tune config set prose ${singleQuoted(JSON.stringify([...config.prose, ...outside]))}   # if they are`);
  }
  let dirty = await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy]);
  if (paths.length > 0) dirty = dirty.filter((f) => paths.includes(f));
  if (run.half === 'mem') {
    const refused = dirty.filter((f) => !allowed(f));
    if (refused.length > 0) {
      throw usageError('memory-half', `${run.name} is a with-memory run: only memory-policy files (${config.memoryPolicy.join(', ') || 'none set'}) may change; also changed: ${refused.join(', ')}`, `git restore ${refused.join(' ')}`);
    }
  }
  if (dirty.length === 0) {
    throw usageError('no-edit', `no prose file changed since ${tuning.tip.slice(0, 7)}`, `edit the prose (${globs.join(', ')}), then: git tune edit`);
  }
  const changesFile = changesPath(tuning, run.name);
  const changes = await fs.readFile(path.join(tuning.repo.dir, changesFile), 'utf8').catch(() => null);
  const committedChanges = await readText(tuning.repo, tuning.tip, changesFile);
  if (changes === null || !changes.trim()) {
    throw usageError('no-changes-md', `${changesFile} is missing: an edit says what changed and why`, `$EDITOR ${changesFile}   # then: git tune edit`);
  }
  if (changes === committedChanges) {
    throw usageError('changes-md-unchanged', `${changesFile} does not describe this edit yet (it is as the last edit left it)`, `$EDITOR ${changesFile}   # add what this edit changes, then: git tune edit`);
  }
  // A later edit after the same run adds to its changes.md: its aims and summary are in what it added.
  const fresh = committedChanges !== null && changes.startsWith(committedChanges) ? changes.slice(committedChanges.length) : changes;
  const aims = parseAims(fresh);
  const dataset = await tuning.loadDataset();
  const unknownAims = (aims ?? []).filter((id) => !dataset.some((c) => c.id === id));
  if (unknownAims.length > 0) throw usageError('bad-aims', `Aims names cases that are not in the dataset: ${unknownAims.join(', ')}`, `$EDITOR ${changesFile}`);

  const files = new Map<string, FileChange>();
  let added = '';
  for (const file of dirty) {
    const content = await fs.readFile(path.join(tuning.repo.dir, file)).catch(() => null);
    files.set(file, content === null ? null : { content });
    const before = (await readText(tuning.repo, tuning.tip, file)) ?? '';
    for (const part of diffLines(before, content?.toString('utf8') ?? '')) if (part.added) added += part.value;
  }
  files.set(changesFile, { content: changes });
  const warnings = tuningToTheTest(added, dataset);
  const body = [
    fresh.split('\n').find((l) => l.trim() && !l.startsWith('#'))?.trim() ?? '',
    warnings.length ? `Warning, this edit may tune to the test: it ${warnings.join('; it ')}.` : '',
  ].filter(Boolean).join('\n\n');
  const commit = await commitStep(targetOf(tuning), {
    step: { step: 'edit', tuning: tuning.name, run: run.name, aims, difficult: [] },
    subject: `tune(${tuning.name}): edit after ${run.name}: ${dirty.join(', ')}`,
    body,
    changes: files,
    fromWorktree: new Set(files.keys()),
  }, ctx);
  return { run: run.name, files: dirty, aims: aims ?? defaultAims(run), warnings, commit };
}
