import {
  abandonedLogsRef, abandonedRecordRef, abandonedRoot, abandonedTagRef, abandonedTipRef,
  formatAbandonRecord, parseAbandonedRef, parseAbandonRecord, tagsMatchRuns, tagsOffTheBranch,
  type AbandonedRun, type AbandonRecord,
} from '../core/abandoned.js';
import type { RunState } from '../core/fold.js';
import { branchRef, tagName, tagRef } from '../core/names.js';
import { usageError } from '../errors.js';
import { resolveIdentity, type Env } from '../git/identity.js';
import { tryToolLock } from '../git/lock-owner.js';
import { lastReflogEntry } from '../git/reflog.js';
import type { FileChange, GitRepo, Person } from '../git/types.js';
import { logsRef } from '../run/logs.js';
import type { Tuning } from './tuning.js';
import { markTagsSettled, tagsSettledAt } from './tags-settled.js';

/**
 * Apply: steps a rewrite abandoned (`git reset --hard HEAD~10`, a rebase,
 * `git tune undo`) keep their run tags and logs, moved aside under
 * `refs/tune-abandoned/<name>/<n>/` (docs/git-model.md), so a new run of
 * the same name finds its tag name free and its logs its own.
 *
 * When: `git tune undo` moves what it drops itself; a command's start
 * (`startTuning`) moves the tags of runs no longer on the branch once per
 * branch tip, leaving alone those a remote-tracking branch still holds (a
 * pull not merged yet); and a run whose tag name is taken by a commit off the
 * branch moves that tag aside before it starts. Tags of runs the branch holds
 * again (the undo undone by `git reset`) are put back from there.
 */
export interface AbandonedMove extends AbandonRecord {
  n: number;
  record: string;
  /** The logs ref as it was before their logs were taken out of it. */
  logs: string | null;
  /** The runs of this move still kept aside (a run the branch holds again went back to its tag). */
  kept: AbandonedRun[];
}

export interface WriteCtx {
  env: Env;
  now: Date;
}

/** The record commits' and reflog entries' identity: the user's, or ours when none is configured (local bookkeeping, never pushed). */
export async function recordIdentity(repo: GitRepo, ctx: WriteCtx): Promise<Person> {
  try {
    return (await resolveIdentity(repo.gitdir, ctx.env, ctx.now)).committer;
  } catch {
    return { name: 'git-tune', email: 'git-tune@localhost', timestamp: Math.floor(ctx.now.getTime() / 1000), timezoneOffset: 0 };
  }
}

/** Every move aside of a tuning, oldest first. */
export async function listAbandoned(repo: GitRepo, tuning: string): Promise<AbandonedMove[]> {
  const refs = await repo.listRefs(abandonedRoot(tuning));
  const moves = new Map<number, { record?: string; logs?: string; kept: AbandonedRun[] }>();
  for (const { ref, oid } of refs) {
    const part = parseAbandonedRef(tuning, ref);
    if (!part) continue;
    const move = moves.get(part.n) ?? { kept: [] };
    moves.set(part.n, move);
    if (part.part === 'record') move.record = oid;
    else if (part.part === 'logs') move.logs = oid;
    else if (part.part === 'tag') move.kept.push({ run: part.run, commit: oid });
  }
  const out: AbandonedMove[] = [];
  for (const [n, move] of [...moves].sort((a, b) => a[0] - b[0])) {
    if (!move.record) continue;
    const commit = await repo.readCommit(move.record);
    const record = parseAbandonRecord(commit.message);
    if (!record) continue;
    out.push({ ...record, n, record: move.record, logs: move.logs ?? null, kept: move.kept });
  }
  return out;
}

/** How many first-parent commits from `from` are off the branch (stopping at the first on it). */
async function stepsOff(repo: GitRepo, from: string, onBranch: ReadonlySet<string>): Promise<number> {
  let n = 0;
  for await (const page of repo.firstParentLog(from, { short: true })) {
    for (const c of page) {
      if (onBranch.has(c.oid) || n >= 100_000) return n;
      n++;
    }
  }
  return n;
}

export interface MoveAside {
  runs: readonly AbandonedRun[];
  why: string;
  /** The branch tip before the rewrite, when known: kept too (the abandoned steps after the last run). */
  from: string | null;
  /** The branch tip now. */
  tip: string;
  /** Every commit of the branch's first-parent line from its init commit to `tip`. */
  onBranch: ReadonlySet<string>;
}

/**
 * Moves run tags (and their runs' logs) aside as one move: the record and
 * the kept refs are created first, in one transaction, then the tags are
 * deleted and the logs ref loses those runs' folders (in a new commit: its
 * history keeps them). A process killed midway leaves tags that are
 * already kept; the next move deletes them without a second record.
 */
