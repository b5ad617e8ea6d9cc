import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { usageError } from '../../errors.js';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('undo [n]')
      .description('move the tuning branch back n steps (default 1) the safe way, and print the command that undoes the undo')
      .option('--force', 'undo steps a remote-tracking branch already holds (the remote then needs a forced push)')
      .option('--dry-run', 'print what it would drop, and change nothing')
      .addOption(json())
      .addOption(tuningOpt())
      .addHelpText('after', `
Every commit on the tuning branch's first-parent line counts as one step: a
step git-tune wrote, a hand commit, or a step whose trailers a rewrite lost.
Refused with uncommitted prose or .tune/<name>/ changes, past the init step,
and over steps already pushed unless --force. With the branch checked out,
the files the dropped steps changed go back with it (as git reset --keep).
The run tags and logs of the dropped steps are moved aside under
refs/tune-abandoned/<name>/ (git tune log --abandoned), so running again
finds their names free. The branch's reflog gets the move: the printed
git reset --keep <old tip> (or tune/<name>@{1}) puts it back, tags included.`),
    run,
  );
}

async function run(io: CommandIO, n: string | undefined, opts: { force?: boolean; dryRun?: boolean; json?: boolean; tuning?: string }): Promise<void> {
  const count = n === undefined ? 1 : /^\d+$/.test(n) ? Number(n) : NaN;
  if (!Number.isInteger(count) || count < 1) throw usageError('bad-count', `the number of steps to undo must be a whole number from 1 on, not ${JSON.stringify(n)}`, 'git tune undo 1');
  const [{ undoSteps }, { openTuning }] = await Promise.all([import('../../app/undo.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const outcome = await undoSteps(tuning, { count, force: opts.force, dryRun: opts.dryRun, env: io.env, now: io.now });
  const steps = `${outcome.dropped.length} step${outcome.dropped.length === 1 ? '' : 's'}`;
  const lines = [
    `${outcome.dryRun ? 'would undo' : 'undid'} ${steps} of ${outcome.branch}: ${outcome.from.slice(0, 7)} → ${outcome.to.slice(0, 7)}`,
    ...outcome.dropped.map((d) => `  ${d.commit.slice(0, 7)} ${d.subject}${d.step === null ? '   (no step trailers)' : ''}`),
    ...(outcome.pushed.length > 0 ? [`warning: ${outcome.pushed.join(', ')} still holds them: a push now needs --force`] : []),
    ...(outcome.runs.length > 0 ? [`run tags ${outcome.dryRun ? 'to move' : 'moved'} aside: ${outcome.runs.join(', ')} (git tune log --abandoned)`] : []),
    ...(outcome.dryRun ? [] : [`to undo this undo: ${outcome.restore}`, `  (the same through the reflog: ${outcome.reflog})`]),
  ];
  if (outcome.dryRun) {
    if (opts.json) printJson(io, outcome);
    else io.out(lines.join('\n'));
    return;
  }
  await printDone(io, { json: opts.json, tuning: opts.tuning }, outcome, lines);
}
