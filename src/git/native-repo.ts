import { StringDecoder } from 'node:string_decoder';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { singleQuoted } from '../core/argv.js';
import { TuneError, EXIT, conflictError } from '../errors.js';
import { clearStaleLock, readRefValue, withIndexLock, writeFileAtomic } from './lockfile.js';
import { isSpaceError } from './disk-full.js';
import { headRefOf } from './find-repo.js';
import { recordTempsOf, tempFileFor } from './temp-files.js';
import { diskFullPoint } from '../faults/enospc.js';
import { NativeCommands } from './native-commands.js';
import { addCommit, normalizeMessage, ObjectBatch, parseCommit, parseTree } from './native-objects.js';
import { drain, GitPipe, gitEnv, gitFailed, noGit, parseObject, runOnce, type RawObject } from './native-pipe.js';
import type { CommitInfo, GitRepo, LogEntry, NewCommit, Person, RefEntry, RefLogNote, TreeFile } from './types.js';
import { changedPaths, listFiles, treeOidAt, type TreeEntry, type TreeReader } from './trees.js';
import { assertIndexSupported, removeEmptyDirs } from './worktree.js';

export type { TreeEntry } from './trees.js';

/**
 * GitRepo over the native `git` binary. isomorphic-git walks a long history
 * ~15x slower than git and loads a whole pack into memory to read one object
 * from it (see the notes); git itself does neither. So:
 * - object reads go through one long-lived `git cat-file --batch`;
 * - a first-parent walk is one streamed `git rev-list` (stopped early by the caller);
 * - a commit's new objects go to `git unpack-objects --strict` as one pack
 *   (git checks and writes them); trees and commits are laid out here byte
 *   for byte as isomorphic-git lays them out, so both backends give the same
 *   commit ids for the same step;
 * - refs move with `git update-ref <ref> <new> <old>` (git's own locking, and a
 *   reflog entry); the index is updated with `git update-index`.
 * Processes are spawned lazily and unref'd while idle, so they never keep the
 * CLI alive; they exit when their stdin closes with ours.
 */
const ZERO_OID = '0'.repeat(40);

/** How one git command ended. */
type GitRun = Awaited<ReturnType<typeof runOnce>>;

/** The environment that makes git write `who` as the committer (of a reflog entry). */
function committerEnv(who: Person): Record<string, string> {
  const east = -who.timezoneOffset;
  const zone = `${east < 0 ? '-' : '+'}${String(Math.floor(Math.abs(east) / 60)).padStart(2, '0')}${String(Math.abs(east) % 60).padStart(2, '0')}`;
  return { GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email, GIT_COMMITTER_DATE: `@${who.timestamp} ${zone}` };
}

const TREE_CACHE_LIMIT = 4096;
const FIRST_BY_CAT_FILE = 16;
/** Commits per pack when a chain is written (writeCommitChain). */
const CHAIN_PACK = 250;

/** push, fetch, switch, status, staged files and config: shared with the iso backend (native-commands.ts). */
export class NativeGitRepo extends NativeCommands implements GitRepo {
  readonly backend = 'native' as const;
  private catFile: GitPipe | null = null;
  private readonly trees = new Map<string, TreeEntry[]>();
  private readonly treeReader: TreeReader = { readCommit: (oid) => this.readCommit(oid), readTree: (oid) => this.readTree(oid) };
  private indexHeld = false;

  constructor(readonly dir: string, readonly gitdir: string) {
    super();
    recordTempsOf(this);
  }

  private get base(): string[] {
    // Our git children run in the working tree: a relative gitdir is resolved against ours first.
    return ['--git-dir', path.resolve(this.gitdir)];
  }

  private async run(args: readonly string[], opts: { input?: string | Buffer; env?: Record<string, string>; ok?: number[] } = {}): Promise<GitRun> {
    const full = [...this.base, ...args];
    const r = await runOnce(full, this.dir, opts);
    if (r.code !== 0 && !(opts.ok ?? []).includes(r.code ?? -1)) throw gitFailed(args, r.code, r.stderr);
    return r;
  }

  private readObject(name: string): Promise<RawObject | null> {
    if (!this.catFile || this.catFile.failed) this.catFile = new GitPipe([...this.base, 'cat-file', '--batch'], this.dir);
    return this.catFile.request(name, parseObject);
  }

  private async readTyped(oid: string, type: string): Promise<Buffer> {
    const obj = await this.readObject(oid);
    if (!obj) throw new TuneError('object-missing', `git object ${oid} is missing from the repository`, { exitCode: EXIT.unexpected, hint: 'git fsck' });
    if (obj.type !== type) throw new TuneError('object-type', `git object ${oid} is a ${obj.type}, not a ${type}`, { exitCode: EXIT.unexpected });
    return obj.data;
  }