export async function moveAside(repo: GitRepo, tuning: string, move: MoveAside, ctx: WriteCtx): Promise<AbandonedMove | null> {
  const known = await listAbandoned(repo, tuning);
  const keptAlready = (r: AbandonedRun) => known.some((m) => m.kept.some((k) => k.run === r.run && k.commit === r.commit));
  const fresh = move.runs.filter((r) => !keptAlready(r));
  const from = move.from && !move.onBranch.has(move.from) ? move.from : null;
  let made: AbandonedMove | null = null;
  if (fresh.length > 0 || from) {
    const n = Math.max(0, ...known.map((m) => m.n), ...(await repo.listRefs(abandonedRoot(tuning))).map((r) => parseAbandonedRef(tuning, r.ref)?.n ?? 0)) + 1;
    const starts = from ? [from] : fresh.map((r) => r.commit);
    let steps = 0;
    for (const s of starts) steps = Math.max(steps, await stepsOff(repo, s, move.onBranch));
    const logsTip = await repo.resolveRef(logsRef(tuning));
    const logged = logsTip ? await runsLogged(repo, logsTip, fresh.map((r) => r.run)) : [];
    const who = await recordIdentity(repo, ctx);
    const record: AbandonRecord = { tuning, at: ctx.now.toISOString(), why: move.why, steps, from, tip: move.tip, runs: [...fresh] };
    const message = formatAbandonRecord(record);
    const recordOid = await repo.writeCommit({ parent: null, changes: new Map(), message, author: who, committer: who });
    const refs: Array<[string, string]> = [[abandonedRecordRef(tuning, n), recordOid]];
    if (from) refs.push([abandonedTipRef(tuning, n), from]);
    if (logsTip && logged.length > 0) refs.push([abandonedLogsRef(tuning, n), logsTip]);
    for (const r of fresh) refs.push([abandonedTagRef(tuning, n, r.run), r.commit]);
    await repo.createRefs(refs);
    made = { ...record, n, record: recordOid, logs: logged.length > 0 ? logsTip : null, kept: [...fresh] };
  }
  for (const r of move.runs) {
    if ((await repo.resolveRef(tagRef(tuning, r.run))) === r.commit) await repo.deleteRef(tagRef(tuning, r.run), r.commit);
  }
  await dropRunLogs(repo, tuning, move.runs.map((r) => r.run), ctx);
  return made;
}

/** Which of `runs` have a folder in the logs ref at `logsTip`. */
async function runsLogged(repo: GitRepo, logsTip: string, runs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const run of runs) if ((await repo.treeOidAt(logsTip, run)) !== null) out.push(run);
  return out;
}

/** Takes the runs' folders out of the logs ref (a new commit on it), so no later run of the same name is served their logs. */
async function dropRunLogs(repo: GitRepo, tuning: string, runs: readonly string[], ctx: WriteCtx): Promise<void> {
  const ref = logsRef(tuning);
  const tip = await repo.resolveRef(ref);
  if (!tip) return;
  const changes = new Map<string, FileChange>();
  for (const run of runs) for (const f of await repo.listFiles(tip, run)) changes.set(f.path, null);
  if (changes.size === 0) return;
  const who = await recordIdentity(repo, ctx);
  const message = `logs of abandoned runs moved aside: ${runs.join(', ')}\n\nTune-Tuning: ${tuning}\n`;
  const oid = await repo.writeCommit({ parent: tip, changes, message, author: who, committer: who });
  await repo.compareAndSwapRef(ref, oid, tip);
}

/** Puts a kept run's logs back into the logs ref (the branch holds the run again). */
async function restoreRunLogs(repo: GitRepo, tuning: string, run: string, from: string, ctx: WriteCtx): Promise<void> {
  const ref = logsRef(tuning);
  const tip = await repo.resolveRef(ref);
  if (tip && (await repo.treeOidAt(tip, run)) !== null) return;
  const changes = new Map<string, FileChange>();
  for (const f of await repo.listFiles(from, run)) {
    const blob = await repo.readBlobAt(from, f.path);
    if (blob !== null) changes.set(f.path, { content: blob, ...(f.mode === '100755' ? { mode: '100755' as const } : {}) });
  }
  if (changes.size === 0) return;
  const who = await recordIdentity(repo, ctx);
  const oid = await repo.writeCommit({ parent: tip, changes, message: `logs of ${run} put back: the branch holds the run again\n\nTune-Tuning: ${tuning}\nTune-Run: ${run}\n`, author: who, committer: who });
  await repo.compareAndSwapRef(ref, oid, tip);
}

/** The run tags of a tuning: `refs/tags/tune/<name>/<run>` → commit. */
async function runTags(repo: GitRepo, tuning: string): Promise<AbandonedRun[]> {
  const prefix = tagRef(tuning, '');
  return (await repo.listRefs(prefix)).map((r) => ({ run: r.ref.slice(prefix.length), commit: r.oid }));
}

