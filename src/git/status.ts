import type { Env } from './identity.js';
import { runGit } from './native.js';

/**
 * The working tree as native git sees it, for the guards that put back what a
 * judge or an editor may not change. Native git, because isomorphic-git's
 * status walk is far slower on a large tree and needs no index of its own.
 */

/** Paths native git reports as changed or untracked (not ignored) → whether each is untracked. */
export async function changedPaths(dir: string, env: Env): Promise<Map<string, boolean>> {
  const { stdout } = await runGit(['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], dir, env);
  const out = new Map<string, boolean>();
  for (const entry of stdout.split('\0')) {
    if (entry.length < 4) continue;
    out.set(entry.slice(3), entry.startsWith('??'));
  }
  return out;
}

/** Puts tracked files back as HEAD has them. */
export async function restoreFromHead(dir: string, env: Env, files: readonly string[]): Promise<void> {
  if (files.length > 0) await runGit(['checkout', 'HEAD', '--', ...files], dir, env);
}
