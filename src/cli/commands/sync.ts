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

const modules = () => Promise.all([import('../../app/sync.js'), import('../../app/tuning.js'), import('../../core/names.js')]);

/** `git tune push` / `pull` (src/app/sync.ts): the tuning branch with its run tags and logs ref. */
async function push(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ pushTuning }, { openTuning }, { branchName }] = await modules();
  const tuning = await openTuning(io.cwd, opts.tuning);
  const pushed = await pushTuning(tuning, remote, io.env);
  if (opts.json) printJson(io, { remote: pushed.remote, refspecs: pushed.refspecs });
  else io.out(`pushed ${branchName(tuning.name)}, its run tags${pushed.hasLogs ? ' and its logs' : ''} to ${pushed.remote}`);
  if (pushed.stderr.trim()) io.err(pushed.stderr.trim());
}

async function pull(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ pullTuning }, { openTuning }, { branchName }] = await modules();
  const tuning = await openTuning(io.cwd, opts.tuning);
  const pulled = await pullTuning(tuning, remote, io.env);
  if (opts.json) printJson(io, { remote: pulled.remote, tuning: tuning.name });
  else io.out(`pulled ${branchName(tuning.name)}, its run tags and its logs from ${pulled.remote}`);
}
