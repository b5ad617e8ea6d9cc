import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tookCodePath } from '../code-paths.js';
import { blobOid } from '../core/prose-digest.js';
import v8 from 'node:v8';
import { foldHistory, type HistoryCommit, type TuningState } from '../core/fold.js';
import { branchName } from '../core/names.js';
import { generatedPart, generatedReadme, stepFilesOf } from '../core/rewritten.js';
import { parseStep } from '../core/steps.js';
import { historyError } from '../errors.js';
import type { GitRepo } from '../git/types.js';
import { cachePath, readmePath, tuningDir } from '../core/paths.js';
import { FORMAT, foldCodeHash, memoAt, writeCacheFile } from './tip-memo.js';

/**
 * Read, cached: a tuning's history and its folded state, kept in
 * `.git/tune/<name>/cache/` (inside the repository, where no git command and
 * no diff looks) so `git tune next` on a long history does not walk it again.
 *
 * It can never serve a stale state. An entry holds the branch tip it was
 * folded at, the ids of the two tip files the fold reads (config.yaml for the
 * prose globs, selection.json for the final check's cases), and a hash of the
 * code that folded it:
 * - the tip unchanged: the entry is the state (commits never change);
 * - the tip moved and the cached tip is on the new tip's first-parent line:
 *   only the commits since are read and folded on top of the cached state
 *   (refolded from the cached commits, without reading git again, when
 *   config.yaml or selection.json changed);
 * - anything else (a reset, a rewrite, a new init, other code): rebuilt.
 *
 * The file has three parts read as needed: the head (tip, parsed tip files),
 * the state, the commits. Pure decisions on a tip (`next`) are kept beside it
 * (`memo.json`), so a warm `next` costs the same on any history.
 */
export interface TipFiles {
  configText: string | null;
  selectionText: string | null;
  /** README.md: not read by the fold, kept so a warm load reads nothing at the tip. */
  readmeText: string | null;
}

/** What the fold takes from the tip files. */
export interface FoldInputs {
  isProse: (p: string) => boolean;
  selection: readonly string[];
}

export interface TuningHistory<P> extends TipFiles {
  /** What `parse` made of the tip files (kept in the cache: a warm load parses nothing). */
  parsed: P;
  /** The fold at the tip. Read from the cache file only when asked for. */
  state: () => TuningState;
  /** Oldest first, from the init commit. Read from the cache file only when asked for. */
  commits: () => HistoryCommit[];
  /** A pure function of this tip's history and files, computed once per tip and kept. */
  memo: <T>(key: string, compute: () => T) => T;
}

interface Head extends TipFiles {
  format: number;
  /** How many commit segments follow the state (compacted into one past MAX_SEGMENTS). */
  segments: number;
  code: string;
  tuning: string;
  tip: string;
  configOid: string | null;
  selectionOid: string | null;
  parsed: unknown;
}

interface Tail {
  commits: HistoryCommit[];
  /** For each commit without this tuning's trailers: the paths it changed (so new prose globs need no git read). */
  handPaths: Record<string, string[]>;
}

/**
 * A segment as written: columns, not an object per commit (ids end to end,
 * messages joined by NUL, which no commit message holds, and one character
 * per commit for `touchesProse`). Serializing 10,000 commit objects was most
 * of a cold call's cache write.
 */
interface PackedTail {
  oids: string;
  messages: string;
  prose: string;
  handPaths: Record<string, string[]>;
}

const PROSE_MARK = { yes: '1', no: '0', unknown: '-' } as const;

function packTail(tail: Tail): PackedTail {
  let oids = '';
  let prose = '';
  const messages: string[] = [];
  for (let i = 0; i < tail.commits.length; i++) {
    const c = tail.commits[i]!;
    oids += c.oid;
    messages.push(c.message);
    prose += c.touchesProse === undefined ? PROSE_MARK.unknown : c.touchesProse ? PROSE_MARK.yes : PROSE_MARK.no;
  }
  return { oids, messages: messages.join('\0'), prose, handPaths: tail.handPaths };
}

