import type { Env } from './identity.js';

/**
 * The one git interface the product uses. Only files under src/git import a
 * git library; everything above sees these plain types.
 */
export interface Person {
  name: string;
  email: string;
  timestamp: number; // seconds since the epoch
  timezoneOffset: number; // minutes, as isomorphic-git counts them (UTC+2 is -120)
}

export interface CommitInfo {
  oid: string;
  tree: string;
  parents: string[];
  message: string;
}

export interface TreeFile {
  path: string;
  oid: string;
  mode: string; // '100644', '100755', '120000'
}

/** A file change inside one commit: new content, or null to delete. */
export type FileChange = { content: Uint8Array | string; mode?: '100644' | '100755' } | null;

/** A file whose blob is already stored (its id, from writeBlobFiles): written into a commit without its bytes in memory. */
export interface StoredBlob {
  oid: string;
  mode?: '100644' | '100755';
}

export interface NewCommit {
  parent: string | null;
  changes: ReadonlyMap<string, FileChange | StoredBlob>;
  message: string;
  author: Person;
  committer: Person;
}

/** Who moved a ref and why, for its reflog. */
export interface RefLogNote {
  message: string;
  committer: Person;
}

export interface RefEntry {
  ref: string;
  oid: string;
}

/** One commit of a first-parent walk: what the state fold reads. */
export interface LogEntry {
  oid: string;
  parents: string[];
  message: string;
}

/** One ref of a push, as `git push --porcelain` reports it. */
export interface PushedRef {
  /** ' ' fast-forward, '+' forced, '-' deleted, '*' new, '!' rejected, '=' up to date. */
  flag: ' ' | '+' | '-' | '*' | '!' | '=';
  from: string;
  to: string;
  /** `[new branch]`, `abc1234..def5678`, `[up to date]`, `[rejected] (non-fast-forward)`, … */
  summary: string;
}

export interface PushResult {
  /** Each ref pushed (empty with `quiet`). */
  refs: PushedRef[];
  /** What git said on stderr (the remote's messages among it). */
  stderr: string;
}

export interface PushOptions {
  /** The caller's environment: the user's transports, credentials and SSH settings. */
  env: Env;
  /** false: `--no-verify`, git's pre-push hook does not run (the pre-push hook pushing refs along). */
  verify?: boolean;
  /** `--quiet`: no report of the refs. */
  quiet?: boolean;
}

/** Which implementation serves the calls: isomorphic-git in-process, or the native `git` binary. */
export type GitBackend = 'iso' | 'native';

export interface GitRepo {
  /** The working tree root. */
  readonly dir: string;
  readonly gitdir: string;
  /** Where this working tree's index lives, when not in `gitdir` (a linked worktree's private git dir). */
  readonly indexDir?: string;
  readonly backend: GitBackend;

  resolveRef(ref: string): Promise<string | null>;
  /** The ref HEAD points at (`refs/heads/…`), or null when detached. */
  headRef(): Promise<string | null>;
  setHeadRef(ref: string): Promise<void>;
  listRefs(prefix: string): Promise<RefEntry[]>;

  readCommit(oid: string): Promise<CommitInfo>;
  /**
   * The first-parent line from `tip` back to the root commit, newest first,
   * in pages: the commits one read from git brought (an async step per
   * commit cost a cold walk of 1,500 commits ~13 ms, more than its parse).
   * Stop iterating (`break`) to stop reading: the fold stops at its tuning's
   * init commit, and a long project history before it is never read.
   * `short`: the caller expects to stop within a few commits (a backend may
   * then read them one by one rather than start a walk of the whole line).
   */
  firstParentLog(tip: string, opts?: { short?: boolean }): AsyncIterable<readonly LogEntry[]>;
  readBlobAt(commitOid: string, path: string): Promise<Uint8Array | null>;
  /** Every file under `dir` (recursively) in the commit's tree. */
  listFiles(commitOid: string, dir: string): Promise<TreeFile[]>;
  /** Paths changed between a commit and its first parent. */
  changedPaths(commitOid: string): Promise<string[]>;
  /** The tree entry oid at `path` ('' for the root tree). */
  treeOidAt(commitOid: string, path: string): Promise<string | null>;

