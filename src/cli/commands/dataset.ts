import { importDataset } from '../../app/dataset.js';
import { openTuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';

export async function importCommand(io: CommandIO, input: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
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
