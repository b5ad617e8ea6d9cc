import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  const dataset = program.command('dataset').description('the cases this tuning is measured against');
  act(
    dataset
      .command('import [file]')
      .description('read cases from JSON, JSONL or YAML (a file, or a folder of them); a bad file is refused whole')
      .option('--held-out <file>', 'keep these cases apart as the held-out set (same formats): no batch uses them, no edit may quote them, `git tune baseline` and the final check run them; refused whole if one shares an id or an input with the dataset')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nExamples:\n  git tune dataset import cases.yaml\n  git tune dataset import cases.yaml --held-out held-out.yaml   # both at once\n  git tune dataset import --held-out held-out.jsonl             # beside the dataset already there`),
    importCommand,
  );
}

async function importCommand(io: CommandIO, input: string | undefined, opts: { json?: boolean; tuning?: string; heldOut?: string }): Promise<void | Plan> {
  if (input === undefined && opts.heldOut === undefined) {
    throw usageError('bad-options', 'dataset import needs a dataset file, --held-out <file>, or both', 'git tune dataset import cases.yaml [--held-out held-out.yaml]');
  }
  const [{ importDataset }, { openTuning }] = await Promise.all([import('../../app/dataset.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const prepared = await importDataset.prepare(input, io.cwd, opts.heldOut);
  const result = await importDataset.apply(tuning, prepared, io);
  if (result instanceof Plan) return result;
  const cases = prepared.cases;
  const classes = cases ? [...new Set(cases.map((c) => c.class))] : null;
  if (opts.json) {
    printJson(io, {
      cases: cases?.length ?? null, classes, rev: result.rev, changed: result.changed || (result.heldOut?.changed ?? false),
      datasetChanged: result.changed, heldOut: result.heldOut, commit: result.oid,
    });
    return;
  }
  const lines: string[] = [];
  if (cases && classes) {
    lines.push(result.changed
      ? `imported ${cases.length} cases in ${classes.length} classes (${classes.join(', ')}), rev ${result.rev}`
      : `the dataset is unchanged (rev ${result.rev})${prepared.heldOut ? '' : ': nothing to commit'}`);
  }
  if (prepared.heldOut && result.heldOut) {
    lines.push(result.heldOut.changed
      ? `kept ${result.heldOut.cases} held-out cases apart (rev ${result.heldOut.rev}): no batch uses them; \`git tune baseline\` runs them with the original prose`
      : `the held-out set is unchanged (rev ${result.heldOut.rev})`);
  }
  if (prepared.heldOut && !result.changed && !(result.heldOut?.changed ?? false)) lines.push('nothing to commit');
  io.out(lines.join('\n'));
  if (result.changed && tuning.selection) io.err('the selection was made from another dataset: run `git tune select` again');
}
