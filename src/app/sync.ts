import { branchName } from '../core/names.js';
import type { Env } from '../git/identity.js';
import { refuseWhileDriven } from '../git/lock-owner.js';
import type { PushedRef } from '../git/types.js';
import { logsRef } from '../run/logs.js';
import type { Tuning } from './tuning.js';

/**
 * `git tune push` / `pull`: the branch, its run tags and its logs ref travel
 * together, so a clone can `git tune show <run> <case> --log`.
 */
function refspecs(name: string): string[] {
  return [
    `refs/heads/${branchName(name)}:refs/heads/${branchName(name)}`,
    `refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`,
    `${logsRef(name)}:${logsRef(name)}`,
  ];
}

export interface PushOutcome {
  remote: string;
  refspecs: string[];
  /** Whether the tuning has a logs ref yet (before its first run it has not). */
  hasLogs: boolean;
  /** Each ref as git reported it. */
  refs: PushedRef[];
  /** What git and the remote said on stderr. */
  stderr: string;
}

export async function pushTuning(tuning: Tuning, remote: string | undefined, env: Env): Promise<PushOutcome> {
  const target = remote ?? 'origin';
  const hasLogs = (await tuning.repo.resolveRef(logsRef(tuning.name))) !== null;
  const specs = refspecs(tuning.name).filter((s) => hasLogs || !s.startsWith('refs/tune-logs'));
  const { refs, stderr } = await tuning.repo.push(target, specs, { env });
  return { remote: target, refspecs: specs, hasLogs, refs, stderr };
}

/**
 * Tags and logs are fetched straight into place; the branch goes through a
 * remote-tracking ref and is fast-forwarded only (history is never
 * rewritten): merged when it is checked out, fetched into place when not.
 * A remote without the logs ref (pushed before the tuning's first run) gives
 * the tags and branch alone.
 */
export async function pullTuning(tuning: Tuning, remote: string | undefined, env: Env): Promise<{ remote: string }> {
  const { repo, name } = tuning;
  // It moves the branch: not under a running auto's steps.
  await refuseWhileDriven(repo.gitdir, name, !tuning.onBranch);
  const target = remote ?? 'origin';
  const tags = `refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`;
  const tracking = `refs/heads/${branchName(name)}:refs/remotes/${target}/${branchName(name)}`;
  await repo.fetch(target, [`+${logsRef(name)}:${logsRef(name)}`, tags, tracking], env)
    .catch(async () => repo.fetch(target, [tags, tracking], env));
  if (tuning.onBranch) await repo.fastForward(`refs/remotes/${target}/${branchName(name)}`, env);
  else await repo.fetch(target, [`refs/heads/${branchName(name)}:refs/heads/${branchName(name)}`], env);
  return { remote: target };
}
