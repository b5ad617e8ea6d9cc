import type { CommitInfo, FileChange, StoredBlob, TreeFile } from './types.js';

/**
 * Tree walks both backends share: each is written against a backend's two
 * reads (a commit, a tree), so the isomorphic-git and native implementations
 * cannot drift apart in what a path, a listing or a diff means.
 */
export interface TreeEntry {
  mode: string; // six digits, as isomorphic-git reports them ('040000' for a tree)
  path: string;
  oid: string;
  type: 'blob' | 'tree' | 'commit';
}

export interface TreeReader {
  readCommit(oid: string): Promise<CommitInfo>;
  readTree(oid: string): Promise<TreeEntry[]>;
}

/** The id of the tree or blob at `filepath` in a commit, or null. */
export async function treeOidAt(reader: TreeReader, commitOid: string, filepath: string): Promise<string | null> {
  let oid = (await reader.readCommit(commitOid)).tree;
  for (const part of filepath.split('/').filter(Boolean)) {
    const entry = (await reader.readTree(oid)).find((e) => e.path === part);
    if (!entry) return null;
    oid = entry.oid;
  }
  return oid;
}

/** Every file below `dir` in a commit, with its path from the repository root. */
export async function listFiles(reader: TreeReader, commitOid: string, dir: string): Promise<TreeFile[]> {
  const root = await treeOidAt(reader, commitOid, dir);
  if (!root) return [];
  const out: TreeFile[] = [];
  const walk = async (oid: string, prefix: string) => {
    for (const e of await reader.readTree(oid)) {
      const p = prefix ? `${prefix}/${e.path}` : e.path;
      if (e.type === 'tree') await walk(e.oid, p);
      else if (e.type === 'blob') out.push({ path: p, oid: e.oid, mode: e.mode });
    }
  };
  await walk(root, dir.replace(/\/$/, ''));
  return out;
}

/** The paths a commit changed against its first parent (all of them for a root commit), sorted. */
export async function changedPaths(reader: TreeReader, commitOid: string): Promise<string[]> {
  const commit = await reader.readCommit(commitOid);
  const parentTree = commit.parents[0] ? (await reader.readCommit(commit.parents[0])).tree : null;
  const out: string[] = [];
  const diff = async (a: string | null, b: string | null, prefix: string) => {
    if (a === b) return;
    const left = new Map((a ? await reader.readTree(a) : []).map((e) => [e.path, e]));
    const right = new Map((b ? await reader.readTree(b) : []).map((e) => [e.path, e]));
    for (const name of new Set([...left.keys(), ...right.keys()])) {
      const l = left.get(name);
      const r = right.get(name);
      if (l?.oid === r?.oid && l?.mode === r?.mode) continue;
      const p = prefix ? `${prefix}/${name}` : name;
      const lt = l?.type === 'tree' ? l.oid : null;
      const rt = r?.type === 'tree' ? r.oid : null;
      if (lt || rt) await diff(lt, rt, p);
      if ((l && l.type !== 'tree') || (r && r.type !== 'tree')) out.push(p);
    }
  };
  await diff(parentTree, commit.tree, '');
  return out.sort();
}

/** How a backend stores what `buildTree` makes: a file's blob (by its path from the root), a tree. */
export interface TreeWriter {
  blob(path: string, change: Exclude<FileChange, null>): Promise<string>;
  tree(entries: TreeEntry[]): Promise<string>;
}

/**
 * The tree `base` becomes with `changes` (path from this tree → new content,
 * or null to delete), written bottom-up; null when nothing is left in it.
 */
export async function buildTree(
  reader: TreeReader,
  writer: TreeWriter,
  base: string | null,
  changes: Map<string, FileChange | StoredBlob>,
  prefix = '',
): Promise<string | null> {
  const entries = new Map((base ? await reader.readTree(base) : []).map((e) => [e.path, e]));
  const sub = new Map<string, Map<string, FileChange | StoredBlob>>();
  for (const [p, change] of changes) {
    const slash = p.indexOf('/');
    if (slash < 0) {
      if (change === null) entries.delete(p);
      else entries.set(p, { mode: change.mode ?? '100644', path: p, oid: 'oid' in change ? change.oid : await writer.blob(prefix + p, change), type: 'blob' });
    } else {
      const head = p.slice(0, slash);
      const map = sub.get(head) ?? new Map<string, FileChange | StoredBlob>();
      map.set(p.slice(slash + 1), change);
      sub.set(head, map);
    }
  }
  for (const [name, map] of sub) {
    const existing = entries.get(name);
    const oid = await buildTree(reader, writer, existing?.type === 'tree' ? existing.oid : null, map, `${prefix}${name}/`);
    if (oid === null) entries.delete(name);
    else entries.set(name, { mode: '040000', path: name, oid, type: 'tree' });
  }
  if (entries.size === 0) return null;
  return writer.tree([...entries.values()]);
}
