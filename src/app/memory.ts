import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { MemoryWrite } from '../contracts/result.js';
import { singleQuoted } from '../core/argv.js';
import {
  describeConflict, diffTrees, memoryPathProblem, planCandidate, sortTree,
  type MemoryConflict, type MemoryTree, type TreeDiff,
} from '../core/memory.js';
import type { NextStep } from '../core/next.js';
import { historyError, TuneError, EXIT, usageError } from '../errors.js';
import type { Env } from '../git/identity.js';
import type { FileChange } from '../git/types.js';
import { snapshotMemory, writeMemory } from '../run/memory.js';
import { interruptedError, readCapped, runProcess } from '../run/process.js';
import { makeScratch, removeScratch } from '../run/scratch.js';
import { landStep, targetOf, type WriteContext } from './commit.js';
import { Plan, type DryRunnable } from './plan.js';
import { nextFor } from './decide.js';
import { requireWriter } from './guards.js';
import { readRunResults } from './results.js';
import type { Tuning } from './tuning.js';
import { memoryPath, RUN_FILES, runFilePath, type MemoryTreeName } from '../core/paths.js';

/**
 * `git tune memory candidate` and `git tune memory checkpoint` (docs/method.md#halves
 * steps 2 and 4, 3.7). The trees live on the branch:
 * `.tune/<name>/memory/last-good/` (what every later run starts from) and
 * `.tune/<name>/memory/candidate/` (what the with-memory runs of the current
 * batch start from). Each is only ever replaced whole, in one commit that
 * also deletes the files no longer there.
 *
 * Decisions:
 * - Both commands run only when `git tune next` says so (else exit 3 with
 *   next's message and command): history, not the files, says a candidate or
 *   checkpoint is due.
 * - The candidate = the last good memory at the tip + the writes each case of
 *   the passing no-memory run recorded (its memory-writes.json), applied in
 *   the run's case order. Conflicts are kept and listed (in the output, the
 *   commit body and --json), never dropped: see src/core/memory.ts for the
 *   rule (the first case keeps the path, later ones go to
 *   `<path>.conflict-<caseid>`; a deletion never beats a write).
 * - A recorded write whose path would leave the memory (`..`, absolute,
 *   `.git`) or that lacks content refuses the whole candidate (exit 2).
 * - With `memory.merge` set, that command replaces the file-level merge: run
 *   in the repository root with TUNE_MEMORY_BASE (a temp copy of the last
 *   good memory), TUNE_MEMORY_WRITES (a JSON file {caseId: writes[]} in run
 *   order), TUNE_OUTPUT (an empty temp dir it must fill with the merged tree),
 *   TUNE_ROOT and TUNE_RUN. A non-zero exit, a spawn failure or a timeout
 *   (600 s) writes nothing and exits 2 (`merge-failed`, the configured
 *   command is at fault) with the tail of its stderr. Symlinks, special
 *   files and files over 8 MiB it leaves are ignored and listed, as in a run.
 * - An empty write set still makes a candidate commit (the candidate then
 *   equals the last good memory), and a checkpoint is a commit even when
 *   last-good already equals the candidate: `next` reads the steps, not files.
 */

export const memoryDir = (tuning: Tuning, which: MemoryTreeName) => memoryPath(tuning.dir, which);

export interface MemoryOutcome {
  step: 'candidate' | 'checkpoint';
  run: string | null;
  batch: number | null;
  commit: string;
  merge: 'files' | 'command' | null;
  diff: TreeDiff;
  conflicts: Array<MemoryConflict & { message: string }>;
  /** Files a merge command left that are not recorded (symlinks, special files, too big). */
  ignored: string[];
}

export interface MemoryContext extends WriteContext {
  env: Env;
}

/** A memory tree as committed at the tip, by path relative to its folder. */
export async function readMemoryTree(tuning: Tuning, which: MemoryTreeName): Promise<MemoryTree> {
  const dir = memoryDir(tuning, which);
  const tree: MemoryTree = new Map();
  for (const f of await tuning.repo.listFiles(tuning.tip, dir)) {
    const content = await tuning.repo.readBlobAt(tuning.tip, f.path);
    if (content) tree.set(f.path.slice(dir.length + 1), content);
  }
  return sortTree(tree);
}

function requireDue(tuning: Tuning, kind: 'candidate' | 'checkpoint'): NextStep {
  const step = nextFor(tuning);
  if (step.kind !== kind) {
    throw historyError(kind === 'candidate' ? 'candidate-not-due' : 'checkpoint-not-due', `no ${kind === 'candidate' ? 'candidate memory' : 'checkpoint'} is due: ${step.message}`, step.command ?? undefined);
  }
  return step;
}