function unpackTail(packed: PackedTail): Tail {
  const messages = packed.prose.length === 0 ? [] : packed.messages.split('\0');
  const width = packed.prose.length === 0 ? 0 : packed.oids.length / packed.prose.length;
  if (messages.length !== packed.prose.length || !Number.isInteger(width)) throw new Error('cache segment does not add up');
  const commits: HistoryCommit[] = [];
  for (let i = 0; i < messages.length; i++) {
    const commit: HistoryCommit = { oid: packed.oids.slice(i * width, (i + 1) * width), message: messages[i]! };
    const mark = packed.prose[i];
    if (mark !== PROSE_MARK.unknown) commit.touchesProse = mark === PROSE_MARK.yes;
    commits.push(commit);
  }
  return { commits, handPaths: packed.handPaths };
}

const MAGIC = Buffer.from('git-tune-history\n');
const MAX_SEGMENTS = 64;

const cacheFile = (gitdir: string, tuning: string) => path.join(cachePath(gitdir, tuning), 'history.bin');

const blobOidOf = (text: string | null) => (text === null ? null : blobOid(text));

/** One length-prefixed part of the cache file at `at`, or null when the file is cut short. */
function readPart(bytes: Buffer, at: number): { value: unknown; end: number } | null {
  if (bytes.length < at + 4) return null;
  const end = at + 4 + bytes.readUInt32BE(at);
  if (bytes.length < end) return null;
  return { value: v8.deserialize(bytes.subarray(at + 4, end)), end };
}

/**
 * The cache file read whole (one snapshot: another process may replace it
 * meanwhile) with its head parsed, or null when there is none or it does not
 * parse. The state and the commits are deserialized only when asked for.
 */
function readHead(file: string): { head: Head; bytes: Buffer; stateAt: number } | null {
  try {
    const bytes = readFileSync(file);
    if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const part = readPart(bytes, MAGIC.length);
    const head = part?.value as Head | undefined;
    return head?.format === FORMAT ? { head, bytes, stateAt: part!.end } : null;
  } catch {
    return null;
  }
}

/**
 * The state and, when asked, the commits after it: one segment per write
 * that extended the history (a step appends its commits without reading or
 * rewriting the ones before). Throws when the file is broken.
 */
function readBody(bytes: Buffer, stateAt: number, withTail: boolean): { state: TuningState; tailAt: number; tail: Tail | null } {
  const state = readPart(bytes, stateAt);
  if (!state) throw new Error('cache file cut short');
  if (!withTail) return { state: state.value as TuningState, tailAt: state.end, tail: null };
  const tail: Tail = { commits: [], handPaths: {} };
  for (let at = state.end; at < bytes.length; ) {
    const segment = readPart(bytes, at);
    if (!segment) throw new Error('cache file cut short');
    const part = unpackTail(segment.value as PackedTail);
    // Not push(...): a segment of some 100,000 commits would overflow the call's arguments.
    tail.commits = tail.commits.length === 0 ? part.commits : tail.commits.concat(part.commits);
    Object.assign(tail.handPaths, part.handPaths);
    at = segment.end;
  }
  return { state: state.value as TuningState, tailAt: state.end, tail };
}

