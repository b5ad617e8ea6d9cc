import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { act, json, tuningOpt } from '../command.js';
import type { GitRepo } from '../../git/types.js';
import { printJson, table, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('log')
      .description('the history of the tuning as a table of steps and runs')
      .option('--abandoned', 'list the run tags and logs of abandoned steps moved aside (after a reset, a rebase or git tune undo)')
      .addOption(json())
      .addOption(tuningOpt()),
    run,
  );
}

/** `git tune log`: every step of the tuning as a table, newest first; edits say where they stand. */
async function run(io: CommandIO, opts: { abandoned?: boolean; json?: boolean; tuning?: string }): Promise<void> {
  const [{ logEntries }, { openTuning }] = await Promise.all([import('../../app/reports.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  if (opts.abandoned) {
    await printAbandoned(io, tuning.repo, tuning.name, opts.json === true);
    return;
  }
  const entries = logEntries(tuning);
  if (opts.json) {
    printJson(io, { tuning: tuning.name, branch: `tune/${tuning.name}`, tip: tuning.tip, steps: entries });
    return;
  }
  const rows = entries.map((e) => [
    String(e.index), e.commit.slice(0, 7), e.step, e.run ?? '', e.edit ? e.edit.status : '',
    [e.what, ...e.difficult.map((d) => `difficult ${d}`)].join('; '),
  ]);
  io.out(`tuning ${tuning.name}: ${entries.length} steps, newest first\n\n${table(['#', 'commit', 'step', 'run', 'edit', 'what'], rows)}`);
}

/** `git tune log --abandoned`: each move aside (newest first) and the runs it keeps, with their old commits. */
async function printAbandoned(io: CommandIO, repo: GitRepo, tuning: string, asJson: boolean): Promise<void> {
  const { listAbandoned } = await import('../../app/abandon.js');
  const moves = (await listAbandoned(repo, tuning)).reverse();
  if (asJson) {
    printJson(io, { tuning, moves: moves.map((m) => ({ n: m.n, at: m.at, why: m.why, steps: m.steps, from: m.from, tip: m.tip, runs: m.runs, kept: m.kept, logs: m.logs, refs: `refs/tune-abandoned/${tuning}/${m.n}/` })) });
    return;
  }
  if (moves.length === 0) {
    io.out(`tuning ${tuning}: no abandoned steps were moved aside`);
    return;
  }
  const rows = moves.flatMap((m) => {
    const runs = m.runs.length > 0 ? m.runs : [{ run: '', commit: '' }];
    return runs.map((r, i) => [
      i === 0 ? String(m.n) : '', i === 0 ? m.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '', i === 0 ? String(m.steps) : '',
      r.run, r.commit.slice(0, 7), r.run === '' ? '' : m.kept.some((k) => k.run === r.run) ? 'kept aside' : 'back on the branch', i === 0 ? m.why : '',
    ]);
  });
  const steps = moves.reduce((n, m) => n + m.steps, 0);
  io.out(`tuning ${tuning}: ${steps} abandoned step${steps === 1 ? '' : 's'} in ${moves.length} move${moves.length === 1 ? '' : 's'}, newest first (refs/tune-abandoned/${tuning}/<n>/)\n\n${table(['#', 'moved', 'steps', 'run', 'commit', 'where', 'why'], rows)}`);
}