  resolveRef(ref: string): Promise<string | null> {
    return readRefValue(this.gitdir, ref);
  }

  async headRef(): Promise<string | null> {
    return headRefOf(await fs.readFile(path.join(this.gitdir, 'HEAD'), 'utf8'));
  }

  async setHeadRef(ref: string): Promise<void> {
    const r = await this.updateClearingStaleLocks(['HEAD'], () => this.run(['symbolic-ref', 'HEAD', ref], { ok: [1, 128] }));
    if (r.code !== 0) throw gitFailed(['symbolic-ref', 'HEAD', ref], r.code, r.stderr);
  }

  async listRefs(prefix: string): Promise<RefEntry[]> {
    const trimmed = prefix.replace(/\/$/, '');
    const { stdout } = await this.run(['for-each-ref', '--format=%(objectname) %(refname)', `${trimmed}/`]);
    const out: RefEntry[] = [];
    for (const line of stdout.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) out.push({ oid: line.slice(0, space), ref: line.slice(space + 1) });
    }
    return out.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async readCommit(oid: string): Promise<CommitInfo> {
    return parseCommit(oid, await this.readTyped(oid, 'commit'));
  }

  /**
   * A short walk reads its first commits through cat-file (after a step the
   * walk stops at the cached tip one or two commits down: no process to
   * start), the rest as one streamed rev-list; a long one is all rev-list.
   */
  async *firstParentLog(tip: string, opts: { short?: boolean } = {}): AsyncIterable<readonly LogEntry[]> {
    let oid: string | undefined = tip;
    for (let i = 0; i < (opts.short ? FIRST_BY_CAT_FILE : 0) && oid; i++) {
      let commit: CommitInfo;
      try {
        commit = await this.readCommit(oid);
      } catch (err) {
        // A shallow clone ends where its history was cut, as rev-list ends there.
        if (oid !== tip && (err as TuneError).code === 'object-missing' && (await this.isShallow())) return;
        throw err;
      }
      yield [{ oid, parents: commit.parents, message: commit.message }];
      oid = commit.parents[0];
    }
    if (oid) yield* this.revList(oid);
  }