/** The branch tip before the last rewrite, from the branch's reflog (`git reset` writes it), when that rewrite made the tip it is now. */
async function tipBefore(repo: GitRepo, tuning: string, tip: string): Promise<string | null> {
  const last = await lastReflogEntry(repo.gitdir, branchRef(tuning));
  return last && last.new === tip && /^[0-9a-f]{40}$/.test(last.old) && !/^0+$/.test(last.old) ? last.old : null;
}

/**
 * Whether a run tag's commit is abandoned: no longer reachable from the
 * branch. A tag on a commit the branch does reach (its own run commit, or any
 * other commit of its history, as a tag left by another repository may be) is
 * not, and stays where it is.
 */
export async function offTheBranch(repo: GitRepo, commit: string, onBranch: ReadonlySet<string>, tip: string): Promise<boolean> {
  if (onBranch.has(commit)) return false;
  return !(await repo.isAncestor(commit, tip).catch(() => false));
}

/** Whether any remote-tracking branch still holds `commit` (a pull not merged yet, or pushed steps reset locally). */
async function onRemote(repo: GitRepo, commit: string, remotes: readonly { oid: string }[]): Promise<boolean> {
  for (const r of remotes) if (await repo.isAncestor(commit, r.oid).catch(() => false)) return true;
  return false;
}

export interface TuningView {
  repo: GitRepo;
  name: string;
  tip: string;
  /** The fold's runs: which commit holds each run the branch has. */
  runs: ReadonlyMap<string, Pick<RunState, 'runOid'>>;
  /** The branch's commits, init to tip. */
  commits: readonly { oid: string }[];
}

const runCommitOf = (view: TuningView) => (run: string) => view.runs.get(run)?.runOid ?? null;

/**
 * What a command's start first knows of the run tags, looked at as soon as
 * the tip is read (`startTuning` looks while the history is read, so git
 * lists the tags on its own core): 'settled' when they were settled at this
 * tip, else the tags as they are now.
 */
export type RunTagLook = Promise<AbandonedRun[] | 'settled'>;

export function lookAtRunTags(repo: GitRepo, name: string, tip: string): RunTagLook {
  const look = (async (): RunTagLook => ((await tagsSettledAt(repo.gitdir, name, tip)) ? 'settled' : runTags(repo, name)))();
  look.catch(() => {}); // awaited by settleRunTags, which may come after it failed
  return look;
}

/**
 * Where a command starts: once per branch tip, run tags off the branch are
 * moved aside (those a remote-tracking branch holds stay: they are moved
 * only when a new run needs the name), and kept tags of runs the branch
 * holds again are put back. Returns what it did, as notices.
 */
export async function settleRunTags(view: TuningView, ctx: WriteCtx, look: RunTagLook = lookAtRunTags(view.repo, view.name, view.tip)): Promise<string[]> {
  const { repo, name, tip } = view;
  const looked = await look;
  if (looked === 'settled') return [];
  // Under the tool lock, at the tip read: a step being written (its branch moved, its tags not yet) is never raced.
  // Tags that agreed with the runs when looked at still do: every git-tune command that moves tags holds this lock,
  // and one that moved them since the look moved the branch too (an undo), which then is no longer at the tip
  // (unless put back to it within these milliseconds; the settle at the next tip would then put the tags back).
  const settled = await tryToolLock(repo.gitdir, name, 'git tune (settling run tags)', async () => {
    if ((await repo.resolveRef(branchRef(name))) !== tip) return null;
    if (tagsMatchRuns(looked, view.runs)) {
      await markTagsSettled(repo.gitdir, name, tip);
      return [];
    }
    return settleLocked(view, ctx);
  });
  return settled ?? [];
}

async function settleLocked(view: TuningView, ctx: WriteCtx): Promise<string[]> {
  const { repo, name, tip } = view;
  const notices: string[] = [];
  const tags = await runTags(repo, name);
  let off = tagsOffTheBranch(tags, runCommitOf(view));
  const onBranch = new Set(view.commits.map((c) => c.oid));
  if (off.length > 0) {
    const remotes = await repo.listRefs('refs/remotes');
    const local: AbandonedRun[] = [];
    for (const t of off) if ((await offTheBranch(repo, t.commit, onBranch, tip)) && !(await onRemote(repo, t.commit, remotes))) local.push(t);
    off = local;
  }
  const from = await tipBefore(repo, name, tip);
  if (off.length > 0) {
    const moved = await moveAside(repo, name, { runs: off, why: 'the branch was rewritten (reset or rebase)', from, tip, onBranch }, ctx);
    notices.push(`${off.length} run tag${off.length === 1 ? '' : 's'} of steps no longer on the branch moved aside${moved ? ` (${moved.steps} abandoned step${moved.steps === 1 ? '' : 's'})` : ''}: git tune log --abandoned`);
  }
  const moved = new Set(off.map((t) => t.run));
  notices.push(...(await restoreKept(view, tags.filter((t) => !moved.has(t.run)), moved, ctx)));
  await markTagsSettled(repo.gitdir, name, tip);
  return notices;
}

