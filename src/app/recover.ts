import { promises as fs } from 'node:fs';
import path from 'node:path';
import { branchName, runOfStore, tagRef } from '../core/names.js';
import { writeFileAtomic } from '../git/lockfile.js';
import { removeDeadGitLocks, tryToolLock } from '../git/lock-owner.js';
import { deadLedgers, removeDeadTemps } from '../git/temp-files.js';
import { filesUnder } from '../run/files.js';
import { endOrphanGroups } from '../run/groups.js';
import type { GitRepo } from '../git/types.js';
import { localPath, localRoot, LOCKS_DIR, TEMPS_DIR } from '../core/paths.js';

/**
 * A step lands in several writes: objects, the branch (compare-and-swap), run
 * tags, then the working tree and index. A process killed between them
 * (`kill -9`, a power cut) leaves the branch at the new step while tags or
 * files lag behind. Before the branch moves, the step writes what it is
 * about to do to `.git/tune/<name>/pending-step.json`, and removes it once
 * the working tree follows. The next command that reads the tuning finds a
 * journal left behind and finishes the step: the missing tags, HEAD (an
 * import), and the step's own files under `.tune/<name>/` (or prose it
 * committed), each only while it still holds what it held before the step or
 * what the step wrote: a file the user changed since is left alone, and no
 * other file is ever touched.
 */
export interface StepJournal {
  tuning: string;
  ref: string;
  /** The commit whose files the working tree held before the step. */
  base: string | null;
  /** The branch tip the step lands on. */
  to: string;
  tags: Array<[ref: string, oid: string]>;
  /** Files the step wrote, checked out when HEAD is on `ref`. */
  paths: string[];
  /** For a step that also moves HEAD to `ref` (import): where HEAD was. */
  head: { was: string | null; at: string | null } | null;
  command: string;
}

const journalFile = (gitdir: string, tuning: string) => localPath(gitdir, tuning, 'pending-step.json');

export async function writeJournal(repo: GitRepo, journal: StepJournal): Promise<void> {
  await writeFileAtomic(journalFile(repo.gitdir, journal.tuning), `${JSON.stringify(journal)}\n`, 0o644, 'journal');
}

export async function clearJournal(repo: GitRepo, tuning: string): Promise<void> {
  await fs.rm(journalFile(repo.gitdir, tuning), { force: true });
}

async function readJournal(repo: GitRepo, tuning: string): Promise<StepJournal | null> {
  const text = await fs.readFile(journalFile(repo.gitdir, tuning), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as StepJournal;
  } catch {
    return null; // written atomically: only a hand-damaged file is unreadable, and it says nothing
  }
}

/** The file on disk: its bytes, null when absent, 'other' for a directory, symlink or special file. */
async function onDisk(root: string, file: string): Promise<Buffer | null | 'other'> {
  const full = path.join(root, file);
  const st = await fs.lstat(full).catch(() => null);
  if (!st) return null;
  if (!st.isFile()) return 'other';
  return fs.readFile(full);
}

function sameContent(disk: Buffer | null | 'other', blob: Uint8Array | null): boolean {
  if (disk === 'other') return false;
  if (disk === null || blob === null) return disk === null && blob === null;
  return Buffer.compare(disk, Buffer.from(blob)) === 0;
}

async function finishStep(repo: GitRepo, j: StepJournal): Promise<string[]> {
  const done: string[] = [];
  if ((await repo.resolveRef(j.ref)) !== j.to) {
    // The branch never moved (nothing to finish), or moved on since: then the
    // tree is whatever that later command left, and is not ours to touch.
    await clearJournal(repo, j.tuning);
    return done;
  }
  for (const [tag, oid] of j.tags) {
    if (await repo.resolveRef(tag)) continue;
    await repo.compareAndSwapRef(tag, oid, null);
    done.push(`tag ${tag.replace('refs/tags/', '')} written`);
  }
  let head = await repo.headRef();
  if (head !== j.ref && j.head) {
    const at = head ? await repo.resolveRef(head) : await repo.resolveRef('HEAD');
    if (head === j.head.was && at === j.head.at) {
      await repo.setHeadRef(j.ref);
      head = j.ref;
      done.push(`switched to ${branchName(j.tuning)}`);
    }
  }
  if (head === j.ref && j.paths.length > 0) {
    const restore: string[] = [];
    const kept: string[] = [];
    for (const file of j.paths) {
      const disk = await onDisk(repo.dir, file);
      const wanted = await repo.readBlobAt(j.to, file);
      const before = j.base ? await repo.readBlobAt(j.base, file) : null;
      if (sameContent(disk, wanted) || sameContent(disk, before)) restore.push(file);
      else kept.push(file);
    }
    await repo.withIndexLock(() => repo.checkoutPaths(j.to, restore));
    if (restore.length > 0) done.push(`${restore.length} file${restore.length === 1 ? '' : 's'} checked out`);
    if (kept.length > 0) done.push(`left as they are (changed since): ${kept.join(', ')}`);
  }
  await clearJournal(repo, j.tuning);
  return done;
}

