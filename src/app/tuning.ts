import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Case } from '../contracts/dataset.js';
import type { Config } from '../contracts/config.js';
import type { Selection } from '../contracts/files.js';
import { PARSED_ONCE } from '../contracts/values.js';
import type { HistoryCommit, TuningState } from '../core/fold.js';
import { matcher } from '../core/glob.js';
import { branchName, branchRef } from '../core/names.js';
import { resolveTuningName } from './tuning-name.js';
import { configPath, datasetPath, heldOutPath, localPath, readmePath, selectionPath, tuningDir } from '../core/paths.js';
import { usageError } from '../errors.js';
import { currentHolder } from '../git/lock-owner.js';
import { openRepo } from '../git/open.js';
import { recordGroupsIn } from '../run/groups.js';
import type { GitRepo } from '../git/types.js';
import { dropParsed, markProse, readTuningHistory, walkHistory, type TipFiles } from './cache.js';
import { lookAtRunTags, settleRunTags, viewOf, type RunTagLook } from './abandon.js';
import { finishInterruptedSteps } from './recover.js';
import type { Env } from '../git/identity.js';

/**
 * Read: a tuning's branch history and the files at its tip, as plain data.
 * `loadTuning` only reads; `openTuning`/`startTuning`, where a command
 * starts, first finishes what a killed command left half-applied.
 */
export interface Tuning {
  repo: GitRepo;
  name: string;
  /** `.tune/<name>`, relative to the repository root. */
  dir: string;
  ref: string;
  tip: string;
  onBranch: boolean;
  commits: HistoryCommit[];
  state: TuningState;
  config: Config | null;
  configText: string | null;
  selection: Selection | null;
  /** README.md at the tip (its hand-written part still the placeholder is a note of `next`). */
  readme?: string | null;
  /** What the command's start finished of an interrupted step before this read (`startTuning`, src/app/recover.ts). */
  notices?: string[];
  loadDataset(): Promise<Case[]>;
  /** The held-out cases at the tip (docs/held-out.md); none when the tuning has no held-out set. */
  loadHeldOut(): Promise<Case[]>;
  /**
   * A pure function of this tuning as loaded (its tip), computed once per tip
   * and kept in the cache (src/app/cache.ts). Only on the object loadTuning
   * returned: a copy with other state computes afresh.
   */
  memo?<T>(key: string, compute: () => T): T;
}

export async function readText(repo: GitRepo, commit: string, file: string): Promise<string | null> {
  const blob = await repo.readBlobAt(commit, file);
  return blob === null ? null : Buffer.from(blob).toString('utf8');
}

/** First-parent commits from the tuning's init commit to the tip, oldest first. */
export async function readHistory(
  repo: GitRepo,
  name: string,
  tip: string,
  isProse: (p: string) => boolean,
): Promise<HistoryCommit[]> {
  const { commits, hand, handPaths } = await walkHistory(repo, name, tip);
  markProse(hand, handPaths, isProse, name);
  return dropParsed(commits);
}

/** Where a command starts, from its working directory: `startTuning`. */
export async function openTuning(cwd: string, name?: string): Promise<Tuning> {
  return startTuning(await openRepo(cwd), name);
}

/**
 * Where a command starts: the steps a killed command left half-applied are
 * finished first (src/app/recover.ts), once, then the tuning is read. What
 * was finished shows as the tuning's `notices` (`git tune status`).
 */
export async function startTuning(repo: GitRepo, name?: string, ctx: { env: Env; now: Date } = { env: process.env, now: new Date() }): Promise<Tuning> {
  const finished = await finishInterruptedSteps(repo);
  // Run tags of steps a rewrite abandoned go aside, once per tip (src/app/abandon.ts); it never stops the command.
  // They are looked at as soon as the tip is known: git lists them while the history is read.
  let look: RunTagLook | undefined;
  const tuning = await loadTuning(repo, name, (at, tip) => (look = lookAtRunTags(repo, at, tip)));
  // The runners, judges and editors this command starts are recorded, so a command after a kill of this one ends them (src/run/groups.ts).
  recordGroupsIn(localPath(repo.gitdir, tuning.name, 'groups'), await currentHolder('git tune'));
  const settled = await settleRunTags(viewOf(tuning), ctx, look).catch((err: Error) => [`run tags of abandoned steps were not moved aside: ${err.message}`]);
  const notices = [...finished, ...settled];
  if (notices.length > 0) tuning.notices = notices;
  return tuning;
}

