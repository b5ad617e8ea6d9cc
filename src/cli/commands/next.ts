import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { NextStep } from '../../core/next.js';
import { act, json, tuningOpt } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { nextText, renderNext } from '../render-next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('next')
      .description('say the one next step and the exact command for it, from the branch history alone')
      .addOption(json())
      .addOption(tuningOpt())
      .addHelpText('after', `\n--json prints {kind, message, command, batch, half, run, notes}.`),
    run,
  );
}

/** The tuning read again after a step: its next step. */
export async function nextAfter(io: CommandIO, tuning: string | undefined, start = false): Promise<NextStep> {
  const [{ nextFor }, { openTuning, loadTuning }, { openRepo }] = await Promise.all([import('../../app/decide.js'), import('../../app/tuning.js'), import('../../git/open.js')]);
  // `next` is where a command starts (an interrupted step is finished first); after a step, the tuning is only read again.
  const read = start ? await openTuning(io.cwd, tuning) : await loadTuning(await openRepo(io.cwd), tuning);
  const step = nextFor(read);
  // A rewritten step: the command that puts the original back, when the reflog still holds it (src/app/rewritten.ts).
  return step.kind === 'repair' ? (await import('../../app/rewritten.js')).withRepair(read, step) : step;
}

/**
 * What a command that wrote a step prints: the tuning read again, then with
 * --json the outcome with its `next` in it; otherwise the lines on stdout and
 * `next: …` on stderr. Returns the next step.
 */
export async function printDone(io: CommandIO, opts: { json?: boolean; tuning?: string }, data: object, lines: readonly string[]): Promise<NextStep> {
  const after = await nextAfter(io, opts.tuning);
  if (opts.json) printJson(io, { ...data, next: after });
  else {
    for (const line of lines) io.out(line);
    io.err(`\nnext: ${renderNext(after)}`);
  }
  return after;
}

async function run(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const step = await nextAfter(io, opts.tuning, true);
  io.out(nextText(step, opts.json));
}
