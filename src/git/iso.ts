import { promises as fs } from 'node:fs';
import nodeFs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { compareAndSwapRef, readRefValue, withIndexLock, writeFileAtomic } from './lockfile.js';
import { recordTempsOf, tempFileFor } from './temp-files.js';
import { diskFullPoint } from '../faults/enospc.js';
import { NativeCommands } from './native-commands.js';
import { appendReflog } from './reflog.js';
import type { CommitInfo, GitRepo, LogEntry, NewCommit, RefEntry, RefLogNote, TreeFile } from './types.js';
import { buildTree, changedPaths, listFiles, treeOidAt, type TreeEntry, type TreeReader, type TreeWriter } from './trees.js';
import { assertIndexSupported, removeEmptyDirs } from './worktree.js';

/**
 * isomorphic-git writes a loose object straight to its final name and never
 * writes one that exists: an object cut short by a full disk would stay
 * corrupt for good. A write that fails removes what it wrote.
 */
async function writeWhole(file: unknown, data: Uint8Array | string, options?: unknown): Promise<void> {
  try {
    await fs.writeFile(file as string, data, options as never);
  } catch (err) {
    if (typeof file === 'string') await fs.rm(file, { force: true }).catch(() => undefined);
    throw err;
  }
}

const objectsFs = { ...nodeFs, promises: { ...nodeFs.promises, writeFile: writeWhole } };

/**
 * GitRepo over isomorphic-git. Commits are built from plumbing
 * (writeBlob/writeTree/writeCommit) because `git.commit` reads the index and
 * trips over a user's merge conflict; refs move through our own lock-file
 * compare-and-swap because isomorphic-git's ref writes take no lock.
 * One `cache` object per process: without it every call re-reads the pack.
 * isomorphic-git has no SSH transport, credential helpers or core.hooksPath:
 * push, fetch, switch, status and config across scopes are delegated to
 * native git inside src/git (native-commands.ts), as on the native backend.
 */
export class IsoGitRepo extends NativeCommands implements GitRepo {
  readonly backend = 'iso' as const;
  private readonly cache = {};
  /** Whether this process holds index.lock now (a step holds it across its checkout). */
  private indexHeld = false;

  constructor(readonly dir: string, readonly gitdir: string) {
    super();
    recordTempsOf(this);
  }

  /**
   * The file system isomorphic-git updates the index through: its index write
   * truncates .git/index in place, so a process killed then leaves an empty
   * index that neither git nor isomorphic-git can read. Here it is written
   * beside it and renamed over it, as git does.
   */
  private get indexFs() {
    const index = path.join(this.gitdir, 'index');
    const writeFile = async (file: unknown, data: Uint8Array | string, options?: unknown) => {
      if (typeof file === 'string' && path.resolve(file) === index) {
        const tmp = tempFileFor(index);
        try {
          await fs.writeFile(tmp, data, options as never);
          await fs.rename(tmp, index);
        } catch (err) {
          await fs.rm(tmp, { force: true });
          throw err;
        }
        return;
      }
      return writeWhole(file, data, options);
    };
    return { ...nodeFs, promises: { ...nodeFs.promises, writeFile } };
  }

  private get base() {
    return { fs: objectsFs, dir: this.dir, gitdir: this.gitdir, cache: this.cache };
  }

  resolveRef(ref: string): Promise<string | null> {
    return readRefValue(this.gitdir, ref);
  }

  async headRef(): Promise<string | null> {
    const text = (await fs.readFile(path.join(this.gitdir, 'HEAD'), 'utf8')).trim();
    return text.startsWith('ref: ') ? text.slice(5).trim() : null;
  }

  async setHeadRef(ref: string): Promise<void> {
    await writeFileAtomic(path.join(this.gitdir, 'HEAD'), `ref: ${ref}\n`);
  }

  async listRefs(prefix: string): Promise<RefEntry[]> {
    const trimmed = prefix.replace(/\/$/, '');
    const names = await git.listRefs({ ...this.base, filepath: trimmed });
    const out: RefEntry[] = [];
    for (const name of names) {
      const ref = `${trimmed}/${name}`;
      const oid = await this.resolveRef(ref);
      if (oid) out.push({ ref, oid });
    }
    return out.sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  }

  async readCommit(oid: string): Promise<CommitInfo> {
    const { commit } = await git.readCommit({ ...this.base, oid });
    return { oid, tree: commit.tree, parents: commit.parent, message: commit.message };
  }

  async *firstParentLog(tip: string): AsyncIterable<readonly LogEntry[]> {
    let oid: string | undefined = tip;
    while (oid) {
      let commit: CommitInfo;
      try {
        commit = await this.readCommit(oid);
      } catch (err) {
        // A shallow clone ends where its history was cut, as `git log` ends there.
        if (oid !== tip && (err as { code?: string }).code === 'NotFoundError' && (await this.isShallow())) return;
        throw err;
      }
      yield [{ oid, parents: commit.parents, message: commit.message }];
      oid = commit.parents[0];
    }
  }

  private async readTree(oid: string): Promise<TreeEntry[]> {
    const { tree } = await git.readTree({ ...this.base, oid });
    return tree as TreeEntry[];
  }

  private readonly trees: TreeReader = { readCommit: (oid) => this.readCommit(oid), readTree: (oid) => this.readTree(oid) };

  treeOidAt(commitOid: string, filepath: string): Promise<string | null> {
    return treeOidAt(this.trees, commitOid, filepath);
  }