  /** One page per chunk git wrote. */
  private async *revList(tip: string): AsyncIterable<LogEntry[]> {
    // rev-list is plumbing: no pager, colour or signature display from the user's config.
    const args = [...this.base, 'rev-list', '--first-parent', '--format=%P%x00%B%x00', tip, '--'];
    const child = spawn('git', args, { cwd: this.dir, env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
    const closed = new Promise<number | null>((resolve, reject) => {
      child.on('error', (e) => reject(noGit(e)));
      child.on('close', (code) => resolve(code));
    });
    closed.catch(() => {});
    // Decoded a chunk at a time (a character split across chunks is held back), then cut as a string:
    // three Buffer decodes per commit cost more than the records.
    const decoder = new StringDecoder('utf8');
    const output = drain(child.stdout);
    let text = '';
    let done = false;
    try {
      for (let chunk = await output.next(); chunk !== null; chunk = await output.next()) {
        text = text.length === 0 ? decoder.write(chunk) : text + decoder.write(chunk);
        let pos = 0;
        const page: LogEntry[] = [];
        // One record: "commit <oid>\n<parents>\0<message>\0\n"; a message holds no NUL.
        for (;;) {
          const nl = text.indexOf('\n', pos);
          if (nl < 0) break;
          const z1 = text.indexOf('\0', nl + 1);
          if (z1 < 0) break;
          const z2 = text.indexOf('\0', z1 + 1);
          if (z2 < 0 || z2 + 1 >= text.length) break;
          const oid = text.slice(pos + 'commit '.length, nl);
          const parents = z1 === nl + 1 ? [] : text.slice(nl + 1, z1).split(' ');
          const message = normalizeMessage(text.slice(z1 + 1, z2));
          pos = z2 + 2;
          page.push({ oid, parents, message });
        }
        text = text.slice(pos);
        if (page.length > 0) yield page;
      }
      done = true;
      const code = await closed;
      if (code !== 0) throw gitFailed(args.slice(2), code, stderr);
    } finally {
      output.stop();
      if (!done) child.kill();
    }
  }

  private async readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.trees.get(oid);
    if (cached) return cached;
    const entries = parseTree(await this.readTyped(oid, 'tree'));
    this.remember(oid, entries);
    return entries;
  }

  /** Trees are immutable: the ones read or written stay at hand (a chain of steps rewrites the same folders). */
  private remember(oid: string, entries: TreeEntry[]): void {
    if (this.trees.size >= TREE_CACHE_LIMIT) this.trees.clear();
    this.trees.set(oid, entries);
  }

  treeOidAt(commitOid: string, filepath: string): Promise<string | null> {
    return treeOidAt(this.treeReader, commitOid, filepath);
  }

  async readBlobAt(commitOid: string, filepath: string): Promise<Uint8Array | null> {
    // cat-file reads one name per line: a path with a newline in it is found through its trees instead.
    const name = filepath.includes('\n') ? await this.treeOidAt(commitOid, filepath).catch(() => null) : `${commitOid}:${filepath}`;
    if (name === null) return null;
    const obj = await this.readObject(name);
    if (!obj) return null;
    if (obj.type !== 'blob') {
      throw new TuneError('object-type', `${filepath} is a ${obj.type} in ${commitOid.slice(0, 7)}, not a file`, { exitCode: EXIT.unexpected });
    }
    return obj.data;
  }

  listFiles(commitOid: string, dir: string): Promise<TreeFile[]> {
    return listFiles(this.treeReader, commitOid, dir);
  }

  changedPaths(commitOid: string): Promise<string[]> {
    return changedPaths(this.treeReader, commitOid);
  }

  /**
   * The objects of one commit (blobs, trees, the commit) go to git as one pack
   * on the stdin of `git unpack-objects --strict`: one process however many
   * files a step writes (a run's logs are three per case), git hashes and
   * writes each loose object itself, checks every object's format and that
   * every tree and commit points at objects that exist, and writes nothing if
   * one check fails.
   */
  async writeCommit(commit: NewCommit): Promise<string> {
    const parentTree = commit.parent ? (await this.readCommit(commit.parent)).tree : null;
    const out = new ObjectBatch();
    const { oid } = await addCommit(out, this.treeReader, parentTree, commit, commit.parent);
    await this.run(['unpack-objects', '-q', '--strict'], { input: out.pack() });
    for (const [treeOid, list] of out.trees) this.remember(treeOid, list);
    return oid;
  }

  /**
   * `git hash-object -w --stdin-paths`: git reads and stores each file itself,
   * one process for them all; nothing of them passes through this process.
   * A path holding a newline (it cannot be a line of stdin) is read and
   * stored alone.
   */
  async writeBlobFiles(files: readonly string[]): Promise<string[]> {
    const byPath = files.filter((f) => !f.includes('\n')).map((f) => path.resolve(f));
    const hashed = byPath.length === 0 ? [] : (await this.run(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: `${byPath.join('\n')}\n` })).stdout.trim().split('\n');
    const out: string[] = [];
    for (const f of files) {
      if (!f.includes('\n')) out.push(hashed.shift()!);
      else out.push((await this.run(['hash-object', '-w', '--no-filters', '--stdin'], { input: await fs.readFile(f) })).stdout.trim());
    }
    return out;
  }

  /**
   * A chain of commits in a few packs: every CHAIN_PACK commits go to git as
   * one pack (one process per commit is most of an import's time).
   * Trees made for the chain are read back from a map of the chain's own
   * until they are in git, so a full tree cache cannot lose one.
   */
  async writeCommitChain(parent: string | null, next: Parameters<GitRepo['writeCommitChain']>[1]): Promise<string[]> {
    const oids: string[] = [];
    let parentTree = parent ? (await this.readCommit(parent)).tree : null;
    let out = new ObjectBatch();
    const reader: TreeReader = { readCommit: (oid) => this.readCommit(oid), readTree: (oid) => {
      const own = out.trees.get(oid);
      return own ? Promise.resolve(own) : this.readTree(oid);
    } };
    const flush = async () => {
      if (out.size === 0) return;
      // Kept as a pack (index-pack), not thousands of loose objects (unpack-objects): the writes are most of the time.
      await this.run(['index-pack', '--stdin', '--strict'], { input: out.pack() });
      for (const [treeOid, list] of out.trees) this.remember(treeOid, list);
      out = new ObjectBatch();
    };
    for (let commit = await next(oids); commit !== null; commit = await next(oids)) {
      const added = await addCommit(out, reader, parentTree, commit, oids[oids.length - 1] ?? parent);
      oids.push(added.oid);
      parentTree = added.tree;
      if (out.commits >= CHAIN_PACK) await flush();
    }
    await flush();
    return oids;
  }