/**
 * Tags of runs the branch holds again (an undo undone), put back from where
 * they were kept, with their logs; a run whose tag this pass moved aside
 * because a rebase rewrote its commit is tagged on the new commit, as its run
 * step would have. A tag that is only missing (deleted, never fetched) stays
 * missing: nothing here invents one.
 */
async function restoreKept(view: TuningView, tags: readonly AbandonedRun[], movedNow: ReadonlySet<string>, ctx: WriteCtx): Promise<string[]> {
  const { repo, name } = view;
  const tagged = new Set(tags.map((t) => t.run));
  const missing = [...view.runs].filter(([run, r]) => r.runOid && !tagged.has(run));
  if (missing.length === 0) return [];
  const moves = await listAbandoned(repo, name);
  const back: string[] = [];
  const retagged: string[] = [];
  for (const [run, r] of missing) {
    const move = [...moves].reverse().find((m) => m.kept.some((k) => k.run === run && k.commit === r.runOid));
    // A tag that is simply not here (deleted, or not fetched: a CI clone) is not ours to make up;
    // `final --ci` names the fetch that brings it. Only a run whose tag this pass moved aside
    // (a rebase rewrote its commit) is tagged on the commit the branch now holds.
    if (!move && !movedNow.has(run)) continue;
    await repo.createRefs([[tagRef(name, run), r.runOid!]]);
    if (!move) {
      retagged.push(run);
      continue;
    }
    await repo.deleteRef(abandonedTagRef(name, move.n, run), r.runOid!);
    if (move.logs) await restoreRunLogs(repo, name, run, move.logs, ctx);
    back.push(run);
  }
  return [
    ...(back.length === 0 ? [] : [`the branch holds ${back.join(', ')} again: ${back.length === 1 ? 'its run tag was' : 'their run tags were'} put back from refs/tune-abandoned`]),
    ...(retagged.length === 0 ? [] : [`run tag${retagged.length === 1 ? '' : 's'} made for ${retagged.join(', ')}: the branch holds ${retagged.length === 1 ? 'that run' : 'those runs'} on commits no tag named (rewritten)`]),
  ];
}

/**
 * Before a run starts: its tag name must be free. A tag on a commit the
 * branch does not hold as that run is moved aside (with any other tag off the
 * branch); one the branch holds is refused as before. Returns the runs whose
 * tags moved; a dry run checks the same, moves nothing, and gets the runs it
 * would move.
 */
export async function makeWayForRun(view: TuningView, run: string, ctx: WriteCtx, opts: { dryRun?: boolean } = {}): Promise<string[]> {
  const { repo, name, tip } = view;
  const held = await repo.resolveRef(tagRef(name, run));
  if (held === null) return [];
  const onBranch = new Set(view.commits.map((c) => c.oid));
  if (!(await offTheBranch(repo, held, onBranch, tip))) {
    throw usageError('tag-exists', `tag ${tagName(name, run)} already exists`, `git tag -d ${tagName(name, run)}   # only if it is left over from another repository`);
  }
  const off: AbandonedRun[] = [];
  for (const t of tagsOffTheBranch(await runTags(repo, name), runCommitOf(view))) {
    if (t.run === run || (await offTheBranch(repo, t.commit, onBranch, tip))) off.push(t);
  }
  if (!opts.dryRun) await moveAside(repo, name, { runs: off, why: `a new ${run} needed the tag name`, from: await tipBefore(repo, name, tip), tip, onBranch }, ctx);
  return off.map((t) => t.run);
}

/**
 * The moves whose steps are still off the branch: not those the branch holds
 * again (its old tip is back on the first-parent line, or, when the old tip
 * is unknown, every run tag went back).
 */
export function stillAbandoned<M extends Pick<AbandonedMove, 'from' | 'kept'>>(moves: readonly M[], commits: readonly { oid: string }[]): M[] {
  const onBranch = new Set(commits.map((c) => c.oid));
  return moves.filter((m) => (m.from ? !onBranch.has(m.from) : m.kept.length > 0));
}

/** What the moves read of a loaded tuning; its state and commits read only when needed. */
export function viewOf(tuning: Pick<Tuning, 'repo' | 'name' | 'tip' | 'state' | 'commits'>): TuningView {
  return {
    repo: tuning.repo, name: tuning.name, tip: tuning.tip,
    get runs() {
      return tuning.state.runs;
    },
    get commits() {
      return tuning.commits;
    },
  };
}
