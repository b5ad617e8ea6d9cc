import { promises as fs } from 'node:fs';
import path from 'node:path';
import { globBase, matcher } from '../core/glob.js';
import { proseDigestOf } from '../core/prose-digest.js';
import type { FileChange, GitRepo, StoredBlob } from '../git/types.js';
import { filesUnder } from '../run/files.js';

const SKIP = new Set(['.git', 'node_modules']);

/**
 * The prose files of a tuning (the `prose` and `memoryPolicy` globs) and
 * whether the working tree holds them exactly as committed.
 */
/** Paths under the globs that differ between the working tree and `commit` (changed, added, deleted). */
export async function uncommittedProse(repo: GitRepo, commit: string, globs: readonly string[]): Promise<string[]> {
  if (globs.length === 0) return [];
  const isProse = matcher(globs);
  const prefixes = [...new Set(globs.map(globBase).filter((b) => b !== null))];
  const committed = new Map<string, string>();
  const onDisk = new Set<string>();
  for (const prefix of prefixes) {
    for (const f of await repo.listFiles(commit, prefix)) if (isProse(f.path)) committed.set(f.path, f.oid);
    for (const f of await filesUnder(repo.dir, prefix, { skip: SKIP, links: true })) if (isProse(f)) onDisk.add(f);
  }
  const dirty: string[] = [];
  for (const file of new Set([...committed.keys(), ...onDisk])) {
    if (!committed.has(file) || !onDisk.has(file)) {
      dirty.push(file);
      continue;
    }
    const blob = await repo.readBlobAt(commit, file);
    const disk = await fs.readFile(path.join(repo.dir, file));
    if (!blob || Buffer.compare(Buffer.from(blob), disk) !== 0) dirty.push(file);
  }
  return dirty.sort();
}

/** The prose files `commit` holds under the globs: path → blob id. */
export async function proseFiles(repo: GitRepo, commit: string, globs: readonly string[]): Promise<Map<string, string>> {
  const isProse = matcher(globs);
  const files = new Map<string, string>();
  for (const prefix of new Set(globs.map(globBase).filter((b) => b !== null))) {
    for (const f of await repo.listFiles(commit, prefix)) if (isProse(f.path)) files.set(f.path, f.oid);
  }
  return files;
}

/** The prose `commit` holds, `changes` laid over it, as one id (src/core/prose-digest.ts). */
export async function proseDigest(
  repo: GitRepo, commit: string, globs: readonly string[], changes: Iterable<readonly [string, FileChange | StoredBlob]> = [],
): Promise<string> {
  return proseDigestOf(await proseFiles(repo, commit, globs), matcher(globs), changes);
}
