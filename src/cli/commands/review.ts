import { buildReview } from '../../app/reports.js';
import { openTuning } from '../../app/tuning.js';
import { renderReview } from '../../core/review.js';
import { printJson, type CommandIO } from '../io.js';

/** `git tune review <batch>`: the batch's pull-request body, markdown on stdout (--json: the data and the markdown). */
export async function run(io: CommandIO, batch: string, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const review = await buildReview(tuning, batch, { env: io.env });
  const markdown = renderReview(review);
  if (opts.json) printJson(io, { ...review, markdown });
  else io.out(markdown);
}