  /**
   * `git update-ref <ref> <new> <old>`: git's own lock and check. When it
   * refuses, the ref is read again to say why, in the words the lock-file
   * implementation uses (ref-moved, ref-locked, ref-conflict).
   */
  async compareAndSwapRef(ref: string, oid: string, expected: string | null, reflog?: RefLogNote): Promise<void> {
    if (expected === null) await this.assertNothingInTheWay(ref);
    // With a note, git writes it to the ref's reflog (and HEAD's when HEAD is on it), under the committer named.
    const env = reflog ? committerEnv(reflog.committer) : undefined;
    const r = await this.updateClearingStaleLocks([ref], () =>
      this.run(['update-ref', '-m', reflog?.message ?? 'git tune', ref, oid, expected ?? ZERO_OID], { ok: [1, 128], ...(env ? { env } : {}) }));
    if (r.code !== 0) await this.explainRefFailure(ref, expected, r.stderr, ['update-ref', ref]);
  }

  /**
   * Runs a `git update-ref`; when it fails on a lock (git waited for a live
   * holder: core.filesRefLockTimeout) that a killed git-tune left, removes
   * that lock, saying so, and runs it again. The lock is the one git names:
   * updating the branch HEAD is on, git also locks HEAD, so a killed
   * update-ref can leave `HEAD.lock` beside the ref's own lock, or alone.
   */
  private async updateClearingStaleLocks(refs: readonly string[], update: () => Promise<GitRun>): Promise<GitRun> {
    let r = await update();
    for (let tries = 0; r.code !== 0 && tries < 4; tries++) {
      const named = this.lockNamedIn(r.stderr);
      let cleared = false;
      for (const lock of named ? [named] : refs.map((ref) => path.join(this.gitdir, `${ref}.lock`))) {
        if (await clearStaleLock(this.gitdir, lock)) cleared = true;
      }
      if (!cleared) break;
      r = await update();
    }
    return r;
  }

  /** The lock file git says it could not create ("Unable to create '<path>.lock': File exists"), when it is in this repository. */
  private lockNamedIn(stderr: string): string | null {
    const named = /Unable to create '(.+?\.lock)': File exists/.exec(stderr)?.[1];
    if (!named) return null;
    const lock = path.resolve(this.dir, named);
    const inside = path.relative(path.resolve(this.gitdir), lock);
    return inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? lock : null;
  }

  async isAncestor(ancestor: string, commit: string): Promise<boolean> {
    const r = await this.run(['merge-base', '--is-ancestor', ancestor, commit], { ok: [1] });
    return r.code === 0;
  }

  /** `git update-ref --stdin`: one transaction, every ref created or none (an import's run tags). */
  async createRefs(refs: ReadonlyArray<readonly [ref: string, oid: string]>): Promise<void> {
    if (refs.length === 0) return;
    const input = refs.map(([ref, oid]) => `create ${ref} ${oid}\n`).join('');
    // As compareAndSwapRef: a tag's lock a killed git-tune left (inside this very transaction) goes, and the refs are tried again.
    const r = await this.updateClearingStaleLocks(refs.map(([ref]) => ref), () => this.run(['update-ref', '-m', 'git tune', '--stdin'], { input, ok: [1, 128] }));
    if (r.code === 0) return;
    for (const [ref] of refs) {
      const locked = await fs.access(path.join(this.gitdir, `${ref}.lock`)).then(() => true, () => false);
      if (locked || (await readRefValue(this.gitdir, ref))) await this.explainRefFailure(ref, null, r.stderr, ['update-ref', '--stdin']);
    }
    throw gitFailed(['update-ref', '--stdin'], r.code, r.stderr);
  }

  async deleteRef(ref: string, expected: string): Promise<void> {
    const r = await this.updateClearingStaleLocks([ref], () => this.run(['update-ref', '-m', 'git tune', '-d', ref, expected], { ok: [1, 128] }));
    if (r.code !== 0) await this.explainRefFailure(ref, expected, r.stderr, ['update-ref', '-d', ref]);
  }