  async readBlobAt(commitOid: string, filepath: string): Promise<Uint8Array | null> {
    try {
      const { blob } = await git.readBlob({ ...this.base, oid: commitOid, filepath });
      return blob;
    } catch (err) {
      if ((err as { code?: string }).code === 'NotFoundError') return null;
      throw err;
    }
  }

  listFiles(commitOid: string, dir: string): Promise<TreeFile[]> {
    return listFiles(this.trees, commitOid, dir);
  }

  changedPaths(commitOid: string): Promise<string[]> {
    return changedPaths(this.trees, commitOid);
  }

  /** Blobs and trees straight into the object store, as isomorphic-git writes them. */
  private readonly writer: TreeWriter = {
    blob: (_path, change) => git.writeBlob({ ...this.base, blob: typeof change.content === 'string' ? Buffer.from(change.content, 'utf8') : change.content }),
    tree: (entries) => git.writeTree({ ...this.base, tree: entries }),
  };

  async writeCommit(commit: NewCommit): Promise<string> {
    const parentTree = commit.parent ? (await this.readCommit(commit.parent)).tree : null;
    const tree =
      (await buildTree(this.trees, this.writer, parentTree, new Map(commit.changes))) ??
      (await git.writeTree({ ...this.base, tree: [] }));
    return git.writeCommit({
      ...this.base,
      commit: {
        message: commit.message,
        tree,
        parent: commit.parent ? [commit.parent] : [],
        author: commit.author,
        committer: commit.committer,
      },
    });
  }

  /** One file at a time: read, stored, let go. */
  async writeBlobFiles(files: readonly string[]): Promise<string[]> {
    const out: string[] = [];
    for (const f of files) out.push(await git.writeBlob({ ...this.base, blob: await fs.readFile(f) }));
    return out;
  }

  async writeCommitChain(parent: string | null, next: Parameters<GitRepo['writeCommitChain']>[1]): Promise<string[]> {
    const oids: string[] = [];
    for (let commit = await next(oids); commit !== null; commit = await next(oids)) {
      oids.push(await this.writeCommit({ ...commit, parent: oids[oids.length - 1] ?? parent }));
    }
    return oids;
  }

  async createRefs(refs: ReadonlyArray<readonly [ref: string, oid: string]>): Promise<void> {
    const made: Array<readonly [string, string]> = [];
    try {
      for (const [ref, oid] of refs) {
        await compareAndSwapRef(this.gitdir, ref, oid, null);
        made.push([ref, oid]);
      }
    } catch (err) {
      for (const [ref, oid] of made) await this.deleteRef(ref, oid).catch(() => undefined);
      throw err;
    }
  }

  async compareAndSwapRef(ref: string, oid: string, expected: string | null, reflog?: RefLogNote): Promise<void> {
    await compareAndSwapRef(this.gitdir, ref, oid, expected);
    if (!reflog) return;
    // isomorphic-git writes no reflog: the entry native git would write, for the ref and for HEAD when it is on it.
    await appendReflog(this.gitdir, ref, expected, oid, reflog.committer, reflog.message);
    if ((await this.headRef()) === ref) await appendReflog(this.gitdir, 'HEAD', expected, oid, reflog.committer, reflog.message);
  }

  async isAncestor(ancestor: string, commit: string): Promise<boolean> {
    if (ancestor === commit) return true;
    return git.isDescendent({ ...this.base, oid: commit, ancestor, depth: -1 });
  }

  deleteRef(ref: string, expected: string): Promise<void> {
    return compareAndSwapRef(this.gitdir, ref, null, expected);
  }

  async checkoutPaths(commitOid: string, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    const files = new Map<string, TreeFile | null>();
    for (const p of paths) files.set(p, null);
    const dirs = new Set(paths.map((p) => path.posix.dirname(p)));
    for (const d of dirs) {
      const root = d === '.' ? '' : d;
      for (const f of await this.listFilesShallow(commitOid, root)) if (files.has(f.path)) files.set(f.path, f);
    }
    await this.withIndexLock(async () => {
      for (const [filepath, file] of files) {
        const full = path.join(this.dir, filepath);
        if (file) {
          const { blob } = await git.readBlob({ ...this.base, oid: file.oid });
          await writeFileAtomic(full, blob, file.mode === '100755' ? 0o755 : 0o644, 'checkout');
          // isomorphic-git writes the index once per file (and tries each write twice): the disk-full tests fail it here.
          diskFullPoint('index', path.join(this.gitdir, 'index'));
          await git.updateIndex({ ...this.base, fs: this.indexFs, filepath, add: true });
        } else {
          await fs.rm(full, { force: true });
          await git.updateIndex({ ...this.base, fs: this.indexFs, filepath, remove: true, force: true });
          await removeEmptyDirs(this.dir, path.dirname(full));
        }
      }
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

  private async listFilesShallow(commitOid: string, dir: string): Promise<TreeFile[]> {
    const oid = await this.treeOidAt(commitOid, dir);
    if (!oid) return [];
    return (await this.readTree(oid))
      .filter((e) => e.type === 'blob')
      .map((e) => ({ path: dir ? `${dir}/${e.path}` : e.path, oid: e.oid, mode: e.mode }));
  }

  async readConfig(key: string): Promise<string | null> {
    const value = await git.getConfig({ ...this.base, path: key });
    return value === undefined || value === null ? null : String(value);
  }

  async isShallow(): Promise<boolean> {
    return fs.access(path.join(this.gitdir, 'shallow')).then(
      () => true,
      () => false,
    );
  }
}