/** The commit's file changes that replace the tree at `dir` whole: deletions first. */
function replaceWhole(dir: string, before: MemoryTree, after: MemoryTree, diff: TreeDiff): Map<string, FileChange> {
  // A folder of the old tree that the new one makes a file would need the
  // folder's files deleted in the same tree edit as the file is written; the
  // commit writer cannot order that, and no merge we make produces it.
  for (const p of after.keys()) {
    const clash = [...before.keys()].find((b) => b.startsWith(`${p}/`));
    if (clash) {
      throw usageError('memory-shape', `the new tree makes ${dir}/${p} a file where the old one has the folder ${dir}/${p}/`,
        `git rm -r -q ${singleQuoted(`${dir}/${p}`)} && git commit -m ${singleQuoted(`clear the memory folder ${p}`)}   # then run the command again`);
    }
  }
  const changes = new Map<string, FileChange>();
  for (const d of diff.deleted) changes.set(`${dir}/${d.path}`, null);
  for (const c of [...diff.added, ...diff.changed]) changes.set(`${dir}/${c.path}`, { content: after.get(c.path)! });
  return changes;
}

const LIST_CAP = 40;

function capped(lines: string[]): string[] {
  return lines.length <= LIST_CAP ? lines : [...lines.slice(0, LIST_CAP), `- … and ${lines.length - LIST_CAP} more`];
}

