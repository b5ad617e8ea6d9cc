import type { MemoryWrite } from '../contracts/result.js';

/**
 * The candidate memory's merge plan (docs/method.md#memory): the last good memory plus
 * what each case of the passing no-memory run wrote, applied in the run's
 * case order. Pure: trees are maps from a relative path to bytes.
 *
 * Conflicts are kept and reported, never dropped:
 * - two cases write different content to one path: the first case (in run
 *   order) keeps the path, each later one's content goes to
 *   `<path>.conflict-<caseid>`;
 * - a case deletes a path another case wrote (either order): the written
 *   content stays at the path and the deletion is not applied, since a
 *   deletion carries nothing a later reader could recover;
 * - a file where another case (or the last good memory) has a directory, or
 *   the reverse (`notes` vs `notes/a.md`): the later write moves aside, its
 *   clashing segment renamed the same way (`notes.conflict-<caseid>/a.md`).
 * Cases that write the same content to one path agree: no conflict. A case's
 * write to a path the last good memory holds replaces it (newer, and tested
 * by the passing run); the diff shows it as changed.
 */
export type MemoryTree = Map<string, Uint8Array>;

export type ConflictKind = 'different-content' | 'delete-vs-write' | 'file-vs-directory';

export interface MemoryConflict {
  kind: ConflictKind;
  /** The path both wanted. */
  path: string;
  /** Who holds `path` now: a case id, or `last-good`. */
  kept: string;
  /** The case whose write lost the path (or whose deletion was not applied). */
  other: string;
  /** Where the other case's content went; null for a deletion not applied. */
  movedTo: string | null;
}

export interface CaseWrites {
  caseId: string;
  writes: readonly MemoryWrite[];
}

export interface MergePlan {
  files: MemoryTree;
  conflicts: MemoryConflict[];
  /** Writes that could not be applied at all (a bad path, missing content). */
  problems: string[];
}

export const LAST_GOOD = 'last-good';

/** A memory path must stay inside the memory: relative, no `.`/`..`/empty segment, no `.git`. */
export function memoryPathProblem(p: string): string | null {
  if (p === '' || p.startsWith('/') || p.includes('\\') || p.includes('\0')) return 'must be a relative path with / separators';
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') return 'must not hold empty, `.` or `..` segments';
    if (seg.toLowerCase() === '.git') return 'must not hold a `.git` segment';
  }
  return null;
}

export function decodeWrite(write: MemoryWrite): Uint8Array | null {
  if (write.content === undefined) return null;
  return write.encoding === 'base64' ? new Uint8Array(Buffer.from(write.content, 'base64')) : new Uint8Array(Buffer.from(write.content, 'utf8'));
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
}

const prefixes = (p: string) => {
  const segs = p.split('/');
  return segs.slice(0, -1).map((_, i) => segs.slice(0, i + 1).join('/'));
};

