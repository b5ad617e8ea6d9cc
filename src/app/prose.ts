import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { globBase, matcher } from '../core/glob.js';
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

/** A file's git blob id (sha-1, as the repository stores it): prose an uncommitted change would hold. */
export function blobOid(content: Uint8Array | string): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * The prose a commit holds (the `prose` and `memoryPolicy` globs), as one
 * id: a hash of each prose file's path and blob id. Two commits with the same
 * id hold exactly the same prose. `changes` are laid over the commit first
 * (the revert commits a grade writes before its own: path → content, null
 * deleted), so a grade can name the prose it leaves before it is written.
 * Runs and grades record it (`Tune-Prose`): a half passes only on a run of
 * the prose the branch holds (src/core/basis.ts).
 */
export async function proseDigest(
  repo: GitRepo, commit: string, globs: readonly string[], changes: Iterable<readonly [string, FileChange | StoredBlob]> = [],
): Promise<string> {
  const isProse = matcher(globs);
  const files = new Map<string, string>();
  for (const prefix of new Set(globs.map(globBase).filter((b) => b !== null))) {
    for (const f of await repo.listFiles(commit, prefix)) if (isProse(f.path)) files.set(f.path, f.oid);
  }
  for (const [file, change] of changes) {
    if (!isProse(file)) continue;
    if (change === null) files.delete(file);
    else files.set(file, 'oid' in change ? change.oid : blobOid(change.content));
  }
  const hash = createHash('sha256');
  for (const file of [...files.keys()].sort()) hash.update(`${file}\0${files.get(file)}\n`);
  return hash.digest('hex').slice(0, 16);
}
