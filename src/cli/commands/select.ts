import { nextFor } from '../../app/decide.js';
import { computeSelection, writeSelection } from '../../app/select.js';
import { openTuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

export async function run(io: CommandIO, opts: { json?: boolean; tuning?: string; dryRun?: boolean }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const selection = await computeSelection(tuning);
  const same =
    tuning.selection !== null &&
    JSON.stringify(tuning.selection.ids) === JSON.stringify(selection.ids) &&
    tuning.selection.datasetRev === selection.datasetRev;
  const oid = opts.dryRun || same ? null : await writeSelection(tuning, selection, io);
  if (opts.json) {
    printJson(io, { ...selection, changed: oid !== null, commit: oid });
    return;
  }
  const cut = selection.limit < selection.total ? ` (limit: ${selection.total - selection.limit} cases are never tuned against)` : '';
  io.out(`selection: ${selection.limit} of ${selection.total} cases${cut}`);
  io.out(selection.ids.map((id, i) => `${String(i + 1).padStart(4)}  ${id}`).join('\n'));
  if (same) io.err('the selection is unchanged: nothing to commit');
  else if (!opts.dryRun) io.err(`\nnext: ${renderNext(nextFor(await openTuning(io.cwd, opts.tuning)))}`);
}
