import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('review [batch]')
      .description('the pull-request body for a batch, markdown on stdout: cases, runs, edits as diffs, tokens')
      .addOption(json())
      .addOption(tuningOpt())
      .addHelpText('after', `\nExamples:\n  git tune review 1            # batch 1's pull-request body, markdown\n  git tune review 2 --json     # the same as data, with the markdown`),
    run,
  );
}

/** `git tune review <batch>`: the batch's pull-request body, markdown on stdout (--json: the data and the markdown). */
async function run(io: CommandIO, batch: string | undefined, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ buildReview }, { openTuning }, { renderReview }] = await Promise.all([import('../../app/reports.js'), import('../../app/tuning.js'), import('../../core/review.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  if (batch === undefined) {
    // A usage error with the command that works: the latest batch, or `next` before there is one.
    const { usageError } = await import('../../errors.js');
    const latest = tuning.state.batches[tuning.state.batches.length - 1]?.plan.batch;
    throw usageError('no-batch', `review needs the batch it reviews${latest ? ` (batches: 1 to ${latest})` : ': no batch is planned yet'}`,
      latest ? `git tune review ${latest}` : 'git tune next');
  }
  const review = await buildReview(tuning, batch, { env: io.env });
  const markdown = renderReview(review);
  if (opts.json) printJson(io, { ...review, markdown });
  else io.out(markdown);
}
