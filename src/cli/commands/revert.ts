import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { act, dryRunOpt, json } from '../command.js';
import type { CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('revert [commit]')
      .description("revert every unconfirmed and pending edit of the current half (or one edit) with revert commits")
      .addOption(dryRunOpt())
      .addOption(json()),
    run,
  );
}

async function run(io: CommandIO, commit: string | undefined, opts: { json?: boolean }): Promise<void | Plan> {
  const [{ revertEdits }, { openTuning }] = await Promise.all([import('../../app/revert.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd);
  const outcome = await revertEdits(tuning, commit, io);
  if (outcome instanceof Plan) return outcome;
  const lines = [
    ...(outcome.reverted.length === 0 ? ['nothing to revert: no unconfirmed or pending edit in this half'] : []),
    ...outcome.reverted.map((r) => `reverted ${r.edit.oid.slice(0, 7)} (${r.edit.status === 'pending' ? 'pending' : `unconfirmed by ${r.edit.settledBy}`}): ${r.files.join(', ') || 'no prose file'}`),
    ...outcome.kept.map((k) => `kept ${k.edit.oid.slice(0, 7)}: ${k.why}`),
  ];
  await printDone(io, opts, {
    reverted: outcome.reverted.map((r, i) => ({ edit: r.edit.oid, status: r.edit.status, files: r.files, commit: outcome.commits[i] })),
    kept: outcome.kept.map((k) => ({ edit: k.edit.oid, why: k.why })),
  }, lines);
}
