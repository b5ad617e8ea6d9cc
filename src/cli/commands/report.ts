import { readRunResults } from '../../app/results.js';
import { openTuning } from '../../app/tuning.js';
import { caseRows, renderCaseTable } from '../../core/report.js';
import { printJson, type CommandIO } from '../io.js';

export async function run(io: CommandIO, runName: string, opts: { vs?: string; json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const now = await readRunResults(tuning, runName);
  const before = opts.vs ? await readRunResults(tuning, opts.vs) : null;
  const rows = caseRows(now.results, before?.results);
  if (opts.json) {
    printJson(io, { run: runName, vs: opts.vs ?? null, rows });
    return;
  }
  io.out(`## ${runName}${opts.vs ? ` vs ${opts.vs}` : ''}\n`);
  io.out(renderCaseTable(rows, before !== null));
}
