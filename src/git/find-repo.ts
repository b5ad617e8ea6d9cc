import { accessSync, constants, readFileSync, statSync } from 'node:fs';
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
  const found = locateRepo(cwd);
  if (found === null) throw usageError('not-a-repo', `${cwd} is not inside a git repository`, 'git init');
  if ('linked' in found) {
    throw usageError(
      'linked-worktree',
      `${found.linked} is a linked worktree or submodule (.git is a file); git-tune works in a repository's main working tree`,
      'cd to the main working tree (git worktree list) and run the command there',
    );
  }
  return found;
}

/** The nearest `.git` at or above `cwd`: a directory (the repository), a file (a linked worktree's), or none. */
export function locateRepo(cwd: string): { dir: string; gitdir: string } | { linked: string } | null {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    // Any error (a .git symlink loop, a folder we may not read) is no .git here: the walk goes on up.
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(path.join(dir, '.git'), { throwIfNoEntry: false });
    } catch {
      stat = undefined;
    }
    if (stat?.isDirectory()) return { dir, gitdir: path.join(dir, '.git') };
    if (stat?.isFile()) return { linked: dir };
    if (path.dirname(dir) === dir) return null;
  }
}

/** The branch HEAD names (`refs/heads/…`), or null when HEAD is detached. */
export function headRefOf(headText: string): string | null {
  const text = headText.trim();
  return text.startsWith('ref: ') ? text.slice(5).trim() : null;
}

/** The branch the repository's HEAD names, read from its file; null when detached or unreadable. */
export function readHeadRef(gitdir: string): string | null {
  try {
    return headRefOf(readFileSync(path.join(gitdir, 'HEAD'), 'utf8'));
  } catch {
    return null;
  }
}