  private async explainRefFailure(ref: string, expected: string | null, stderr: string, args: string[]): Promise<never> {
    // A full disk is not a lock nor a race: the caller reports it as disk-full (src/git/disk-full.ts).
    if (isSpaceError(new Error(stderr))) throw gitFailed(args, 1, stderr);
    const current = await readRefValue(this.gitdir, ref);
    if (current !== expected) {
      throw conflictError(
        'ref-moved',
        `${ref} moved while this command ran (expected ${expected?.slice(0, 7) ?? 'no ref'}, found ${current?.slice(0, 7) ?? 'no ref'})`,
        'another command wrote a step first; run `git tune next` and try again',
      );
    }
    // The lock git names (HEAD.lock when HEAD is on the ref), else the ref's own.
    const lockPath = this.lockNamedIn(stderr) ?? path.join(this.gitdir, `${ref}.lock`);
    if (/\.lock'?: File exists|Unable to create .*\.lock/.test(stderr) || (await fs.access(lockPath).then(() => true, () => false))) {
      throw new TuneError('ref-locked', `${ref} is locked by another git process (${lockPath} exists)`, {
        exitCode: EXIT.conflict,
        hint: `wait for the other command to finish; if none is running, remove the stale lock: rm ${singleQuoted(lockPath)}`,
      });
    }
    throw gitFailed(args, 1, stderr);
  }

  /**
   * Git stores refs as paths, so `refs/heads/tune/x` cannot exist beside a
   * branch `refs/heads/tune`, nor beside `refs/heads/tune/x/y`. update-ref would
   * refuse too; this names the ref in the way and the fix first.
   */
  private async assertNothingInTheWay(ref: string): Promise<void> {
    const parts = ref.split('/');
    let blocker: string | null = null;
    for (let i = 2; i < parts.length && !blocker; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (await readRefValue(this.gitdir, prefix)) blocker = prefix;
    }
    if (!blocker) {
      const { stdout } = await this.run(['for-each-ref', '--count=1', '--format=%(refname)', `${ref}/`]);
      if (stdout.trim()) blocker = stdout.trim();
    }
    if (!blocker) return;
    const branch = /^refs\/heads\/(.+)$/.exec(blocker)?.[1];
    throw new TuneError('ref-conflict', `cannot create ${ref}: ${blocker} exists, and git cannot hold both`, {
      exitCode: EXIT.usage,
      hint: branch ? `git branch -m ${branch} ${branch}-branch   # rename the branch in the way` : `git update-ref -d ${blocker}   # only if you do not need it`,
    });
  }

  async withIndexLock<T>(fn: () => Promise<T>): Promise<T> {
    if (this.indexHeld) return fn();
    return withIndexLock(this.gitdir, async () => {
      this.indexHeld = true;
      try {
        await assertIndexSupported(this.gitdir);
        return await fn();
      } finally {
        this.indexHeld = false;
      }
    });
  }

  async checkoutPaths(commitOid: string, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const files = new Map<string, TreeEntry | null>();
    for (const p of paths) files.set(p, null);
    const { tree } = await this.readCommit(commitOid);
    for (const d of new Set(paths.map((p) => path.posix.dirname(p)))) {
      const oid = d === '.' ? tree : await this.treeOidAt(commitOid, d);
      if (!oid) continue;
      for (const e of await this.readTree(oid)) {
        const p = d === '.' ? e.path : `${d}/${e.path}`;
        if (e.type === 'blob' && files.has(p)) files.set(p, e);
      }
    }
    await this.withIndexLock(async () => {
      for (const [filepath, entry] of files) {
        const full = path.join(this.dir, filepath);
        if (entry) {
          await writeFileAtomic(full, await this.readTyped(entry.oid, 'blob'), entry.mode === '100755' ? 0o755 : 0o644, 'checkout');
        } else {
          await fs.rm(full, { force: true });
          await removeEmptyDirs(this.dir, path.dirname(full));
        }
      }
      await this.updateIndex([...files.keys()]);
    });
  }

  /**
   * `git update-index --add --remove` while this process holds index.lock
   * (as a step does from its checks to its checkout): git cannot take the
   * lock we hold, so it updates a copy, which replaces the index with a rename,
   * as git's own lock commit does.
   */
  private async updateIndex(paths: readonly string[]): Promise<void> {
    const index = path.join(this.gitdir, 'index');
    const copy = tempFileFor(index);
    try {
      await fs.copyFile(index, copy).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      diskFullPoint('index', copy);
      await this.run(['--work-tree', path.resolve(this.dir), 'update-index', '--add', '--remove', '-z', '--stdin'], {
        input: paths.map((p) => `${p}\0`).join(''),
        env: { GIT_INDEX_FILE: copy },
      });
      await fs.rename(copy, index);
    } finally {
      await fs.rm(copy, { force: true });
    }
  }

  async readConfig(key: string): Promise<string | null> {
    const r = await this.run(['config', '--file', path.join(this.gitdir, 'config'), '--get', key], { ok: [1] });
    return r.code === 0 ? r.stdout.replace(/\n$/, '') : null;
  }

  async isShallow(): Promise<boolean> {
    return fs.access(path.join(this.gitdir, 'shallow')).then(
      () => true,
      () => false,
    );
  }
}

