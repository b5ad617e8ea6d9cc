import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('review <batch>')
      .description('the pull-request body for a batch, markdown on stdout: cases, runs, edits as diffs, tokens')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

/** `git tune review <batch>`: the batch's pull-request body, markdown on stdout (--json: the data and the markdown). */
async function run(io: CommandIO, batch: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ buildReview }, { openTuning }, { renderReview }] = await Promise.all([import('../../app/reports.js'), import('../../app/tuning.js'), import('../../core/review.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const review = await buildReview(tuning, batch, { env: io.env });
  const markdown = renderReview(review);
  if (opts.json) printJson(io, { ...review, markdown });
  else io.out(markdown);
}
