import { chooseBackend, findRepo } from './find-repo.js';
import type { GitRepo } from './types.js';

/**
 * Finds the repository that holds `cwd` and opens it behind our interface,
 * on the backend `chooseBackend` picks. Each backend is imported only when
 * chosen: the native one never loads isomorphic-git.
 */
export async function openRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<GitRepo> {
  const { dir, gitdir } = await findRepo(cwd);
  const backend = chooseBackend(env);
  if (backend === 'native') {
    const { NativeGitRepo } = await import('./native-repo.js');
    return new NativeGitRepo(dir, gitdir);
  }
  const { IsoGitRepo } = await import('./iso.js');
  return new IsoGitRepo(dir, gitdir);
}