/** The same tuning read again (after a step was written): reading only. */
export function reloadTuning(tuning: Pick<Tuning, 'repo' | 'name'>): Promise<Tuning> {
  return loadTuning(tuning.repo, tuning.name);
}

/**
 * Reads a tuning; writes nothing (a command's start recovers first: `startTuning`).
 * `atTip` is told the tuning and its tip as soon as they are known, before the history is read.
 */
export async function loadTuning(repo: GitRepo, requested?: string, atTip?: (name: string, tip: string) => void): Promise<Tuning> {
  const { name, onBranch } = await resolveTuningName(repo, requested);
  const ref = branchRef(name);
  const tip = await repo.resolveRef(ref);
  if (!tip) {
    throw usageError('no-such-tuning', `there is no tuning ${name} (no branch ${branchName(name)})`,
      `git tune init ${name} --prose '<glob>'`);
  }
  atTip?.(name, tip);
  const dir = tuningDir(name);
  // The history, its fold and the parsed tip files come from the cache when it
  // holds this tip (src/app/cache.ts); the YAML parser loads only when it does not.
  const history = await readTuningHistory(
    repo, name, tip,
    async () => {
      // Asked at once: the three reach git's cat-file in one write.
      const [configText, selectionText, readmeText] = await Promise.all([
        readText(repo, tip, configPath(dir)), readText(repo, tip, selectionPath(dir)), readText(repo, tip, readmePath(dir)),
      ]);
      return { configText, selectionText, readmeText };
    },
    async (files: TipFiles) => {
      const { parseConfig } = await import('./config-file.js');
      const { selectionSchema } = await import('../contracts/files.js');
      const config = files.configText === null ? null : parseConfig(files.configText, configPath(dir)).config;
      const selection = files.selectionText === null ? null : selectionSchema.parse(JSON.parse(files.selectionText), PARSED_ONCE);
      return { config, selection };
    },
    ({ config, selection }) => ({ isProse: matcher(config?.prose ?? []), selection: selection?.ids ?? [] }),
  );
  const { configText } = history;
  const { config, selection } = history.parsed;
  let dataset: Promise<Case[]> | null = null;
  let heldOut: Promise<Case[]> | null = null;
  const readme = history.readmeText;
  const tuning: Tuning = {
    repo, name, dir, ref, tip, onBranch, config, configText, selection, readme,
    // Read from the cache when first used: a warm `next` whose answer is kept never needs them.
    get state() {
      return history.state();
    },
    get commits() {
      return history.commits();
    },
    memo<T>(key: string, compute: () => T): T {
      return this === tuning ? history.memo(key, compute) : compute();
    },
    loadDataset() {
      dataset ??= import('./dataset-file.js').then(async ({ parseDatasetJsonl }) => {
        const text = await readText(repo, tip, datasetPath(dir));
        return text === null ? [] : parseDatasetJsonl(text, datasetPath(dir));
      });
      return dataset;
    },
    loadHeldOut() {
      heldOut ??= import('./dataset-file.js').then(async ({ parseDatasetJsonl }) => {
        const text = await readText(repo, tip, heldOutPath(dir));
        return text === null || !text.trim() ? [] : parseDatasetJsonl(text, heldOutPath(dir));
      });
      return heldOut;
    },
  };
  return tuning;
}

/** Refuses to write while git is in the middle of something the user must finish. */
export async function assertCleanGitState(repo: GitRepo): Promise<void> {
  const markers: Array<[string, string, string]> = [
    ['MERGE_HEAD', 'a merge', 'git merge --continue   # or: git merge --abort'],
    ['rebase-merge', 'a rebase', 'git rebase --continue   # or: git rebase --abort'],
    ['rebase-apply', 'a rebase or am', 'git rebase --continue   # or: git rebase --abort'],
    ['CHERRY_PICK_HEAD', 'a cherry-pick', 'git cherry-pick --continue   # or: git cherry-pick --abort'],
    ['REVERT_HEAD', 'a revert', 'git revert --continue   # or: git revert --abort'],
    ['BISECT_LOG', 'a bisect', 'git bisect reset'],
  ];
  for (const [marker, what, hint] of markers) {
    const exists = await fs.access(path.join(repo.gitdir, marker)).then(() => true, () => false);
    if (exists) throw usageError('git-busy', `git is in the middle of ${what}: finish it first`, hint);
  }
}
