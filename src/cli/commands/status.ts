import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import { printJson, table, type CommandIO } from '../io.js';
import { renderNext } from '../render-next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('status')
      .description('where the tuning stands: dataset, selection, batches, runs, difficult cases, usage')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

async function run(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const [{ statusWithRepair }, { openTuning }, { listAbandoned, stillAbandoned }] = await Promise.all([import('../../app/status.js'), import('../../app/tuning.js'), import('../../app/abandon.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const moves = await listAbandoned(tuning.repo, tuning.name);
  const report = await statusWithRepair(tuning, moves.length === 0 ? [] : stillAbandoned(moves, tuning.commits));
  if (opts.json) {
    // Each case's right-rate and token spread from the history, repeats included (docs/method.md#noise): read for --json only.
    const { casesNoise } = await import('../../app/noise.js');
    printJson(io, { ...report, noise: await casesNoise(tuning) });
    return;
  }
  const lines = [
    `tuning ${report.tuning} on ${report.branch} (${report.commits} steps, tip ${report.tip.slice(0, 7)})`,
    `dataset: ${report.dataset ? `${report.dataset.cases} cases (rev ${report.dataset.rev})` : 'none'}; selection: ${report.selection ? `${report.selection.selected} of ${report.selection.total}` : 'none'}`,
    `difficult: ${report.difficult.open} open, ${report.difficult.fixed} fixed, ${report.difficult.stuck} stuck; usage: ${report.usage.tokens} tokens, $${report.usage.costUsd.toFixed(4)}`,
  ];
  const rows = report.batches.flatMap((b) => {
    const head = [`batch ${b.batch}`, `${b.new} ${b.kind} + ${b.recheck} recheck`];
    if (b.runs.length === 0) return [[...head, '(not run)', '', b.checkpoint ? 'yes' : '']];
    return b.runs.map((r, i) => [
      i === 0 ? head[0]! : '', i === 0 ? head[1]! : '', r.run,
      r.finished ? (r.verdict ?? 'not graded') : 'unfinished', i === b.runs.length - 1 && b.checkpoint ? 'yes' : '',
    ]);
  });
  for (const f of report.final) rows.push(['final', 'selection', f.run, f.finished ? (f.verdict ?? 'not graded') : 'unfinished', '']);
  if (rows.length > 0) lines.push('', table(['batch', 'cases', 'run', 'verdict', 'checkpoint'], rows));
  if (report.edits.length > 0) {
    lines.push('', table(['edit', 'after', 'where it stands'], report.edits.map((e) => [`${e.commit.slice(0, 7)}${e.hand ? ' (hand)' : ''}`, e.run, e.fate])));
  }
  for (const r of report.rewritten) lines.push(`rewritten: ${r.says}`);
  if (report.repair) {
    lines.push(`repair: ${report.repair.command}${report.repair.restore ? `   (or back to the last good step: ${report.repair.undo})` : '   (the reflog no longer holds the original steps)'}`);
  }
  if (report.abandoned.moves > 0) {
    const { steps, moves, last } = report.abandoned;
    lines.push('', `abandoned: ${steps} step${steps === 1 ? '' : 's'} left the branch (${moves} move${moves === 1 ? '' : 's'} aside, the last at ${last}): git tune log --abandoned`);
  }
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  lines.push('', `next: ${renderNext(report.next)}`);
  io.out(lines.join('\n'));
}
