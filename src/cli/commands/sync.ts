import { pullTuning, pushTuning } from '../../app/sync.js';
import { openTuning } from '../../app/tuning.js';
import { branchName } from '../../core/names.js';
import { printJson, type CommandIO } from '../io.js';

/** `git tune push` / `pull` (src/app/sync.ts): the tuning branch with its run tags and logs ref. */
export async function push(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const pushed = await pushTuning(tuning, remote, io.env);
  if (opts.json) printJson(io, { remote: pushed.remote, refspecs: pushed.refspecs });
  else io.out(`pushed ${branchName(tuning.name)}, its run tags${pushed.hasLogs ? ' and its logs' : ''} to ${pushed.remote}`);
  if (pushed.stderr.trim()) io.err(pushed.stderr.trim());
}

export async function pull(io: CommandIO, remote: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const pulled = await pullTuning(tuning, remote, io.env);
  if (opts.json) printJson(io, { remote: pulled.remote, tuning: tuning.name });
  else io.out(`pulled ${branchName(tuning.name)}, its run tags and its logs from ${pulled.remote}`);
}
