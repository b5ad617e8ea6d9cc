import { promises as fs } from 'node:fs';
import path from 'node:path';
import { singleQuoted } from '../core/argv.js';
import type { HistoryCommit } from '../core/fold.js';
import { tagName, tagRef } from '../core/names.js';
import { secretsIn, secretsOf } from '../core/redact.js';
import { formatStep, type Step, type StepCommitData } from '../core/steps.js';
import { conflictError, usageError } from '../errors.js';
import { resolveIdentity, type Env } from '../git/identity.js';
import { blobOid, readIndexEntries } from '../git/index-file.js';
import { withToolLock } from '../git/lock-owner.js';
import type { FileChange, GitRepo, NewCommit } from '../git/types.js';
import { crashPoint } from '../faults/crash.js';
import { diskFullPoint } from '../faults/enospc.js';
import { isSpaceError } from '../git/disk-full.js';
import { writeFileAtomic } from '../git/lockfile.js';
import { moveAside, offTheBranch } from './abandon.js';
import { carryTagsSettled } from './tags-settled.js';
import { Plan, type DryRunnable, type PlannedCommit, type Writes } from './plan.js';
import { clearJournal, writeJournal } from './recover.js';
import { reportChanges, withReports } from './reports.js';
import { assertCleanGitState } from './tuning.js';

/**
 * Apply: one step becomes one commit on the tuning branch. Every step commit
 * is written here, a command's one or few and an import's long chain alike.
 * Everything that can fail is checked before the first write; the branch
 * moves by compare-and-swap; the index and working tree follow, so
 * `git status` stays clean for what was committed.
 */
export interface StepCommit extends Omit<StepCommitData, 'changes'> {
  /** The files it writes: text, bytes, a mode, or null (deleted). */
  changes: ReadonlyMap<string, FileChange>;
  /** Run names to tag `tune/<name>/<run>` on the new commit. */
  tags?: string[];
  /**
   * A revert of edits written earlier in the same chain (an import): their
   * indexes in the chain, named as `reverts` once their ids are known.
   * Only in a chain whose reports go into its last commit.
   */
  revertsInChain?: readonly number[];
}

/** How a chain lands; a step of a command leaves every option unset. */
export interface ChainOptions {
  /** The command, for the lock, the journal and the crash points (`import`; default: the last step's kind). */
  command?: string;
  /**
   * README.md and USAGE.md go into every commit (the default: a step's own
   * commit is never behind), or into the last one only, rendered once from
   * the whole chain (an import of 1,500 steps cannot afford one per commit).
   */
  reports?: 'every-commit' | 'last-commit';
  /** Moves HEAD onto the branch once it landed, with the chain's files checked out (an import, as init does). */
  switchHead?: boolean;
}

/** A chain longer than this is written through `writeCommitChain` (a few packs), not one `writeCommit` per commit. */
const LONG_CHAIN = 16;

export interface CommitTarget {
  repo: GitRepo;
  ref: string;
  /** The branch tip this step builds on (null: a new branch). */
  parent: string | null;
  /** What the ref must hold now; defaults to `parent` (init: null, the branch is new). */
  expected?: string | null;
  tuning: string;
  /** Whether HEAD is on this branch (then index and working tree follow). */
  onBranch: boolean;
  /** The tuning's commits up to `parent`, when already read (the README is rendered from them). */
  history?: () => readonly HistoryCommit[];
}

/** What a step is written with; never a dry run (a dry run's steps go to `landSteps`, which plans them). */
export interface WriteContext extends Writes {
  env: Env;
  now: Date;
}

async function sameAsCommitted(repo: GitRepo, parent: string | null, file: string): Promise<boolean> {
  const committed = parent ? await repo.readBlobAt(parent, file) : null;
  let onDisk: Buffer | null = null;
  try {
    onDisk = await fs.readFile(path.join(repo.dir, file));
  } catch {
    onDisk = null;
  }
  if (committed === null || onDisk === null) return committed === null && onDisk === null;
  return Buffer.compare(Buffer.from(committed), onDisk) === 0;
}

