import path from 'node:path';
import { configIdentity, resolveIdentity, type Env } from './identity.js';
import { runGit } from './native.js';

/**
 * A new repository in `dir` (`git init`, native git) whose first commit on
 * `branch` holds every file already in `dir`. Without a git identity anywhere
 * (environment, global or system config), `fallbackIdentity` is set in the
 * new repository's own config (`identitySet`). The user's commit signing and
 * hooks are for their own repositories, not this new one: its first commit
 * uses neither.
 */
export async function initRepo(
  dir: string, env: Env,
  opts: { branch: string; message: string; fallbackIdentity: { name: string; email: string } },
): Promise<{ identitySet: boolean }> {
  const gitEnv = env as Record<string, string | undefined>;
  await runGit(['init', '--quiet', `--initial-branch=${opts.branch}`], dir, gitEnv);
  const gitdir = path.join(dir, '.git');
  let identitySet = false;
  try {
    await resolveIdentity(gitdir, env, new Date());
  } catch {
    const known = await configIdentity(gitdir, env);
    if (!env.GIT_AUTHOR_NAME && !known.name) {
      await runGit(['config', 'user.name', opts.fallbackIdentity.name], dir, gitEnv);
    }
    if (!env.GIT_AUTHOR_EMAIL && !known.email) {
      await runGit(['config', 'user.email', opts.fallbackIdentity.email], dir, gitEnv);
    }
    identitySet = true;
  }
  await runGit(['add', '--all'], dir, gitEnv);
  await runGit(['-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', opts.message], dir, gitEnv);
  return { identitySet };
}
