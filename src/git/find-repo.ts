import { accessSync, constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { usageError } from '../errors.js';
import type { GitBackend } from './types.js';

// Finding the repository and choosing the backend, without loading either
// backend: the warm `git tune next` (src/app/kept-next.ts) starts from here.

/**
 * `GIT_TUNE_BACKEND=iso|native` decides; otherwise native git when it is on
 * PATH. Measured (BENCHMARKS.md): native reads, walks and writes are as fast
 * or faster than isomorphic-git's in every operation a step makes, and do not
 * slow down with the size of the repository's packs; isomorphic-git remains
 * for machines without git.
 */
export function chooseBackend(env: NodeJS.ProcessEnv = process.env): GitBackend {
  const asked = env.GIT_TUNE_BACKEND?.trim().toLowerCase();
  if (asked === 'iso' || asked === 'native') return asked;
  if (asked) {
    throw usageError('bad-backend', `GIT_TUNE_BACKEND must be iso or native, not ${JSON.stringify(env.GIT_TUNE_BACKEND)}`, 'unset GIT_TUNE_BACKEND   # to let git-tune choose');
  }
  return gitOnPath(env) ? 'native' : 'iso';
}

/** Whether a `git` executable is on PATH, checked without spawning it. */
export function gitOnPath(env: NodeJS.ProcessEnv = process.env): boolean {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      try {
        accessSync(path.join(dir, `git${ext}`), constants.X_OK);
        return true;
      } catch {
        /* not here */
      }
    }
  }
  return false;
}

/** The repository that holds `cwd`: its working tree and its `.git` directory (a linked worktree is refused). */
export async function findRepo(cwd: string): Promise<{ dir: string; gitdir: string }> {
  let dir = path.resolve(cwd);
  for (;;) {
    const dotgit = path.join(dir, '.git');
    const stat = await fs.stat(dotgit).catch(() => null);
    if (stat?.isDirectory()) return { dir, gitdir: dotgit };
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