/**
 * Refuses a step whose files hold the value of a secret-named environment
 * variable: secrets reach commands only through the environment, and none is
 * ever written to the repository (docs/contracts.md#secrets). Runner and judge output is
 * redacted before it gets here; this catches a secret pasted into findings,
 * changes, prose or settings.
 */
export function assertNoSecrets(changes: Iterable<[string, FileChange]>, env: Env): void {
  const secrets = secretsOf(env);
  if (secrets.length === 0) return;
  const found: string[] = [];
  for (const [file, change] of changes) {
    const names = change === null ? [] : secretsIn(change.content, secrets);
    if (names.length > 0) found.push(`${file} holds the value of $${names.join(', $')}`);
  }
  if (found.length > 0) {
    throw usageError('secret-in-step', `refusing to commit a secret: ${found.join('; ')}`,
      'remove it from the file (secrets reach runners, judges and editors through the environment only), then run the command again', found);
  }
}

/**
 * Refuses to overwrite a user's uncommitted change to a file this step
 * writes: changed on disk, or staged (the index is updated with the step's
 * files, so a staged version that is neither the committed one nor the one
 * this step commits would be lost).
 */
export async function assertNotDirty(target: CommitTarget, commit: StepCommit): Promise<void> {
  if (!target.onBranch) return;
  const dirty: string[] = [];
  const index = await readIndexEntries(target.repo.indexDir ?? target.repo.gitdir, new Set(commit.changes.keys()));
  for (const [file, change] of commit.changes) {
    const fromWorktree = commit.fromWorktree?.has(file) ?? false;
    if (!fromWorktree && !(await sameAsCommitted(target.repo, target.parent, file))) {
      dirty.push(file);
      continue;
    }
    const entries = index.get(file) ?? [];
    const committed = target.parent ? await target.repo.readBlobAt(target.parent, file) : null;
    const staged = entries.length === 0 ? null : entries.length > 1 || entries[0]!.stage !== 0 ? 'conflict' : entries[0]!.oid;
    const allowed = [committed === null ? null : blobOid(committed)];
    if (fromWorktree) allowed.push(change === null ? null : blobOid(typeof change.content === 'string' ? Buffer.from(change.content) : change.content));
    // No entry at all loses nothing: only a staged blob the step would replace is someone's work.
    if (staged !== null && !allowed.includes(staged)) dirty.push(`${file} (staged)`);
  }
  if (dirty.length > 0) {
    throw usageError(
      'dirty-file',
      `uncommitted changes in ${dirty.join(', ')} would be overwritten`,
      `git stash push -- ${dirty.map((d) => singleQuoted(d.replace(/ \(staged\)$/, ''))).join(' ')}   # or commit them; then the command again`,
    );
  }
}

export async function commitStep(target: CommitTarget, commit: StepCommit, ctx: WriteContext, opts: ChainOptions = {}): Promise<string> {
  const oids = await commitSteps(target, [commit], ctx, opts);
  return oids[0]!;
}

/** One step of a command that may be a dry run: its commit written, or planned (src/app/plan.ts). */
export async function landStep(target: CommitTarget, commit: StepCommit, ctx: DryRunnable<WriteContext>, opts: ChainOptions = {}): Promise<string | Plan> {
  const landed = await landSteps(target, [commit], ctx, opts);
  return landed instanceof Plan ? landed : landed[0]!;
}

/**
 * The steps of a command that may be a dry run: a real run writes them
 * (`commitSteps`); `--dry-run` gets the plan of the very same steps.
 */
export async function landSteps(target: CommitTarget, commits: readonly StepCommit[], ctx: DryRunnable<WriteContext>, opts: ChainOptions = {}): Promise<string[] | Plan> {
  if (ctx.dryRun) return new Plan(await planSteps(target, commits, opts));
  return commitSteps(target, commits, ctx, opts);
}

