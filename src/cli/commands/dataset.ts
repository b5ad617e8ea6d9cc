import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  const dataset = program.command('dataset').description('the cases this tuning is measured against');
  act(
    dataset
      .command('import <file>')
      .description('read cases from JSON, JSONL or YAML (a file, or a folder of them); a bad file is refused whole')
      .addOption(dryRunOpt())
      .addOption(json()),
    importCommand,
  );
}

async function importCommand(io: CommandIO, input: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ importDataset }, { openTuning }] = await Promise.all([import('../../app/dataset.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const cases = await importDataset.prepare(input, io.cwd);
  const result = await importDataset.apply(tuning, cases, io);
  const classes = [...new Set(cases.map((c) => c.class))];
  if (opts.json) {
    printJson(io, { cases: cases.length, classes, rev: result.rev, changed: result.changed, commit: result.oid });
    return;
  }
  io.out(
    result.changed
      ? `imported ${cases.length} cases in ${classes.length} classes (${classes.join(', ')}), rev ${result.rev}`
      : `the dataset is unchanged (rev ${result.rev}): nothing to commit`,
  );
  if (result.changed && tuning.selection) io.err('the selection was made from another dataset: run `git tune select` again');
}
