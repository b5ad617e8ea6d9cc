import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readdirSync, rmSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localRoot, TEMPS_DIR } from '../core/paths.js';
import { holderAlive, processStart } from './lock-owner.js';

/**
 * Temporary files written beside the file they replace (a write is made to
 * `<file>.tmp-<pid>-<start>-<random>`, then renamed over `<file>`): a write
 * that fails removes its own; a process that dies mid-write (`kill -9`, a
 * power cut) cannot, so the next command removes those whose writer is gone
 * (`removeDeadTemps`). The name records the writer's pid and start time
 * (/proc, `0` where unknown) so a reused pid is not mistaken for it; a live
 * writer's files are left alone. Names of older versions
 * (`<file>.tmp-<pid>-<random>`) are judged by the pid alone.
 *
 * Where to look is known, never searched: before a process makes its first
 * temporary file in a folder of a repository, it adds that folder to its
 * ledger, `<gitdir>/tune/.temps/<pid>-<start>` (one line per folder), and it
 * removes the ledger as it exits, after its own leftovers. A ledger whose
 * process is gone names every folder a dead writer may have left a file in;
 * so a command's start reads one small folder of ledgers (empty unless a
 * git-tune died or runs now), however long the history.
 */
const TEMP = /\.tmp-(\d+)-(?:(\d+)-)?[0-9a-f]{8}$/;

let ownStart: string | undefined;
const startOfThis = () => (ownStart ??= processStart(process.pid) ?? '0');

/** The folders of a repository that hold files git-tune writes: its working tree, git dir and index's dir. */
interface Roots { dirs: string[]; ledger: string; recorded: Set<string> }
const repos: Roots[] = [];
let exitHook = false;

const inside = (file: string, dir: string) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/**
 * Tells this process where a repository's ledger lives: the temporary files
 * it then makes in the repository's working tree or git dir are recorded
 * there (the GitRepo implementations call it when opened).
 */
export function recordTempsOf(repo: { dir: string; gitdir: string; indexDir?: string }): void {
  const gitdir = path.resolve(repo.gitdir);
  const ledger = ledgerPath(gitdir, process.pid, startOfThis());
  const dirs = [path.resolve(repo.dir), gitdir, ...(repo.indexDir ? [path.resolve(repo.indexDir)] : [])];
  const known = repos.find((r) => r.ledger === ledger);
  if (known) {
    for (const d of dirs) if (!known.dirs.includes(d)) known.dirs.push(d);
    return;
  }
  repos.push({ dirs, ledger, recorded: new Set() });
}

const ledgerDir = (gitdir: string) => path.join(localRoot(gitdir), TEMPS_DIR);
const ledgerPath = (gitdir: string, pid: number, start: string) => path.join(ledgerDir(gitdir), `${pid}-${start}`);

/** Adds `dir` to the ledger of the repository holding it, once per process, before a temporary file is made there. */
function record(dir: string): void {
  // The longest folder holding `dir` wins; on a tie the repository opened last (a linked worktree over its own git dir).
  let best: Roots | null = null;
  let bestLength = -1;
  for (const r of repos) {
    for (const d of r.dirs) if (d.length >= bestLength && inside(dir, d)) [best, bestLength] = [r, d.length];
  }
  if (!best || best.recorded.has(dir)) return;
  try {
    mkdirSync(path.dirname(best.ledger), { recursive: true });
    appendFileSync(best.ledger, `${dir}\n`);
  } catch {
    return; // a read-only repository: the write that follows fails as well, and removes its own file
  }
  best.recorded.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', closeLedgers);
  }
}

/**
 * At exit: this process's own temporary files that are still there (a write
 * cut short by `process.exit`) go, then its ledgers. Killed, it leaves both
 * for the next command.
 */
function closeLedgers(): void {
  const own = `.tmp-${process.pid}-${startOfThis()}-`;
  for (const r of repos) {
    if (r.recorded.size === 0) continue;
    for (const dir of r.recorded) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const n of names) if (n.includes(own) && TEMP.test(n)) rmSync(path.join(dir, n), { force: true });
    }
    rmSync(r.ledger, { force: true });
  }
}

/** A fresh temporary name beside `file`, owned by this process (its folder recorded in the ledger first). */
export function tempFileFor(file: string): string {
  record(path.dirname(path.resolve(file)));
  return `${file}.tmp-${process.pid}-${startOfThis()}-${randomBytes(4).toString('hex')}`;
}

/** The writer a temporary file's name records, or null for a name that is not one. */
export function tempOwner(name: string): { pid: number; start: string | null } | null {
  const m = TEMP.exec(name);
  if (!m) return null;
  const pid = Number(m[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, start: m[2] === undefined || m[2] === '0' ? null : m[2] };
}

const alive = (pid: number, start: string | null) => holderAlive({ pid, start, host: os.hostname(), command: '', since: '' });

/**
 * The folders that the ledgers of dead processes name (only folders inside
 * `within`), and those ledgers. A live process's ledger, or this process's,
 * is left alone.
 */
export async function deadLedgers(gitdir: string, within: readonly string[]): Promise<{ dirs: string[]; ledgers: string[] }> {
  const dir = ledgerDir(gitdir);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const dirs = new Set<string>();
  const ledgers: string[] = [];
  const roots = within.map((d) => path.resolve(d));
  for (const name of names) {
    const m = /^(\d+)-(\d+)$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || (await alive(pid, m[2] === '0' ? null : m[2]!))) continue;
    const text = await fs.readFile(path.join(dir, name), 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      if (path.isAbsolute(line) && roots.some((r) => inside(path.resolve(line), r))) dirs.add(path.resolve(line));
    }
    ledgers.push(path.join(dir, name));
  }
  return { dirs: [...dirs], ledgers };
}

async function tempsIn(dir: string, out: string[]): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isFile() && TEMP.test(e.name)) out.push(path.join(dir, e.name));
}

/**
 * Removes the temporary files a dead process left in `dirs` (each read, not
 * walked down); returns their paths. Files of a live process, or of one that
 * cannot be judged, stay.
 */
export async function removeDeadTemps(dirs: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const dir of new Set(dirs)) await tempsIn(dir, found);
  const removed: string[] = [];
  for (const file of found) {
    const owner = tempOwner(path.basename(file));
    if (!owner || owner.pid === process.pid) continue;
    if (await alive(owner.pid, owner.start)) continue;
    await fs.rm(file, { force: true }).then(() => removed.push(file), () => undefined);
  }
  return removed;
}