/**
 * Several steps as a chain of commits that lands with one compare-and-swap:
 * all of them, or (on any failure) none.
 */
export async function commitSteps(target: CommitTarget, commits: readonly StepCommit[], ctx: WriteContext, opts: ChainOptions = {}): Promise<string[]> {
  // One command at a time writes a tuning's steps (a dead holder's lock is taken over: src/git/lock-owner.ts).
  const kind = opts.command ?? commits[commits.length - 1]?.step.step ?? 'step';
  return withToolLock(target.repo.gitdir, target.tuning, `git tune ${kind}`, () => commitStepsLocked(target, commits, ctx, opts));
}

async function commitStepsLocked(target: CommitTarget, commits: readonly StepCommit[], ctx: WriteContext, opts: ChainOptions): Promise<string[]> {
  if (!target.onBranch) return writeSteps(target, commits, ctx, opts);
  // On the checked-out branch, index.lock is held from the dirty check to the
  // checkout, as native `git commit` holds it around its ref update: of two
  // steps racing, the loser sees `ref-moved` (not a file the winner has not
  // refreshed yet, reported as dirty), and the winner's files are never
  // overwritten by a slower step's checkout.
  return target.repo.withIndexLock(async () => {
    await assertCleanGitState(target.repo);
    const expected = target.expected === undefined ? target.parent : target.expected;
    const current = await target.repo.resolveRef(target.ref);
    if (current !== expected) {
      throw conflictError(
        'ref-moved',
        `${target.ref} moved while this command ran (expected ${expected?.slice(0, 7) ?? 'no ref'}, found ${current?.slice(0, 7) ?? 'no ref'})`,
        'another command wrote a step first; run `git tune next` and try again',
      );
    }
    return writeSteps(target, commits, ctx, opts);
  });
}

