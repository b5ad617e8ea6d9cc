import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { foldHistory, type HistoryCommit, type TuningState } from '../core/fold.js';
import { branchName } from '../core/names.js';
import { parseStep } from '../core/steps.js';
import { historyError } from '../errors.js';
import type { GitRepo } from '../git/types.js';

/**
 * Read, cached: a tuning's history and its folded state, kept in
 * `.git/tune/<name>/cache/` (inside the repository, where no git command and
 * no diff looks) so `git tune next` on a long history does not walk it again.
 *
 * It can never serve a stale state. An entry holds the branch tip it was
 * folded at and the ids of the two tip files the fold reads (config.yaml for
 * the prose globs, selection.json for the final check's cases), and the hash
 * of the code that folded it:
 * - the tip unchanged: the entry is the state (commits never change);
 * - the tip moved and the cached tip is on the new tip's first-parent line:
 *   only the commits since are read and folded on top of the cached state
 *   (refolded from the cached commits, without reading git again, when
 *   config.yaml or selection.json changed);
 * - anything else (a reset, a rewrite, a new init, other code): rebuilt.
 */
export interface TipFiles {
  configText: string | null;
  selectionText: string | null;
}

/** What the fold takes from the tip files. */
export interface FoldInputs {
  isProse: (p: string) => boolean;
  selection: readonly string[];
}

export interface TuningHistory extends TipFiles {
  state: TuningState;
  /** Oldest first, from the init commit. Read from the cache file only when asked for. */
  commits: () => HistoryCommit[];
}

interface Head {
  format: number;
  code: string;
  tuning: string;
  tip: string;
  configOid: string | null;
  selectionOid: string | null;
  configText: string | null;
  selectionText: string | null;
  state: TuningState;
}

interface Tail {
  commits: HistoryCommit[];
  /** For each commit without this tuning's trailers: the paths it changed (so new prose globs need no git read). */
  handPaths: Record<string, string[]>;
}

const MAGIC = Buffer.from('git-tune-history\n');
const FORMAT = 1;

export function cacheDir(gitdir: string, tuning: string): string {
  return path.join(gitdir, 'tune', tuning, 'cache');
}

const cacheFile = (gitdir: string, tuning: string) => path.join(cacheDir(gitdir, tuning), 'history.bin');

let codeHash: string | null = null;
/** The fold's code: an entry folded by other code (an upgrade, a rebuild) is not reused. */
function foldCodeHash(): string {
  if (codeHash) return codeHash;
  const hash = createHash('sha1').update(String(FORMAT));
  const here = path.dirname(fileURLToPath(import.meta.url));
  const ext = path.extname(fileURLToPath(import.meta.url));
  const inDir = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(ext)).sort().map((f) => path.join(dir, f));
  const files = [
    ...inDir(path.join(here, '..', 'core')),
    ...inDir(path.join(here, '..', 'contracts')),
    ...['cache', 'tuning', 'config-file'].map((f) => path.join(here, `${f}${ext}`)),
  ];
  for (const file of files) hash.update(path.relative(here, file)).update(readFileSync(file));
  codeHash = hash.digest('hex');
  return codeHash;
}

const blobOid = (text: string | null) =>
  text === null ? null : createHash('sha1').update(`blob ${Buffer.byteLength(text)}\0`).update(text).digest('hex');

/** Reads the head of the cache file (not the commits), or null when there is none or it does not parse. */
function readHead(file: string): { head: Head; tailAt: number } | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const prefix = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, prefix, 0, prefix.length, 0) !== prefix.length || !prefix.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const length = prefix.readUInt32BE(MAGIC.length);
    const body = Buffer.alloc(length);
    if (readSync(fd, body, 0, length, prefix.length) !== length) return null;
    const head = v8.deserialize(body) as Head;
    return head.format === FORMAT ? { head, tailAt: prefix.length + length } : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function readTail(file: string, tailAt: number): Tail {
  return v8.deserialize(readFileSync(file).subarray(tailAt)) as Tail;
}

async function writeCache(file: string, head: Head, tail: Tail): Promise<void> {
  const body = v8.serialize(head);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(tmp, Buffer.concat([MAGIC, length, body, v8.serialize(tail)]));
    await fs.rename(tmp, file);
  } catch {
    // A cache that cannot be written (a read-only repository) only costs speed.
    await fs.rm(tmp, { force: true }).catch(() => {});
  }
}

/**
 * The first-parent line from `tip` back to this tuning's init commit, or to
 * `stop` (a commit already folded) if it comes first. Oldest first. Commits
 * without this tuning's trailers get the paths they changed.
 */
