import { promises as fs } from 'node:fs';
import path from 'node:path';
import { usageError } from '../errors.js';

/**
 * Working-tree and index checks both GitRepo implementations share. No git
 * library here: the native backend must not load isomorphic-git to use them.
 */

/**
 * isomorphic-git cannot update an index of version 4 (`feature.manyFiles`
 * turns it on) and gets a split index silently wrong (see the notes). Both
 * backends refuse them the same way, so a repository behaves the same whichever
 * backend runs. Checked under the lock, before a step writes anything, so a
 * step never moves the branch and then fails to refresh the working tree.
 */
export async function assertIndexSupported(gitdir: string): Promise<void> {
  let header: Buffer;
  try {
    const handle = await fs.open(path.join(gitdir, 'index'), 'r');
    try {
      header = Buffer.alloc(8);
      await handle.read(header, 0, 8, 0);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // no index yet
    throw err;
  }
  const version = header.readUInt32BE(4);
  if (header.toString('latin1', 0, 4) === 'DIRC' && version !== 2 && version !== 3) {
    throw usageError(
      'index-unsupported',
      `.git/index is version ${version} (feature.manyFiles or index.version sets it); git-tune updates index versions 2 and 3 only`,
      'git config index.version 3 && git update-index --index-version 3',
    );
  }
  if ((await fs.readdir(gitdir)).some((name) => name.startsWith('sharedindex.'))) {
    throw usageError(
      'index-unsupported',
      'the index is split (core.splitIndex); git-tune cannot update a split index',
      'git config core.splitIndex false && git update-index --no-split-index',
    );
  }
}

/** Removes `dir` and its parents up to `root` while they are empty, as git does after deleting a file. */
export async function removeEmptyDirs(root: string, dir: string): Promise<void> {
  let current = dir;
  while (current.startsWith(root) && current !== root) {
    try {
      await fs.rmdir(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}
