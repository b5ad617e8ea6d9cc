import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('select')
      .description('order the cases into the selection (classes take turns; seeded); `limit` cuts the tail')
      .option('--dry-run', 'print the selection without committing it')
      .addOption(json()),
    run,
  );
}

async function run(io: CommandIO, opts: { json?: boolean; tuning?: string; dryRun?: boolean }): Promise<void> {
  const [{ computeSelection, writeSelection }, { openTuning }] = await Promise.all([import('../../app/select.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const selection = await computeSelection(tuning);
  const same =
    tuning.selection !== null &&
    JSON.stringify(tuning.selection.ids) === JSON.stringify(selection.ids) &&
    tuning.selection.datasetRev === selection.datasetRev;
  // select's own --dry-run (older than the writer's): the selection, printed as a real one is.
  const oid = opts.dryRun || same ? null : await writeSelection(tuning, selection, { env: io.env, now: io.now });
  if (opts.json) {
    printJson(io, { ...selection, changed: oid !== null, commit: oid });
    return;
  }
  const cut = selection.limit < selection.total ? ` (limit: ${selection.total - selection.limit} cases are never tuned against)` : '';
  io.out(`selection: ${selection.limit} of ${selection.total} cases${cut}`);
  io.out(selection.ids.map((id, i) => `${String(i + 1).padStart(4)}  ${id}`).join('\n'));
  if (same) io.err('the selection is unchanged: nothing to commit');
  else if (!opts.dryRun) await printDone(io, { tuning: opts.tuning }, {}, []);
}