export function planCandidate(base: MemoryTree, cases: readonly CaseWrites[]): MergePlan {
  const files: MemoryTree = new Map(base);
  const owner = new Map<string, string>([...base.keys()].map((p) => [p, LAST_GOOD]));
  /** Paths a case deleted, and which case did. */
  const deletedBy = new Map<string, string>();
  const conflicts: MemoryConflict[] = [];
  const problems: string[] = [];

  const freeName = (wanted: string, caseId: string) => {
    let name = `${wanted}.conflict-${caseId}`;
    for (let n = 2; files.has(name) || [...files.keys()].some((f) => f.startsWith(`${name}/`)); n++) name = `${wanted}.conflict-${caseId}-${n}`;
    return name;
  };

  /** The first clash of `p` with the tree's shape: a file at one of its prefixes, or files under it. */
  const shapeClash = (p: string): { at: string; holder: string } | null => {
    for (const pre of prefixes(p)) if (files.has(pre)) return { at: pre, holder: owner.get(pre) ?? LAST_GOOD };
    const under = [...files.keys()].find((f) => f.startsWith(`${p}/`));
    return under ? { at: p, holder: owner.get(under) ?? LAST_GOOD } : null;
  };

  const put = (p: string, content: Uint8Array, caseId: string) => {
    const clash = shapeClash(p);
    if (clash) {
      const aside = freeName(clash.at, caseId);
      const moved = aside + p.slice(clash.at.length);
      conflicts.push({ kind: 'file-vs-directory', path: clash.at, kept: clash.holder, other: caseId, movedTo: moved });
      files.set(moved, content);
      owner.set(moved, caseId);
      return;
    }
    files.set(p, content);
    owner.set(p, caseId);
  };

  for (const { caseId, writes } of cases) {
    for (const write of writes) {
      const bad = memoryPathProblem(write.path);
      if (bad) {
        problems.push(`${caseId}: write to \`${write.path}\` ${bad}`);
        continue;
      }
      const p = write.path;
      if (write.op === 'deleted') {
        const holder = owner.get(p);
        if (holder !== undefined && holder !== LAST_GOOD && holder !== caseId) {
          conflicts.push({ kind: 'delete-vs-write', path: p, kept: holder, other: caseId, movedTo: null });
        } else if (files.has(p)) {
          files.delete(p);
          owner.delete(p);
          deletedBy.set(p, caseId);
        }
        continue;
      }
      const content = decodeWrite(write);
      if (content === null) {
        problems.push(`${caseId}: ${write.op} \`${p}\` records no content`);
        continue;
      }
      const holder = owner.get(p);
      const current = files.get(p);
      if (current !== undefined && holder !== undefined && holder !== LAST_GOOD && holder !== caseId) {
        if (sameBytes(current, content)) continue; // two cases agree
        const aside = freeName(p, caseId);
        conflicts.push({ kind: 'different-content', path: p, kept: holder, other: caseId, movedTo: aside });
        files.set(aside, content);
        owner.set(aside, caseId);
        continue;
      }
      const deleter = deletedBy.get(p);
      if (current === undefined && deleter !== undefined && deleter !== caseId) {
        // Written content wins over an earlier deletion: nothing is lost.
        conflicts.push({ kind: 'delete-vs-write', path: p, kept: caseId, other: deleter, movedTo: null });
        deletedBy.delete(p);
      }
      if (current !== undefined) {
        // Replacing the last good memory's file (or the case's own earlier write) in place.
        files.set(p, content);
        owner.set(p, caseId);
      } else {
        put(p, content, caseId);
      }
    }
  }
  return { files: sortTree(files), conflicts, problems };
}

export function sortTree(tree: MemoryTree): MemoryTree {
  return new Map([...tree.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface TreeChange {
  path: string;
  bytes: number;
}

export interface TreeDiff {
  added: TreeChange[];
  changed: TreeChange[];
  deleted: TreeChange[];
  unchanged: number;
  files: number;
  bytes: number;
}

/** What replacing `before` whole with `after` changes, file by file. */
export function diffTrees(before: MemoryTree, after: MemoryTree): TreeDiff {
  const diff: TreeDiff = { added: [], changed: [], deleted: [], unchanged: 0, files: after.size, bytes: 0 };
  for (const [p, content] of sortTree(after)) {
    diff.bytes += content.byteLength;
    const was = before.get(p);
    if (was === undefined) diff.added.push({ path: p, bytes: content.byteLength });
    else if (!sameBytes(was, content)) diff.changed.push({ path: p, bytes: content.byteLength });
    else diff.unchanged += 1;
  }
  for (const [p, content] of sortTree(before)) if (!after.has(p)) diff.deleted.push({ path: p, bytes: content.byteLength });
  return diff;
}

export function describeConflict(c: MemoryConflict): string {
  const who = (id: string) => (id === LAST_GOOD ? 'the last good memory' : id);
  switch (c.kind) {
    case 'different-content':
      return `${c.path}: ${who(c.kept)} and ${c.other} wrote different content; ${who(c.kept)}'s is kept, ${c.other}'s is at ${c.movedTo}`;
    case 'delete-vs-write':
      return `${c.path}: ${c.other} deleted what ${who(c.kept)} wrote; the written content is kept`;
    case 'file-vs-directory':
      return `${c.path}: a file for one and a directory for the other (${who(c.kept)} has it); ${c.other}'s write is at ${c.movedTo}`;
  }
}