/** A part of the file: its length, then its bytes (two buffers, written as they are). */
function framed(value: unknown): [Buffer, Buffer] {
  const body = v8.serialize(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  return [length, body];
}

/**
 * Writes the cache file whole, atomically: head, state, then the commits as
 * `segments` (raw bytes of segments already written, kept as they are) and
 * the new segment, if any.
 */
function writeCache(file: string, head: Head, state: TuningState, segments: Buffer, added: Tail | null): void {
  writeCacheFile(file, [MAGIC, ...framed(head), ...framed(state), segments, ...(added ? framed(packTail(added)) : [])]);
}

/**
 * The first-parent line from `tip` back to this tuning's init commit, or to
 * `stop` (a commit already folded) if it comes first. Oldest first, each
 * with its parsed step (drop it with `dropParsed` after the fold). Commits
 * without this tuning's trailers get the paths they changed.
 */
export async function walkHistory(
  repo: GitRepo,
  name: string,
  tip: string,
  stop: string | null = null,
  cancel: { cancelled: boolean } = { cancelled: false },
): Promise<{ commits: HistoryCommit[]; hand: HistoryCommit[]; handPaths: Record<string, string[]>; reached: 'init' | 'stop' }> {
  const out: HistoryCommit[] = [];
  const hand: HistoryCommit[] = [];
  const parents = new Map<string, string | undefined>();
  let reached: 'init' | 'stop' | null = null;
  walk: for await (const page of repo.firstParentLog(tip, { short: stop !== null })) {
    if (cancel.cancelled) throw new Error('walk cancelled');
    for (const entry of page) {
      if (entry.oid === stop) {
        reached = 'stop';
        break walk;
      }
      // Parsed once: the fold takes the step from here.
      const step = parseStep(entry.message);
      const commit: HistoryCommit = { oid: entry.oid, message: entry.message, step };
      out.push(commit);
      if (step?.tuning === name && step.step === 'init') {
        reached = 'init';
        break walk;
      }
      // A note too: the hooks' trailers on an amended step (src/core/rewritten.ts) are told by the files it changed.
      if (step === null || step.tuning !== name || step.step === 'note') {
        hand.push(commit);
        parents.set(entry.oid, entry.parents[0]);
      }
    }
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
  await Promise.all(hand.map(async (c) => (handPaths[c.oid] = await handCommitPaths(repo, name, c.oid, parents.get(c.oid)))));
  return { commits: out.reverse(), hand: hand.reverse(), handPaths, reached };
}

/**
 * The paths a commit without this tuning's trailers changed, and
 * `generatedReadme(name)` among them when it changed README.md outside its
 * hand-written part (src/core/rewritten.ts).
 */
export async function handCommitPaths(repo: GitRepo, name: string, oid: string, parent: string | undefined): Promise<string[]> {
  const paths = await repo.changedPaths(oid);
  const readme = readmePath(tuningDir(name));
  if (paths.includes(readme) && (await rewroteGeneratedReadme(repo, readme, oid, parent))) paths.push(generatedReadme(name));
  return paths;
}

/** Did the commit change README.md outside its hand-written part (src/core/rewritten.ts)? Only a step does. */
async function rewroteGeneratedReadme(repo: GitRepo, readme: string, oid: string, parent: string | undefined): Promise<boolean> {
  const text = async (at: string | undefined) => {
    const blob = at ? await repo.readBlobAt(at, readme) : null;
    return blob === null ? null : generatedPart(Buffer.from(blob).toString('utf8'));
  };
  const [now, before] = await Promise.all([text(oid), text(parent)]);
  return now !== null && before !== null && now !== before;
}

/**
 * Drops the parsed steps the walk left on the commits: they are not part of
 * a HistoryCommit's data. Set to undefined, not deleted: a delete turns each
 * object into a slow dictionary (9 ms over 10,000 commits, and slower reads after).
 */
export function dropParsed(commits: HistoryCommit[]): HistoryCommit[] {
  for (let i = 0; i < commits.length; i++) commits[i]!.step = undefined;
  return commits;
}

/**
 * Marks whether each hand commit (a commit without this tuning's trailers)
 * changed prose. Given the hand commits only: looking up every commit's id
 * among them cost more than the marking (10,000 string-keyed lookups).
 */
export function markProse(hand: readonly HistoryCommit[], handPaths: Record<string, string[]>, isProse: (p: string) => boolean, tuning: string): void {
  const marker = generatedReadme(tuning);
  for (const c of hand) {
    const paths = handPaths[c.oid];
    if (!paths) continue;
    c.touchesProse = paths.some((p) => p !== marker && isProse(p));
    // And the step files it changed: a rewritten step (src/core/rewritten.ts). Set only when there are some.
    const stepFiles = stepFilesOf(tuning, paths);
    c.stepFiles = stepFiles.length > 0 ? stepFiles : undefined;
  }
}

/** The hand commits among commits read back from the cache: the ones the walk marked. */
const markedHand = (commits: readonly HistoryCommit[]) => commits.filter((c) => c.touchesProse !== undefined);

/**
 * The tuning's history and state at `tip`, from the cache when it holds them.
 * `readTip` reads the tip files, `parse` makes of them what the caller keeps
 * (`parsed`, asked only when a tip file changed), and `inputs` what the fold
 * takes of that.
 */
export async function readTuningHistory<P>(
  repo: GitRepo,
  name: string,
  tip: string,
  readTip: () => Promise<TipFiles>,
  parse: (files: TipFiles) => Promise<P>,
  inputs: (parsed: P) => FoldInputs,
): Promise<TuningHistory<P>> {
  const file = cacheFile(repo.gitdir, name);
  const code = foldCodeHash();
  const memo = memoAt(repo.gitdir, name, tip);
  const cached = readHead(file);
  const usable = cached && cached.head.code === code && cached.head.tuning === name ? cached : null;
  if (usable && usable.head.tip === tip) {
    const { head, bytes, stateAt } = usable;
    let state: TuningState | null = null;
    let commits: HistoryCommit[] | null = null;
    return {
      configText: head.configText,
      selectionText: head.selectionText,
      readmeText: head.readmeText,
      parsed: head.parsed as P,
      state: () => (state ??= readBody(bytes, stateAt, false).state),
      commits: () => (commits ??= readBody(bytes, stateAt, true).tail!.commits),
      memo,
    };
  }

  // The walk starts first: git reads the history on its own core while the tip files are parsed here.
  tookCodePath('fold');
  const cancel = { cancelled: false };
  const walking = walkHistory(repo, name, tip, usable?.head.tip ?? null, cancel);
  walking.catch(() => {}); // awaited below, after the tip files (whose errors come first)
  let files: TipFiles;
  let parsed: P;
  let sameFiles: boolean;
  let configOid: string | null;
  let selectionOid: string | null;
  try {
    files = await readTip();
    configOid = blobOidOf(files.configText);
    selectionOid = blobOidOf(files.selectionText);
    sameFiles = usable !== null && usable.head.configOid === configOid && usable.head.selectionOid === selectionOid;
    // The tip files did not change since the cached tip: their parse is kept too (no YAML parser to load).
    if (!sameFiles) tookCodePath('parse');
    parsed = sameFiles ? (usable!.head.parsed as P) : await parse(files);
  } catch (err) {
    cancel.cancelled = true; // a bad config.yaml: the walk stops (its git process ends) rather than read on
    throw err;
  }
  const fold = inputs(parsed);
  const head: Head = { format: FORMAT, code, tuning: name, tip, ...files, configOid, selectionOid, parsed, segments: 1 };
  const walked = await walking;
  const compact = usable !== null && usable.head.segments >= MAX_SEGMENTS;
  const extend = walked.reached === 'stop' && usable ? readBodySafe(usable.bytes, usable.stateAt, !sameFiles || compact) : null;

  if (extend && usable && sameFiles) {
    // The common case after a step: fold the new commits on top; append them as a segment
    // (every MAX_SEGMENTS steps, all the commits are written back as one).
    markProse(walked.hand, walked.handPaths, fold.isProse, name);
    const state = foldHistory(name, walked.commits, fold.selection, extend.state);
    dropParsed(walked.commits);
    if (compact) {
      const commits = [...extend.tail!.commits, ...walked.commits];
      writeCache(file, head, state, Buffer.alloc(0), { commits, handPaths: { ...extend.tail!.handPaths, ...walked.handPaths } });
      return { ...files, parsed, state: () => state, commits: () => commits, memo };
    }
    writeCache(file, { ...head, segments: usable.head.segments + 1 }, state, usable.bytes.subarray(extend.tailAt), walked);
    let commits: HistoryCommit[] | null = null;
    return {
      ...files, parsed, state: () => state, memo,
      commits: () => (commits ??= [...readBody(usable.bytes, usable.stateAt, true).tail!.commits, ...walked.commits]),
    };
  }
  let commits: HistoryCommit[];
  let handPaths: Record<string, string[]>;
  let state: TuningState;
  if (extend?.tail) {
    // Other prose globs or another selection: refold everything, from the cached commits (no git read).
    commits = [...extend.tail.commits, ...walked.commits];
    handPaths = { ...extend.tail.handPaths, ...walked.handPaths };
    markProse([...markedHand(extend.tail.commits), ...walked.hand], handPaths, fold.isProse, name);
    state = foldHistory(name, commits, fold.selection);
  } else {
    // Walked to the init commit (or the cached commits cannot be read back: walk it all).
    const all = walked.reached === 'init' ? walked : await walkHistory(repo, name, tip);
    ({ commits, handPaths } = all);
    markProse(all.hand, handPaths, fold.isProse, name);
    state = foldHistory(name, commits, fold.selection);
  }
  dropParsed(commits);
  // Serialized before anyone can touch the state handed out.
  writeCache(file, head, state, Buffer.alloc(0), { commits, handPaths });
  return { ...files, parsed, state: () => state, commits: () => commits, memo };
}

function readBodySafe(bytes: Buffer, stateAt: number, withTail: boolean): { state: TuningState; tailAt: number; tail: Tail | null } | null {
  try {
    return readBody(bytes, stateAt, withTail);
  } catch {
    return null;
  }
}
