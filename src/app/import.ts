import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Case } from '../contracts/dataset.js';
import { formatProblem } from '../contracts/problems.js';
import { folderDatasetCases } from '../core/import/dataset.js';
import type { FolderInput, RunFolder } from '../core/import/folder.js';
import { planImport, type ImportPlan } from '../core/import/replay.js';
import type { InitFlags } from '../core/import/settings.js';
import { compareText } from '../core/import/values.js';
import { branchName, branchRef, tagName, tagRef } from '../core/names.js';
import { TuneError, usageError } from '../errors.js';
import { withToolLock } from '../git/lock-owner.js';
import type { FileChange, GitRepo } from '../git/types.js';
import { landSteps, type CommitTarget, type StepCommit, type WriteContext } from './commit.js';
import { renderConfig } from './config-file.js';
import { readDatasetInput, validateDatasetValues } from './dataset-file.js';
import { Plan, type DryRunnable } from './plan.js';
import { assertCleanGitState } from './tuning.js';

/**
 * `git tune import <dir>` (docs/import.md): a folder-based tuning (a
 * `finetune/` folder) becomes a tuning branch whose history replays it, so
 * `git tune next` carries on where the folder stood.
 *
 * Three moves, as everywhere: `readFolder` reads the folder into plain data
 * (the only I/O before writing), `planFolderImport` turns it into the list
 * of step commits (pure, src/core/import/: the shapes each file may take,
 * and the replay, are documented there; a bad folder is refused whole with
 * every problem), `applyImport` writes them and switches to the branch.
 */
export type { FolderInput, ImportPlan, InitFlags };

const COMPACT_EXTENSIONS = new Set(['.json', '.md', '.txt', '.yaml', '.yml']);
const COMPACT_MAX_BYTES = 1024 * 1024;
const DATASET_NAMES = ['dataset.json', 'dataset.jsonl', 'dataset.yaml', 'dataset.yml'];
const TOP_FILES = ['config.json', 'selection.json', 'difficult.json', 'memory/last-good.json', 'memory/candidate.json'];

async function readIfFile(file: string): Promise<string | null> {
  const stat = await fs.stat(file).catch(() => null);
  return stat?.isFile() ? fs.readFile(file, 'utf8') : null;
}

/**
 * The folder's dataset, checked as `git tune dataset import` checks one;
 * dataset.json in the folder method's shapes too. Null for a dataset.json
 * that holds no case yet: the folder method reads it as not built.
 */
async function readFolderDataset(root: string, name: string, shown: string, cwd: string): Promise<Case[] | null> {
  const file = path.join(root, name);
  if (name !== 'dataset.json') return readDatasetInput(file, cwd);
  const text = await fs.readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return readDatasetInput(file, cwd); // lists the JSON error with its line
  }
  const items = folderDatasetCases(value);
  if (items === null) {
    throw usageError('bad-dataset', 'the dataset was refused: 1 problem; nothing was written', 'fix every problem listed and import again', [
      formatProblem({ file: `${shown}/${name}`, where: 'top level', message: 'must be {"cases": [...]}, {"samples": [...]} or a list of cases' }),
    ]);
  }
  if (items.length === 0) return null;
  return validateDatasetValues(items, `${shown}/${name}`);
}

/** Reads everything the import needs from the folder; the only I/O before writing. */
export async function readFolder(dir: string, cwd: string): Promise<FolderInput> {
  const root = path.resolve(cwd, dir);
  const shown = path.relative(cwd, root) || '.';
  const stat = await fs.stat(root).catch(() => null);
  if (!stat?.isDirectory()) {
    throw usageError('no-such-folder', `${dir} is not a folder`, 'git tune import finetune/');
  }
  const files = new Map<string, string>();
  const problems: string[] = [];
  for (const rel of TOP_FILES) {
    const text = await readIfFile(path.join(root, rel));
    if (text !== null) files.set(rel, text);
  }

  let cases: Case[] = [];
  let datasetFile: string | null = null;
  const datasetFiles: string[] = [];
  for (const n of DATASET_NAMES) if ((await readIfFile(path.join(root, n))) !== null) datasetFiles.push(n);
  if (datasetFiles.length > 1) {
    problems.push(formatProblem({ file: shown, message: `holds ${datasetFiles.join(' and ')}: keep one dataset file` }));
  } else if (datasetFiles.length === 1) {
    datasetFile = datasetFiles[0]!;
    try {
      const read = await readFolderDataset(root, datasetFile, shown, cwd);
      if (read === null) datasetFile = null;
      else cases = read;
    } catch (err) {
      if (!(err instanceof TuneError)) throw err;
      problems.push(...(err.details.length > 0 ? err.details : [err.message]));
    }
  }

  const runFolders: RunFolder[] = [];
  const runsDir = path.join(root, 'runs');
  const entries = await fs.readdir(runsDir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => compareText(a.name, b.name))) {
    const runDir = path.join(runsDir, entry.name);
    const inside = await fs.readdir(runDir, { withFileTypes: true });
    const compact: string[] = [];
    for (const f of inside.filter((e) => e.isFile()).sort((a, b) => compareText(a.name, b.name))) {
      if (!COMPACT_EXTENSIONS.has(path.extname(f.name).toLowerCase())) continue;
      const size = (await fs.stat(path.join(runDir, f.name))).size;
      if (size > COMPACT_MAX_BYTES) continue;
      compact.push(f.name);
    }
    const hasBatchDir = inside.some((e) => e.isDirectory() && e.name === 'batch');
    if (hasBatchDir && (await readIfFile(path.join(runDir, 'batch', 'batch.json'))) !== null) compact.push('batch/batch.json');
    for (const rel of compact) files.set(`runs/${entry.name}/${rel}`, await fs.readFile(path.join(runDir, ...rel.split('/')), 'utf8'));
    runFolders.push({ folder: entry.name, hasBatchDir, files: compact });
  }
  return { shown, datasetFile, cases, files, runFolders, problems };
}

