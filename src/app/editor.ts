import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { JudgeFile } from '../contracts/judge.js';
import { mergeProposals } from '../core/findings.js';
import type { RunState } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { localPath } from '../core/paths.js';
import { usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import { resolveCommand } from '../run/presets/index.js';
import { interruptedError, runProcess } from '../run/process.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import { changesPath } from './edit.js';
import { findingsPath } from './grade.js';
import { uncommittedProse } from './prose.js';
import type { Tuning } from './tuning.js';
import { undoOutside, worktreeBaseline } from './worktree-guard.js';

/**
 * The configured editor (README.md, Contracts: the editor), run once on a
 * graded run in the repository root: it edits prose in place and writes the
 * run's changes.md. It may change only the prose of its half (the prose and
 * memory-policy globs; in a with-memory half the memory-policy globs alone)
 * and that changes.md: anything else it changed is put back and named.
 */
export interface EditorOutcome {
  /** Prose files that differ from the tip now (what `git tune edit` records). */
  changed: string[];
  /** Files the editor changed and may not, put back as they were. */
  undone: string[];
  proposals: number;
  /** Where what the editor was given (proposals.json) and what it printed (stdout, stderr) are kept: `<gitdir>/tune/<name>/editor/<run>/`. */
  log: string;
  /** Its last stderr line, or stdout's when stderr is empty (what it answered, in brief). */
  said: string;
}

/** The globs an edit after `run` may change (docs/method.md#halves: only memory-policy files in the with-memory half). */
export const editableGlobs = (tuning: Tuning, run: RunState) =>
  run.half === 'mem' ? tuning.config!.memoryPolicy : [...tuning.config!.prose, ...tuning.config!.memoryPolicy];

export async function runEditor(tuning: Tuning, run: RunState, judge: JudgeFile, env: Env): Promise<EditorOutcome> {
  const config = tuning.config!;
  const editor = config.editor!;
  const root = tuning.repo.dir;
  // Every case's proposals count: a with-memory run can be all right and still save twice.
  const proposals = mergeProposals(judge, run.cases)
    .map((p) => ({ file: p.file, change: p.change, why: p.why.join('; '), expect: p.expect.join('; '), cases: p.cases }));
  const changesFile = changesPath(tuning, run.name);
  const mayChange = matcher(editableGlobs(tuning, run));
  const baseline = await worktreeBaseline(root, env);
  const scratch = await makeScratch('editor');
  const log = localPath(tuning.repo.gitdir, tuning.name, 'editor', run.name);
  let said = '';
  try {
    const proposalsFile = path.join(scratch, 'proposals.json');
    await fs.writeFile(proposalsFile, JSON.stringify(proposals, null, 2));
    const command = resolveCommand(editor, 'editor', config);
    const outcome = await runProcess({
      command: command.command, shell: command.shell, cwd: root,
      env: {
        ...env, ...editor.env, ...command.env, TUNE_ROOT: root,
        TUNE_FINDINGS: path.join(root, findingsPath(tuning, run.name)),
        TUNE_PROPOSALS: proposalsFile,
        TUNE_CHANGES: path.join(root, changesFile),
        TUNE_HALF: run.half ?? 'nomem',
        TUNE_RUN: run.name,
      },
      timeoutMs: editor.timeoutSec * 1000,
      stdoutFile: path.join(scratch, 'stdout'), stderrFile: path.join(scratch, 'stderr'),
    });
    if (outcome.requested) {
      // Stopped by the user: what it changed is put back, so a later edit starts from the tip.
      await undoOutside(root, env, baseline, () => false);
      throw interruptedError(`the editor on ${run.name}`);
    }
    // Kept, so a person can see what the editor was given and what it answered (the last call per run).
    await fs.rm(log, { recursive: true, force: true });
    await fs.mkdir(log, { recursive: true });
    for (const f of ['proposals.json', 'stdout', 'stderr']) await fs.copyFile(path.join(scratch, f), path.join(log, f)).catch(() => undefined);
    const lastLine = async (f: string) => (await fs.readFile(path.join(scratch, f), 'utf8').catch(() => '')).trim().split('\n').pop()!.slice(0, 300);
    said = (await lastLine('stderr')) || (await lastLine('stdout'));
    if (outcome.exitCode !== 0) {
      // A failed editor leaves nothing behind: what it changed is put back.
      const undone = await undoOutside(root, env, baseline, () => false);
      const err = (await fs.readFile(path.join(scratch, 'stderr'), 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' / ');
      throw usageError('editor-failed', `the editor failed on ${run.name} (exit ${outcome.exitCode ?? outcome.signal ?? outcome.spawnError}${outcome.timedOut ? ', timed out' : ''})${err ? `: ${err}` : ''}${undone.length ? `; put back what it changed: ${undone.join(', ')}` : ''}`,
        `git tune auto   # once the editor (${editor.command?.join(' ') ?? editor.preset}) is fixed; what it changed was put back`);
    }
  } finally {
    await removeScratch(scratch);
  }
  const undone = await undoOutside(root, env, baseline, (file) => file === changesFile || mayChange(file));
  const changed = await uncommittedProse(tuning.repo, tuning.tip, editableGlobs(tuning, run));
  return { changed, undone, proposals: proposals.length, log, said };
}

/**
 * After a kill between the editor and its edit commit: prose of the tuning
 * the half may not change is put back from the tip (the editor's baseline is
 * gone with the killed process).
 */
export async function undoOutsideHalf(tuning: Tuning, run: RunState): Promise<string[]> {
  const config = tuning.config!;
  const mayChange = matcher(editableGlobs(tuning, run));
  const dirty = (await uncommittedProse(tuning.repo, tuning.tip, [...config.prose, ...config.memoryPolicy])).filter((f) => !mayChange(f));
  if (dirty.length > 0) await tuning.repo.checkoutPaths(tuning.tip, dirty);
  return dirty;
}
