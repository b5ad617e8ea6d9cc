import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, table, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('log')
      .description('the history of the tuning as a table of steps and runs')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

/** `git tune log`: every step of the tuning as a table, newest first; edits say where they stand. */
async function run(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ logEntries }, { openTuning }] = await Promise.all([import('../../app/reports.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const entries = logEntries(tuning);
  if (opts.json) {
    printJson(io, { tuning: tuning.name, branch: `tune/${tuning.name}`, tip: tuning.tip, steps: entries });
    return;
  }
  const rows = entries.map((e) => [
    String(e.index), e.commit.slice(0, 7), e.step, e.run ?? '', e.edit ? e.edit.status : '',
    [e.what, ...e.difficult.map((d) => `difficult ${d}`)].join('; '),
  ]);
  io.out(`tuning ${tuning.name}: ${entries.length} steps, newest first\n\n${table(['#', 'commit', 'step', 'run', 'edit', 'what'], rows)}`);
}