/** The import's plan for a folder read by `readFolder`; refuses a bad folder with every problem, nothing written. */
export function planFolderImport(input: FolderInput, tuning: string, flags: InitFlags = {}): ImportPlan {
  const plan = planImport(input, { tuning, flags, renderConfig });
  if (plan.problems.length > 0) {
    throw usageError(
      'bad-folder',
      `the folder was refused: ${plan.problems.length} problem${plan.problems.length === 1 ? '' : 's'}; nothing was written`,
      'fix every problem listed and import again',
      plan.problems,
    );
  }
  return plan;
}

// ---------------------------------------------------------------------------
// apply

export interface ImportResult {
  tip: string;
  commits: string[];
  tags: string[];
}

/**
 * Writes the plan: every check first (branch, tags, tuning folder, git
 * state), then the chain through the one step writer (`commitSteps`, which
 * checks secrets and identity before writing; a revert names the edits of the
 * chain it undoes, so each commit's id is known before the next is made),
 * then one compare-and-swap creates the branch, the run tags follow, and
 * HEAD moves to it with its files checked out, as `git tune init` does.
 * A dry run makes the same checks and returns the chain's plan.
 */
export async function applyImport(repo: GitRepo, plan: ImportPlan, ctx: DryRunnable<WriteContext>): Promise<ImportResult | Plan> {
  return withToolLock(repo.gitdir, plan.tuning, 'git tune import', () => applyImportLocked(repo, plan, ctx));
}

async function applyImportLocked(repo: GitRepo, plan: ImportPlan, ctx: DryRunnable<WriteContext>): Promise<ImportResult | Plan> {
  const ref = branchRef(plan.tuning);
  if (await repo.resolveRef(ref)) {
    throw usageError('tuning-exists', `tuning ${plan.tuning} already exists (branch ${branchName(plan.tuning)})`,
      `git tune import <dir> --name <another-name>   # or: git switch ${branchName(plan.tuning)}`);
  }
  const taken: string[] = [];
  for (const run of plan.tags) if (await repo.resolveRef(tagRef(plan.tuning, run))) taken.push(tagName(plan.tuning, run));
  if (taken.length > 0) {
    throw usageError('tag-exists', `run tags of tuning ${plan.tuning} already exist: ${taken.join(', ')}`,
      `git tag -d ${taken.join(' ')}   # only if they are left over from another repository`);
  }
  await assertCleanGitState(repo);
  const headRef = await repo.headRef();
  const base = headRef ? await repo.resolveRef(headRef) : await repo.resolveRef('HEAD');
  if ((base && (await repo.treeOidAt(base, plan.dir))) || (await fs.stat(path.join(repo.dir, plan.dir)).catch(() => null))) {
    throw usageError('tuning-dir-exists', `${plan.dir} already exists here; the import would write over it`,
      `git tune import <dir> --name <another-name>`);
  }

  // One chain through the step writer (a few packs, its README.md and USAGE.md rendered once, in the
  // last commit); the branch moves once, by compare-and-swap from "absent", as for init: the tuning
  // appears whole or not at all. Then the run tags in one transaction, and HEAD moves to it.
  const steps = plan.steps.map((step): StepCommit => ({
    step: { ...step.data, tuning: plan.tuning, difficult: step.difficult } as StepCommit['step'],
    subject: step.subject,
    body: step.body,
    changes: new Map<string, FileChange>(step.files.map(([p, content]) => [p, { content }])),
    tags: step.tags,
    ...(step.reverts ? { revertsInChain: step.reverts } : {}),
  }));
  const target: CommitTarget = { repo, ref, parent: base, expected: null, tuning: plan.tuning, onBranch: false };
  const commits = await landSteps(target, steps, ctx, { command: 'import', reports: 'last-commit', switchHead: true });
  if (commits instanceof Plan) {
    return commits.followedBy(`create ${branchName(plan.tuning)} at the last of them, tag ${plan.tags.length} run${plan.tags.length === 1 ? '' : 's'} and switch to it (README.md and USAGE.md join the last commit)`);
  }
  const tip = commits[commits.length - 1]!;
  return { tip, commits, tags: plan.tags.map((run) => tagName(plan.tuning, run)) };
}