function diffBody(diff: TreeDiff): string[] {
  const out: string[] = [];
  const section = (title: string, items: Array<{ path: string; bytes: number }>) => {
    if (items.length === 0) return;
    out.push('', `${title}:`, ...capped(items.map((i) => `- ${i.path} (${i.bytes} bytes)`)));
  };
  section('Added', diff.added);
  section('Changed', diff.changed);
  section('Deleted', diff.deleted);
  return out;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Runs `memory.merge`: the merged tree it leaves in TUNE_OUTPUT. */
async function runMergeCommand(
  tuning: Tuning,
  command: readonly string[],
  run: string,
  base: MemoryTree,
  writes: Record<string, MemoryWrite[]>,
  env: Env,
): Promise<{ files: MemoryTree; ignored: string[] }> {
  const tmp = await makeScratch('merge');
  try {
    const baseDir = path.join(tmp, 'base');
    const outDir = path.join(tmp, 'output');
    const writesFile = path.join(tmp, 'writes.json');
    await writeMemory(baseDir, [...base].map(([p, content]) => ({ path: p, content })));
    await fs.mkdir(outDir);
    await fs.writeFile(writesFile, `${JSON.stringify(writes, null, 2)}\n`);
    const stderrFile = path.join(tmp, 'merge.stderr');
    const outcome = await runProcess({
      command, shell: false, cwd: tuning.repo.dir,
      env: { ...env, TUNE_MEMORY_BASE: baseDir, TUNE_MEMORY_WRITES: writesFile, TUNE_OUTPUT: outDir, TUNE_ROOT: tuning.repo.dir, TUNE_RUN: run },
      timeoutMs: 600_000, stdoutFile: path.join(tmp, 'merge.stdout'), stderrFile,
    });
    if (outcome.requested) throw interruptedError(`the memory.merge command (${command.join(' ')})`);
    if (outcome.spawnError || outcome.timedOut || outcome.exitCode !== 0) {
      const why = outcome.spawnError
        ? `could not start: ${outcome.spawnError}`
        : outcome.timedOut ? 'timed out after 600s' : outcome.signal ? `was killed (${outcome.signal})` : `exited ${outcome.exitCode}`;
      const stderr = (await readCapped(stderrFile, 1024 * 1024)).text ?? '';
      const tail = stderr.trimEnd().split('\n').filter(Boolean).slice(-10).map((l) => `stderr: ${l}`);
      throw new TuneError('merge-failed', `the memory.merge command (${command.join(' ')}) ${why}: nothing was written`, {
        exitCode: EXIT.usage,
        hint: 'fix the command, or: git tune config set memory.merge null   # back to the file-level merge',
        details: tail,
      });
    }
    const snap = await snapshotMemory(outDir);
    const files: MemoryTree = new Map();
    for (const p of snap.files.keys()) files.set(p, new Uint8Array(await fs.readFile(path.join(outDir, p))));
    return { files: sortTree(files), ignored: snap.refused };
  } finally {
    await removeScratch(tmp);
  }
}

/** `git tune memory candidate`: one `candidate` commit replacing memory/candidate/ whole. */
export async function buildCandidate(tuning: Tuning, ctx: MemoryContext): Promise<MemoryOutcome>;
export async function buildCandidate(tuning: Tuning, ctx: DryRunnable<MemoryContext>): Promise<MemoryOutcome | Plan>;
export async function buildCandidate(tuning: Tuning, ctx: DryRunnable<MemoryContext>): Promise<MemoryOutcome | Plan> {
  await requireWriter(tuning);
  const step = requireDue(tuning, 'candidate');
  const run = step.run!;
  const results = await readRunResults(tuning, run);
  const order = [...results.cases, ...Object.keys(results.writes).filter((id) => !results.cases.includes(id)).sort()];
  const cases = order.filter((id) => (results.writes[id] ?? []).length > 0).map((caseId) => ({ caseId, writes: results.writes[caseId]! }));
  const base = await readMemoryTree(tuning, 'last-good');
  const before = await readMemoryTree(tuning, 'candidate');

  let files: MemoryTree;
  let conflicts: MemoryConflict[] = [];
  let ignored: string[] = [];
  const mergeCommand = tuning.config?.memory.merge ?? null;
  if (mergeCommand) {
    // A dry run stops before the merge command starts (src/app/plan.ts).
    if (ctx.dryRun) return new Plan([], `run the memory.merge command (${mergeCommand.join(' ')}) on what the cases of ${run} wrote, then commit the candidate`);
    const ordered: Record<string, MemoryWrite[]> = {};
    for (const c of cases) ordered[c.caseId] = [...c.writes];
    ({ files, ignored } = await runMergeCommand(tuning, mergeCommand, run, base, ordered, ctx.env));
    const bad = [...files.keys()].map((p) => [p, memoryPathProblem(p)] as const).filter(([, why]) => why !== null);
    if (bad.length > 0) throw usageError('merge-failed', 'the memory.merge command left paths a memory cannot hold', undefined, bad.map(([p, why]) => `${p}: ${why}`));
  } else {
    const plan = planCandidate(base, cases);
    if (plan.problems.length > 0) {
      throw usageError('bad-memory-writes', `${runFilePath(tuning.dir, run, RUN_FILES.memoryWrites)} holds writes that cannot be applied: nothing was written`,
        `git show ${tuning.ref.replace('refs/heads/', '')}:${runFilePath(tuning.dir, run, RUN_FILES.memoryWrites)}`, plan.problems);
    }
    files = plan.files;
    conflicts = plan.conflicts;
  }

  const dir = memoryDir(tuning, 'candidate');
  const diff = diffTrees(before, files);
  const described = conflicts.map((c) => ({ ...c, message: describeConflict(c) }));
  const writers = cases.map((c) => c.caseId);
  const body = [
    mergeCommand
      ? `Merged by the memory.merge command (${mergeCommand.join(' ')}) from the last good memory (${plural(base.size, 'file')}) and what the cases of ${run} wrote.`
      : `The last good memory (${plural(base.size, 'file')}) plus what the cases of ${run} wrote, in run order: ${writers.join(', ') || 'none wrote anything'}.`,
    `The candidate holds ${plural(diff.files, 'file')}, ${diff.bytes} bytes.`,
    ...diffBody(diff),
    ...(described.length > 0 ? ['', `Conflicts (${described.length}), each kept:`, ...capped(described.map((c) => `- ${c.message}`))] : []),
    ...(ignored.length > 0 ? ['', 'Ignored (left by the merge command):', ...capped(ignored.map((i) => `- ${i}`))] : []),
  ].join('\n');
  const conflictNote = described.length > 0 ? `, ${plural(described.length, 'conflict')} kept` : '';
  const commit = await landStep(targetOf(tuning), {
    step: { step: 'candidate', tuning: tuning.name, run, difficult: [] },
    subject: `tune(${tuning.name}): candidate memory from ${run} (${plural(diff.files, 'file')}${conflictNote})`,
    body,
    changes: replaceWhole(dir, before, files, diff),
  }, ctx);
  if (commit instanceof Plan) return commit;
  return {
    step: 'candidate', run, batch: step.batch, commit, merge: mergeCommand ? 'command' : 'files',
    diff, conflicts: described, ignored,
  };
}

/** `git tune memory checkpoint`: the candidate becomes the last good memory, whole. */
export async function makeCheckpoint(tuning: Tuning, ctx: MemoryContext): Promise<MemoryOutcome>;
export async function makeCheckpoint(tuning: Tuning, ctx: DryRunnable<MemoryContext>): Promise<MemoryOutcome | Plan>;
export async function makeCheckpoint(tuning: Tuning, ctx: DryRunnable<MemoryContext>): Promise<MemoryOutcome | Plan> {
  await requireWriter(tuning);
  const step = requireDue(tuning, 'checkpoint');
  const batch = step.batch!;
  const candidate = await readMemoryTree(tuning, 'candidate');
  const before = await readMemoryTree(tuning, 'last-good');
  const diff = diffTrees(before, candidate);
  const dir = memoryDir(tuning, 'last-good');
  const body = [
    `Batch ${batch} passed with memory (${step.run}): its candidate memory becomes the last good memory, whole.`,
    `The last good memory holds ${plural(diff.files, 'file')}, ${diff.bytes} bytes.`,
    ...diffBody(diff),
  ].join('\n');
  const commit = await landStep(targetOf(tuning), {
    step: { step: 'checkpoint', tuning: tuning.name, batch, difficult: [] },
    subject: `tune(${tuning.name}): checkpoint: batch ${batch} is the last good memory (${plural(diff.files, 'file')})`,
    body,
    changes: replaceWhole(dir, before, candidate, diff),
  }, ctx);
  if (commit instanceof Plan) return commit;
  return { step: 'checkpoint', run: step.run, batch, commit, merge: null, diff, conflicts: [], ignored: [] };
}