async function writeSteps(target: CommitTarget, steps: readonly StepCommit[], ctx: WriteContext, opts: ChainOptions): Promise<string[]> {
  const { repo } = target;
  const lastOnly = opts.reports === 'last-commit';
  // README.md and USAGE.md go into the step's own commit, so they are never behind (docs/reports.md).
  const commits = lastOnly ? [...steps] : await withReports(target, steps);
  const touched = new Set<string>();
  for (const commit of commits) {
    // A later commit of the chain may rewrite a file an earlier one wrote; only the first is checked against the disk.
    const fresh = new Map([...commit.changes].filter(([file]) => !touched.has(file)));
    await assertNotDirty(target, { ...commit, changes: fresh });
    for (const file of commit.changes.keys()) touched.add(file);
    for (const run of commit.tags ?? []) {
      const ref = tagRef(target.tuning, run);
      const held = await repo.resolveRef(ref);
      if (held === null) continue;
      // A tag left by steps a rewrite abandoned is moved aside (src/app/abandon.ts); one on the branch is refused.
      const onBranch = target.history ? new Set(target.history().map((c) => c.oid)) : null;
      if (onBranch && target.parent && (await offTheBranch(repo, held, onBranch, target.parent))) {
        await moveAside(repo, target.tuning, { runs: [{ run, commit: held }], why: `a new ${run} needed the tag name`, from: null, tip: target.parent, onBranch }, ctx);
        continue;
      }
      throw usageError('tag-exists', `tag ${ref.replace('refs/tags/', '')} already exists`, `git tag -d ${ref.replace('refs/tags/', '')}   # only if it is left over from another repository`);
    }
  }
  assertNoSecrets(commits.flatMap((c) => [...c.changes]), ctx.env);
  const { author, committer } = await resolveIdentity(repo.gitdir, ctx.env, ctx.now);
  const messages: string[] = [];
  const messageOf = (i: number, written: readonly string[]) => {
    const commit = commits[i]!;
    const step = commit.revertsInChain ? { ...commit.step, reverts: commit.revertsInChain.map((j) => written[j]!) } as Step : commit.step;
    return (messages[i] = formatStep(step, commit.subject, commit.body ?? ''));
  };
  const ahead = lastOnly ? commits.length - 1 : commits.length;
  await crashPoint(`${opts.command ?? commits[commits.length - 1]!.step.step}:begin`);
  diskFullPoint('objects', path.join(repo.gitdir, 'objects'));
  const oids = await writeChain(repo, target.parent, ahead, (i, written) => ({ changes: commits[i]!.changes, message: messageOf(i, written), author, committer }));
  if (lastOnly) {
    // The last commit's README.md and USAGE.md, rendered from the whole chain as written (its ids).
    const last = commits[commits.length - 1]!;
    const parent = oids[oids.length - 1] ?? target.parent;
    const message = messageOf(commits.length - 1, oids);
    const before = target.history ? await target.history() : [];
    const history = [...before, ...oids.map((oid, i) => ({ oid, message: messages[i]! }))];
    const [reports] = await reportChanges({ repo, tuning: target.tuning, parent, history: () => history, onBranch: false, usage: 'always' },
      [{ step: last.step.step, message, changes: last.changes }]);
    assertNoSecrets(reports!, ctx.env);
    for (const file of reports!.keys()) touched.add(file);
    oids.push(await repo.writeCommit({ parent, changes: new Map([...last.changes, ...reports!]), message, author, committer }));
  }
  const tip = oids[oids.length - 1]!;
  const label = opts.command ?? commits[commits.length - 1]!.step.step;
  const tags = commits.flatMap((commit, i) => (commit.tags ?? []).map((run): [string, string] => [tagRef(target.tuning, run), oids[i]!]));
  const expected = target.expected === undefined ? target.parent : target.expected;
  const checkout = target.onBranch || opts.switchHead === true;
  await crashPoint(`${label}:after-objects`);
  // Should this process die between the writes below, the next command finishes them (src/app/recover.ts).
  await writeJournal(repo, {
    tuning: target.tuning, ref: target.ref, base: target.parent, to: tip, tags,
    paths: checkout ? [...touched] : [], head: opts.switchHead ? await headNow(repo) : null, command: `git tune ${label}`,
  });
  try {
    diskFullPoint('ref', path.join(repo.gitdir, `${target.ref}.lock`));
    await repo.compareAndSwapRef(target.ref, tip, expected);
  } catch (err) {
    await clearJournal(repo, target.tuning);
    throw err;
  }
  await crashPoint(`${label}:after-ref`);
  if (tags.length > 0) {
    // In one transaction; when they cannot land, neither does the branch: the chain lands whole or not at all.
    try {
      diskFullPoint('tags', path.join(repo.gitdir, `${tags[0]![0]}.lock`));
      await repo.createRefs(tags);
    } catch (err) {
      await (expected === null ? repo.deleteRef(target.ref, tip) : repo.compareAndSwapRef(target.ref, expected, tip)).catch(() => undefined);
      await clearJournal(repo, target.tuning);
      throw err;
    }
    await crashPoint(`${label}:after-tags`);
  }
  if (opts.switchHead) {
    await repo.setHeadRef(target.ref);
    await crashPoint(`${label}:after-head`);
  }
  if (checkout) {
    // What the command read from the working tree on purpose (findings, changes, prose) is put back as it was if the step is undone.
    const read = await readFromWorktree(repo, commits.flatMap((c) => [...(c.fromWorktree ?? [])]));
    try {
      await repo.checkoutPaths(tip, [...touched]);
    } catch (err) {
      if (isSpaceError(err)) await undoStep(target, { tip, expected, tags, paths: [...touched], read, switchedHead: opts.switchHead === true });
      throw err;
    }
  }
  await clearJournal(repo, target.tuning);
  await carryTagsSettled(repo.gitdir, target.tuning, expected, tip);
  await crashPoint(`${label}:after-checkout`);
  return oids;
}