/**
 * Finishes every step an interrupted command left half-applied; returns one
 * line per step finished (for `status`). A journal whose command is still
 * running (its tool lock is held by a live process) is left to it.
 */
export async function finishInterruptedSteps(repo: GitRepo): Promise<string[]> {
  const names = await fs.readdir(localRoot(repo.gitdir)).catch(() => [] as string[]);
  const out: string[] = [];
  const locks = await removeDeadGitLocks(repo.gitdir);
  if (locks.length > 0) out.push(`lock files left by a git-tune that was killed were removed: ${locks.map((l) => `.git/${l}`).join(', ')}`);
  const temps = await sweepTemps(repo);
  if (temps.length > 0) out.push(`temporary files left by a git-tune that died were removed: ${temps.join(', ')}`);
  for (const name of names) {
    if (name.startsWith('.')) continue; // .locks, .temps: beside the tunings, never one
    // Runners, judges and editors a killed git-tune left running (own process groups) end before anything is written.
    const orphans = await endOrphanGroups(localPath(repo.gitdir, name, 'groups'));
    if (orphans.length > 0) out.push(`processes a killed git-tune left running were ended: ${orphans.join(', ')}`);
    const journal = await readJournal(repo, name);
    const leftover = await finishedRunStores(repo, name);
    if (!journal && leftover.length === 0) continue;
    const done = await tryToolLock(repo.gitdir, name, 'git tune (finishing an interrupted step)', async () => {
      const again = await readJournal(repo, name);
      const finished = again ? await finishStep(repo, again) : [];
      for (const dir of await finishedRunStores(repo, name)) await fs.rm(dir, { recursive: true, force: true });
      return finished;
    });
    if (journal && done && done.length > 0) out.push(`an interrupted ${journal.command} was finished: ${done.join('; ')}`);
  }
  return out;
}

const swept = new Set<string>();

/**
 * Removes the temporary files (`*.tmp-<pid>-…`, src/git/temp-files.ts) a
 * dead git-tune left, where it may have left them: the folders the ledgers
 * of dead processes name, the files of an unfinished step (prose anywhere in
 * the tree), and the few fixed folders of git's and the tool's locks (`.git`,
 * the index's folder, `.git/tune/.locks`, `.git/tune/<name>/`). Nothing is
 * searched, so the cost does not grow with the history. A clone whose
 * ledger folder does not exist yet (written by a version before ledgers) is
 * walked once. Once per process and repository; returns the files removed,
 * relative to the working tree.
 */
async function sweepTemps(repo: GitRepo): Promise<string[]> {
  if (swept.has(repo.gitdir)) return [];
  swept.add(repo.gitdir);
  const root = localRoot(repo.gitdir);
  const within = [repo.dir, repo.gitdir, ...(repo.indexDir ? [repo.indexDir] : [])];
  const dead = await deadLedgers(repo.gitdir, within);
  const dirs = [...dead.dirs, repo.gitdir, path.join(root, LOCKS_DIR)];
  if (repo.indexDir && repo.indexDir !== repo.gitdir) dirs.push(repo.indexDir);
  const names = await fs.readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith('.')) continue;
    dirs.push(path.join(root, name));
    const journal = await readJournal(repo, name);
    for (const file of journal?.paths ?? []) dirs.push(path.dirname(path.join(repo.dir, file)));
  }
  const walked = names.includes(TEMPS_DIR) ? [] : await foldersBelow([path.join(repo.dir, '.tune'), root]);
  const removed = await removeDeadTemps([...dirs, ...walked]);
  for (const ledger of dead.ledgers) await fs.rm(ledger, { force: true });
  if (walked.length > 0 || !names.includes(TEMPS_DIR)) await fs.mkdir(path.join(root, TEMPS_DIR), { recursive: true }).catch(() => undefined);
  return removed.map((f) => path.relative(repo.dir, f).split(path.sep).join('/'));
}

/** Every folder under `roots` that holds a file (the one walk, for a clone from before the ledgers: only a folder with a file can hold a temp file). */
async function foldersBelow(roots: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const root of roots) for (const file of await filesUnder(root)) out.add(path.dirname(path.join(root, file)));
  return [...out];
}

/**
 * Case results kept in `.git/tune/<name>/runs/<run>/` (and its repeats'
 * `<run>.repeat-<n>/`) for a run that is recorded (tagged): a run removes
 * them once its commit is in, so these are left by a command killed right
 * after; they are only a cache of what the run commit and the logs ref hold.
 */
async function finishedRunStores(repo: GitRepo, tuning: string): Promise<string[]> {
  const dir = localPath(repo.gitdir, tuning, 'runs');
  const runs = await fs.readdir(dir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const folder of runs) {
    if (await repo.resolveRef(tagRef(tuning, runOfStore(folder)))) out.push(path.join(dir, folder));
  }
  return out;
}
