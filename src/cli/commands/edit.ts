import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { act, dryRunOpt, json } from '../command.js';
import type { CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('edit [paths...]')
      .description("record prose edits with the run's changes.md as one commit (an edit of the latest graded run)")
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nWrite .tune/<name>/runs/<run>/changes.md first: what changed and why; an \`Aims: id, id\` line\nnames the cases the edit is meant to fix (default: the cases wrong in that run).`),
    run,
  );
}

async function run(io: CommandIO, paths: string[] | undefined, opts: { json?: boolean }): Promise<void | Plan> {
  const [{ recordEdit }, { openTuning }] = await Promise.all([import('../../app/edit.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd);
  const outcome = await recordEdit(tuning, paths ?? [], io);
  if (outcome instanceof Plan) return outcome;
  for (const w of outcome.warnings) io.err(`warning: this edit ${w}: it tunes to the test`);
  await printDone(io, opts, outcome, [`edit of ${outcome.run} recorded (${outcome.commit.slice(0, 7)}): ${outcome.files.join(', ')}; aims ${outcome.aims.join(', ') || 'none'}`]);
}