/**
 * A step whose branch moved but whose files could not all be written (a full
 * disk): the working tree and index go back to the step before, then the
 * tags and the branch, so the command fails whole and `git status` stays
 * clean (before, `git status` showed the step's new files as staged
 * deletions until the next command finished the step). When going back
 * fails too (the disk is still full), the journal stays, and the next
 * command finishes the step forward instead (src/app/recover.ts).
 */
async function undoStep(
  target: CommitTarget,
  step: { tip: string; expected: string | null; tags: Array<[string, string]>; paths: string[]; read: ReadonlyMap<string, Buffer>; switchedHead: boolean },
): Promise<void> {
  const { repo } = target;
  // A step that made its branch or moved HEAD (an import) is finished forward, never undone.
  if (step.expected === null || step.switchedHead || !target.onBranch) return;
  try {
    await repo.checkoutPaths(step.expected, step.paths);
    for (const [file, content] of step.read) await writeFileAtomic(path.join(repo.dir, file), content);
    for (const [ref, oid] of step.tags) await repo.deleteRef(ref, oid);
    await repo.compareAndSwapRef(target.ref, step.expected, step.tip);
  } catch {
    return; // the journal finishes the step on the next command
  }
  await clearJournal(repo, target.tuning);
}

/** The files a command read from the working tree on purpose, as they are on disk now. */
async function readFromWorktree(repo: GitRepo, files: readonly string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const file of new Set(files)) {
    const content = await fs.readFile(path.join(repo.dir, file)).catch(() => null);
    if (content) out.set(file, content);
  }
  return out;
}

/**
 * The commits `commitSteps` would write, as a dry run prints them: nothing is
 * locked or written. README.md and USAGE.md are in each commit, as written;
 * a chain whose reports go into its last commit only (an import) renders
 * them from the commit ids, unknown before it is written: the plan leaves
 * them out (the import's `then` says so), and a revert of an edit of the
 * chain names it by its place in the plan.
 */
export async function planSteps(target: CommitTarget, steps: readonly StepCommit[], opts: ChainOptions = {}): Promise<PlannedCommit[]> {
  const commits = opts.reports === 'last-commit' ? steps : await withReports(target, steps);
  return commits.map((c) => {
    const step = c.revertsInChain ? { ...c.step, reverts: c.revertsInChain.map((i) => `<commit ${i + 1} of the plan>`) } as Step : c.step;
    return {
      subject: c.subject,
      message: formatStep(step, c.subject, c.body ?? ''),
      files: [...c.changes].map(([file, change]) => ({ path: file, deleted: change === null })),
      tags: (c.tags ?? []).map((run) => tagName(c.step.tuning, run)),
    };
  });
}

/** The first `count` commits of a chain, `commitAt(i, ids written before it)` each; a long chain as a few packs. */
async function writeChain(repo: GitRepo, parent: string | null, count: number, commitAt: (i: number, written: readonly string[]) => Omit<NewCommit, 'parent'>): Promise<string[]> {
  if (count > LONG_CHAIN) return repo.writeCommitChain(parent, (written) => (written.length < count ? commitAt(written.length, written) : null));
  const oids: string[] = [];
  for (let i = 0; i < count; i++) oids.push(await repo.writeCommit({ parent: oids[i - 1] ?? parent, ...commitAt(i, oids) }));
  return oids;
}

/** Where HEAD is before a chain moves it (the journal puts it on the branch only while it is still there). */
async function headNow(repo: GitRepo): Promise<{ was: string | null; at: string | null }> {
  const was = await repo.headRef();
  return { was, at: was ? await repo.resolveRef(was) : await repo.resolveRef('HEAD') };
}

/** Where the next step of a loaded tuning goes: on top of the tip it was read at. */
export function targetOf(tuning: { repo: GitRepo; ref: string; tip: string; name: string; onBranch: boolean; commits?: readonly HistoryCommit[] }): CommitTarget {
  return {
    repo: tuning.repo, ref: tuning.ref, parent: tuning.tip, tuning: tuning.name, onBranch: tuning.onBranch,
    ...('commits' in tuning ? { history: () => tuning.commits ?? [] } : {}),
  };
}