  /** Writes the objects of a commit built on `parent` and returns its id. Moves no ref. */
  writeCommit(commit: NewCommit): Promise<string>;
  /**
   * Stores each file's bytes as a blob and returns the blob ids, in order.
   * The backend reads the files one at a time (native git reads them itself),
   * so a run's logs are never all in memory at once.
   */
  writeBlobFiles(files: readonly string[]): Promise<string[]>;
  /**
   * Writes a chain of commits, each on the one before and the first on
   * `parent`, and returns their ids. `next` gives commit i from the ids of
   * the ones before it (a revert names the edits of its chain), or null when
   * the chain ends. Moves no ref. A backend may write the chain in a few
   * large writes instead of one per commit (an import writes thousands).
   */
  writeCommitChain(parent: string | null, next: (written: readonly string[]) => Omit<NewCommit, 'parent'> | null | Promise<Omit<NewCommit, 'parent'> | null>): Promise<string[]>;
  /**
   * Moves `ref` from `expected` (null: must not exist) to `oid`, or throws a TuneError `ref-moved`.
   * With `reflog`, the move gets a reflog entry on both backends (and HEAD's, when HEAD is on `ref`), as `git reset` writes.
   */
  compareAndSwapRef(ref: string, oid: string, expected: string | null, reflog?: RefLogNote): Promise<void>;
  /** Whether `ancestor` is `commit` or reachable from it (`git merge-base --is-ancestor`). */
  isAncestor(ancestor: string, commit: string): Promise<boolean>;
  deleteRef(ref: string, expected: string): Promise<void>;
  /** Creates every ref (none may exist yet) in one transaction: all of them, or none and a TuneError. */
  createRefs(refs: ReadonlyArray<readonly [ref: string, oid: string]>): Promise<void>;

  /**
   * Runs `fn` holding `.git/index.lock` (waiting briefly for a busy lock), as
   * native `git commit` does from reading the index to moving the branch.
   * Re-entrant within this process: `checkoutPaths` inside it does not lock again.
   */
  withIndexLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Makes index and working tree hold `paths` as they are in `commitOid`. */
  checkoutPaths(commitOid: string, paths: readonly string[]): Promise<void>;
  /** Reads a config value from the repository's own config (`user.name`). */
  readConfig(key: string): Promise<string | null>;
  isShallow(): Promise<boolean>;

  // Served by the native `git` binary on both backends (src/git/native-commands.ts):
  // remotes, the working tree, and what git reads from every config scope.
  // `env` is the caller's; a failure is a TuneError `git-failed` naming the git command.

  /** Where git keeps `name` for this repository (`git rev-parse --git-path`; `hooks` honours core.hooksPath), absolute. */
  gitPath(name: string, env: Env): Promise<string>;
  /** A config value as git reads it from every scope (`git config --get`), or null when unset. */
  configGet(key: string, env: Env): Promise<string | null>;
  /** Sets a value in the repository's own config (`git config --local`: shared by its linked worktrees). */
  configSet(key: string, value: string, env: Env): Promise<void>;
  /** Removes a section of the repository's own config (`git config --local --remove-section`); false when it was not there. */
  configRemoveSection(section: string, env: Env): Promise<boolean>;
  /** The paths the index changes against HEAD (`git diff --cached`): what the commit being made changes. */
  stagedPaths(env: Env): Promise<string[]>;
  /** A file as the index holds it (`git show :<file>`), or null when it is not in the index. */
  readStaged(file: string, env: Env): Promise<string | null>;
  /** Tracked files with uncommitted changes, staged or not (`git status --porcelain --untracked-files=no`). */
  uncommittedPaths(env: Env): Promise<string[]>;
  /** `git push <remote> <refspecs>`: the refs as git reports them, or a TuneError when git fails (a rejected ref included). */
  push(remote: string, refspecs: readonly string[], opts: PushOptions): Promise<PushResult>;
  /** `git fetch <remote> <refspecs>`. */
  fetch(remote: string, refspecs: readonly string[], env: Env): Promise<void>;
  /** Moves the checked-out branch, index and working tree to `ref` when that is a fast-forward (`git merge --ff-only`); fails otherwise. */
  fastForward(ref: string, env: Env): Promise<void>;
  /** Checks out `branch` (`git switch`), index and working tree. */
  switchBranch(branch: string, env: Env): Promise<void>;
  /** Checks out `commit` with HEAD detached (`git switch --detach`). */
  detachHead(commit: string, env: Env): Promise<void>;
}
