import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('push [remote]')
      .description('push the tuning branch with its run tags and logs ref (default remote: origin)')
      .addOption(json())
      .addOption(tuningOpt()),
    push,
  );
  act(
    program
      .command('pull [remote]')
      .description('fetch the tuning branch, its run tags and logs; fast-forward the branch')
      .addOption(json())
      .addOption(tuningOpt()),
    pull,
  );
}

const modules = () => Promise.all([import('../../app/tuning.js'), import('../../core/names.js'), import('../../git/native.js'), import('../../run/logs.js')]);

/**
 * `git tune push` / `pull`: the branch, its run tags and its logs ref travel
 * together, so a clone can `git tune show <run> <case> --log`.
 */
function refspecs(name: string, branchName: (name: string) => string, logsRef: (name: string) => string): string[] {
  return [
    `refs/heads/${branchName(name)}:refs/heads/${branchName(name)}`,
    `refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`,
    `${logsRef(name)}:${logsRef(name)}`,
  ];
}

async function push(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ openTuning }, { branchName }, { runGit }, { logsRef }] = await modules();
  const tuning = await openTuning(io.cwd, opts.tuning);
  const target = remote ?? 'origin';
  const hasLogs = (await tuning.repo.resolveRef(logsRef(tuning.name))) !== null;
  const specs = refspecs(tuning.name, branchName, logsRef).filter((s) => hasLogs || !s.startsWith('refs/tune-logs'));
  const { stderr } = await runGit(['push', '--porcelain', target, ...specs], tuning.repo.dir, io.env);
  if (opts.json) printJson(io, { remote: target, refspecs: specs });
  else io.out(`pushed ${branchName(tuning.name)}, its run tags${hasLogs ? ' and its logs' : ''} to ${target}`);
  if (stderr.trim()) io.err(stderr.trim());
}

async function pull(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ openTuning }, { branchName }, { runGit }, { logsRef }] = await modules();
  const tuning = await openTuning(io.cwd, opts.tuning);
  const target = remote ?? 'origin';
  const name = tuning.name;
  // Tags and logs are fetched straight into place; the branch goes through a
  // remote-tracking ref and is fast-forwarded only (history is never rewritten).
  await runGit(['fetch', target, `+${logsRef(name)}:${logsRef(name)}`, `refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`, `refs/heads/${branchName(name)}:refs/remotes/${target}/${branchName(name)}`], tuning.repo.dir, io.env)
    .catch(async () => runGit(['fetch', target, `refs/tags/tune/${name}/*:refs/tags/tune/${name}/*`, `refs/heads/${branchName(name)}:refs/remotes/${target}/${branchName(name)}`], tuning.repo.dir, io.env));
  if (tuning.onBranch) await runGit(['merge', '--ff-only', `refs/remotes/${target}/${branchName(name)}`], tuning.repo.dir, io.env);
  else await runGit(['fetch', target, `refs/heads/${branchName(name)}:refs/heads/${branchName(name)}`], tuning.repo.dir, io.env);
  if (opts.json) printJson(io, { remote: target, tuning: name });
  else io.out(`pulled ${branchName(name)}, its run tags and its logs from ${target}`);
}
