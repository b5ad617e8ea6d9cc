import path from 'node:path';
import { batchLabel } from './names.js';

/**
 * Where a tuning's files live, each named once. Pure string functions.
 *
 * On the branch, repository-relative and `/`-separated, under
 * `dir` = `.tune/<name>` (tuningDir):
 *   config.yaml, selection.json, dataset.jsonl, held-out.jsonl,
 *   baseline/results.json, difficult.json, README.md,
 *   USAGE.md, batches/batchNN.json, runs/<run>/{run.json, results.json,
 *   memory-writes.json, judge.json, findings.md, changes.md},
 *   memory/{last-good,candidate}/…
 *
 * In this clone only (never committed), under `<gitdir>/tune/<name>/`
 * (localPath): the run store (runs/<run>/cases/<id>.json), the fold cache
 * (cache/), the step journal (pending-step.json), auto's stop file (stop),
 * the tool lock (lock), auto's driver lock (driver), final-check shards (shards/), prose put aside during
 * a run (changed-during-run/), a fleet target's linked worktree (worktree/); and `<gitdir>/tune/` itself holds the
 * hooks' state (hook-commit.json) and lock owners (.locks/).
 */
export const tuningDir = (tuning: string) => `.tune/${tuning}`;

export const CONFIG_FILE = 'config.yaml';
export const SELECTION_FILE = 'selection.json';
export const DATASET_FILE = 'dataset.jsonl';
/** The held-out cases: the dataset's format, never planned into a batch (docs/held-out.md). */
export const HELD_OUT_FILE = 'held-out.jsonl';
/** The baseline's folder: the original prose's results (docs/held-out.md). */
export const BASELINE_DIR = 'baseline';
export const DIFFICULT_FILE = 'difficult.json';
export const README_FILE = 'README.md';
export const USAGE_FILE = 'USAGE.md';
export const MEMORY_DIR = 'memory';
export const RUNS_DIR = 'runs';
export const BATCHES_DIR = 'batches';

/** The files of a run's folder on the branch. */
export const RUN_FILES = {
  meta: 'run.json',
  results: 'results.json',
  memoryWrites: 'memory-writes.json',
  judge: 'judge.json',
  findings: 'findings.md',
  changes: 'changes.md',
} as const;
export type RunFile = (typeof RUN_FILES)[keyof typeof RUN_FILES];

/** The two memory trees: what every later run starts from, and what the current batch's with-memory runs start from. */
export type MemoryTreeName = 'last-good' | 'candidate';

export const configPath = (dir: string) => `${dir}/${CONFIG_FILE}`;
export const selectionPath = (dir: string) => `${dir}/${SELECTION_FILE}`;
export const datasetPath = (dir: string) => `${dir}/${DATASET_FILE}`;
export const heldOutPath = (dir: string) => `${dir}/${HELD_OUT_FILE}`;
/** `baseline/results.json`: each case's result with the original prose, and its verdict. */
export const baselineResultsPath = (dir: string) => `${dir}/${BASELINE_DIR}/results.json`;
export const difficultPath = (dir: string) => `${dir}/${DIFFICULT_FILE}`;
export const readmePath = (dir: string) => `${dir}/${README_FILE}`;
export const usagePath = (dir: string) => `${dir}/${USAGE_FILE}`;
export const batchPlanPath = (dir: string, batch: number) => `${dir}/${BATCHES_DIR}/${batchLabel(batch)}.json`;
/** `.tune/<name>/runs/`, with its slash: what every run folder's path starts with. */
export const runsPrefix = (dir: string) => `${dir}/${RUNS_DIR}/`;
export const runDir = (dir: string, run: string) => `${dir}/${RUNS_DIR}/${run}`;
export const runFilePath = (dir: string, run: string, file: RunFile) => `${runDir(dir, run)}/${file}`;
export const memoryPath = (dir: string, which: MemoryTreeName) => `${dir}/${MEMORY_DIR}/${which}`;

/** `<gitdir>/tune/.locks`: who holds git's lock files (beside the tunings' folders, never a tuning's name). */
export const LOCKS_DIR = '.locks';
/** `<gitdir>/tune/.temps`: one ledger per process of the folders it makes temporary files in (src/git/temp-files.ts). */
export const TEMPS_DIR = '.temps';

/** `<gitdir>/tune`: the local state of every tuning of this clone. */
export const localRoot = (gitdir: string) => path.join(gitdir, 'tune');
/** Local state of tuning `tuning`: `<gitdir>/tune/<name>/<parts…>`. */
export const localPath = (gitdir: string, tuning: string, part: LocalPart, ...rest: string[]) => path.join(gitdir, 'tune', tuning, part, ...rest);
/** Each kind of local state of a tuning (what follows is a run, shard or file name). */
export type LocalPart = 'runs' | 'cache' | 'pending-step.json' | 'stop' | 'lock' | 'driver' | 'shards' | 'changed-during-run' | 'worktree' | 'editor' | 'groups';
/** `<gitdir>/tune/<name>/cache`: what is kept per tip (src/app/cache.ts, src/app/tip-memo.ts); deleted any time, it is made again. */
export const cachePath = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'cache');
/** `next`'s answer kept per tip (src/app/tip-memo.ts), looked for by the entry before it loads the kept answer's bundle. */
export const memoPath = (gitdir: string, tuning: string) => path.join(cachePath(gitdir, tuning), 'memo.json');
