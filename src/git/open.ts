import { promises as fs } from 'node:fs';
import path from 'node:path';
import { usageError } from '../errors.js';
import { IsoGitRepo } from './iso.js';
import type { GitRepo } from './types.js';

/** Finds the repository that holds `cwd` and opens it behind our interface. */
export async function openRepo(cwd: string): Promise<GitRepo> {
  let dir = path.resolve(cwd);
  for (;;) {
    const dotgit = path.join(dir, '.git');
    const stat = await fs.stat(dotgit).catch(() => null);
    if (stat?.isDirectory()) return new IsoGitRepo(dir, dotgit);
    if (stat?.isFile()) {
      throw usageError(
        'linked-worktree',
        `${dir} is a linked worktree or submodule (.git is a file); git-tune works in a repository's main working tree`,
        'cd to the main working tree (git worktree list) and run the command there',
      );
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw usageError('not-a-repo', `${cwd} is not inside a git repository`, 'git init');
    }
    dir = parent;
  }
}
