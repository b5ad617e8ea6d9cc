import { createHash } from 'node:crypto';

/** A file's git blob id (sha-1, as the repository stores it): prose an uncommitted change would hold. */
export function blobOid(content: Uint8Array | string): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * The prose a commit holds (the `prose` and `memoryPolicy` globs), as one id:
 * a hash of each prose file's path and blob id (`files`: path → blob id, the
 * commit's prose files). Two commits with the same id hold exactly the same
 * prose. `changes` are laid over the files first (the revert commits a grade
 * writes before its own: path → content or stored blob, null deleted), so a
 * grade can name the prose it leaves before it is written. Runs and grades
 * record it (`Tune-Prose`): a half passes only on a run of the prose the
 * branch holds (src/core/basis.ts).
 */
export function proseDigestOf(
  files: ReadonlyMap<string, string>, isProse: (file: string) => boolean,
  changes: Iterable<readonly [string, { content: Uint8Array | string } | { oid: string } | null]> = [],
): string {
  const now = new Map(files);
  for (const [file, change] of changes) {
    if (!isProse(file)) continue;
    if (change === null) now.delete(file);
    else now.set(file, 'oid' in change ? change.oid : blobOid(change.content));
  }
  const hash = createHash('sha256');
  for (const file of [...now.keys()].sort()) hash.update(`${file}\0${now.get(file)}\n`);
  return hash.digest('hex').slice(0, 16);
}
