import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('report <run>')
      .description('the per-case table of a run: right/wrong, rubric, tokens, calls, memory, time, cost')
      .option('--vs <run>', 'compare with an earlier run of the same cases')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

async function run(io: CommandIO, runName: string, opts: { vs?: string; json?: boolean; tuning?: string }): Promise<void> {
  const [{ readRunResults }, { openTuning }, { caseRows, renderCaseTable }] = await Promise.all([
    import('../../app/results.js'), import('../../app/tuning.js'), import('../../core/report.js'),
  ]);
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