export async function walkHistory(
  repo: GitRepo,
  name: string,
  tip: string,
  stop: string | null = null,
): Promise<{ commits: HistoryCommit[]; handPaths: Record<string, string[]>; reached: 'init' | 'stop' }> {
  const out: HistoryCommit[] = [];
  const hand: string[] = [];
  let reached: 'init' | 'stop' | null = null;
  for await (const entry of repo.firstParentLog(tip)) {
    if (entry.oid === stop) {
      reached = 'stop';
      break;
    }
    const step = parseStep(entry.message);
    out.push({ oid: entry.oid, message: entry.message });
    if (step?.tuning === name && step.step === 'init') {
      reached = 'init';
      break;
    }
    if (step === null || step.tuning !== name) hand.push(entry.oid);
  }
  if (reached === null) {
    throw historyError(
      'no-init-commit',
      `branch ${branchName(name)} has no init commit for tuning ${name} on its first-parent line`,
      `git tune init ${name} --prose '<glob>'   # on a new branch`,
    );
  }
  const handPaths: Record<string, string[]> = {};
  // Asked all at once: a backend pipelines them (one cat-file process answers in order).
  await Promise.all(hand.map(async (oid) => (handPaths[oid] = await repo.changedPaths(oid))));
  return { commits: out.reverse(), handPaths, reached };
}

function markProse(commits: HistoryCommit[], handPaths: Record<string, string[]>, isProse: (p: string) => boolean): void {
  for (const c of commits) {
    const paths = handPaths[c.oid];
    if (paths) c.touchesProse = paths.some(isProse);
  }
}

/**
 * The tuning's history and state at `tip`, from the cache when it holds them.
 * `readTip` reads config.yaml and selection.json at the tip (asked only when
 * the cache does not already hold this tip); `inputs` parses them for the fold.
 */
export async function readTuningHistory(
  repo: GitRepo,
  name: string,
  tip: string,
  readTip: () => Promise<TipFiles>,
  inputs: (files: TipFiles) => FoldInputs,
): Promise<TuningHistory> {
  const file = cacheFile(repo.gitdir, name);
  const code = foldCodeHash();
  const cached = readHead(file);
  const usable = cached && cached.head.code === code && cached.head.tuning === name ? cached : null;
  if (usable && usable.head.tip === tip) {
    const { head, tailAt } = usable;
    let commits: HistoryCommit[] | null = null;
    return {
      configText: head.configText,
      selectionText: head.selectionText,
      state: head.state,
      commits: () => (commits ??= readTail(file, tailAt).commits),
    };
  }

  const files = await readTip();
  const { isProse, selection } = inputs(files);
  const configOid = blobOid(files.configText);
  const selectionOid = blobOid(files.selectionText);
  const walked = await walkHistory(repo, name, tip, usable?.head.tip ?? null);
  let commits: HistoryCommit[];
  let handPaths: Record<string, string[]>;
  let state: TuningState;
  const tail = walked.reached === 'stop' && usable ? readTailSafe(file, usable.tailAt) : null;
  if (walked.reached === 'stop' && !tail) return readTuningHistoryUncached(repo, name, tip, files, { isProse, selection }, code, file);
  if (tail && usable) {
    commits = [...tail.commits, ...walked.commits];
    handPaths = { ...tail.handPaths, ...walked.handPaths };
    if (usable.head.configOid === configOid && usable.head.selectionOid === selectionOid) {
      markProse(walked.commits, walked.handPaths, isProse);
      state = foldHistory(name, walked.commits, selection, usable.head.state);
    } else {
      markProse(commits, handPaths, isProse);
      state = foldHistory(name, commits, selection);
    }
  } else {
    commits = walked.commits;
    handPaths = walked.handPaths;
    markProse(commits, handPaths, isProse);
    state = foldHistory(name, commits, selection);
  }
  return store(file, { code, name, tip, files, state, commits, handPaths });
}

function readTailSafe(file: string, tailAt: number): Tail | null {
  try {
    return readTail(file, tailAt);
  } catch {
    return null;
  }
}

/** The whole walk, for a cache entry whose commits cannot be read back. */
async function readTuningHistoryUncached(
  repo: GitRepo, name: string, tip: string, files: TipFiles, inputs: FoldInputs, code: string, file: string,
): Promise<TuningHistory> {
  const walked = await walkHistory(repo, name, tip);
  markProse(walked.commits, walked.handPaths, inputs.isProse);
  const state = foldHistory(name, walked.commits, inputs.selection);
  return store(file, { code, name, tip, files, state, commits: walked.commits, handPaths: walked.handPaths });
}

async function store(
  file: string,
  e: { code: string; name: string; tip: string; files: TipFiles; state: TuningState; commits: HistoryCommit[]; handPaths: Record<string, string[]> },
): Promise<TuningHistory> {
  // Serialized before anyone can touch the state handed out.
  await writeCache(
    file,
    {
      format: FORMAT, code: e.code, tuning: e.name, tip: e.tip,
      configOid: blobOid(e.files.configText), selectionOid: blobOid(e.files.selectionText),
      configText: e.files.configText, selectionText: e.files.selectionText, state: e.state,
    },
    { commits: e.commits, handPaths: e.handPaths },
  );
  return { ...e.files, state: e.state, commits: () => e.commits };
}
