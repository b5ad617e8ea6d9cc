import { branchName, namedTuning, parseBranchName } from '../core/names.js';
import { usageError } from '../errors.js';
import type { GitRepo } from '../git/types.js';

/** Every tuning in the repository: the `tune/<name>` branches. */
export async function listTunings(repo: GitRepo): Promise<string[]> {
  const refs = await repo.listRefs('refs/heads/tune');
  return refs.map((r) => parseBranchName(r.ref)).filter((n): n is string => n !== null);
}

/** The tuning named, or the one whose branch is checked out. */
export async function resolveTuningName(repo: GitRepo, name?: string): Promise<{ name: string; onBranch: boolean }> {
  const head = await repo.headRef();
  const named = namedTuning(name, head);
  if (named) return named;
  const all = await listTunings(repo);
  const hint = all.length === 1
    ? `git switch ${branchName(all[0]!)}`
    : all.length > 1
      ? `git switch tune/<name>   # one of: ${all.join(', ')}`
      : `git tune init <name> --prose '<glob>' --runner '<command>'`;
  throw usageError(
    head ? 'not-on-tuning-branch' : 'detached-head',
    head ? `the checked-out branch ${head.replace('refs/heads/', '')} is not a tuning branch (tune/<name>)` : 'HEAD is detached: no tuning branch is checked out',
    hint,
  );
}
