import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { RunOutcome } from '../../app/run.js';
import { Plan } from '../../app/plan.js';
import { usageError } from '../../errors.js';
import { interruptedStop } from '../../core/run-stop.js';
import { runStopError } from '../../app/run-stop.js';
import { act, dryRunOpt, json } from '../command.js';
import type { CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('run')
      .description('run what is due (batch, half, run number): every case of it, at most `concurrency` at once; the run becomes a tagged commit')
      .option('--concurrency <n>', 'cases at once for this run (default: config concurrency)')
      .option('--target <name>', 'run against one of the configured target models')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `\nA run refuses to start over uncommitted prose edits, and when the budget is spent.\nCtrl-C stops launching cases; finished ones are kept, and \`git tune run\` resumes.`),
    (io, opts) => go(io, opts, false),
  );
}

export interface RunCommandOptions {
  concurrency?: string;
  target?: string;
  json?: boolean;
  tuning?: string;
}

function parseConcurrency(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw usageError('bad-concurrency', `--concurrency must be a whole number of at least 1 (got ${text})`, 'git tune run --concurrency 8');
  return n;
}

/** `git tune run`, and `git tune final` without --ci, --shard, --collect or --all-targets. */
export async function go(io: CommandIO, opts: RunCommandOptions, final: boolean): Promise<void | Plan> {
  const { executeRun, interruptOnSignals } = await import('../../app/run.js');
  const concurrency = parseConcurrency(opts.concurrency);
  const interrupted = { value: false };
  const release = interruptOnSignals(interrupted, io.err);
  let outcome: RunOutcome | Plan;
  try {
    outcome = await executeRun(io.cwd, opts.tuning, { final, concurrency, target: opts.target }, {
      env: io.env, now: io.now, clock: io.clock, err: io.err, isTTY: io.isTTY, interrupted, dryRun: io.dryRun,
    });
  } finally {
    release();
  }
  // The run-start commit is the first write: a dry run stops there, before any runner starts.
  if (outcome instanceof Plan) return outcome.followedBy('start the runner on each case to run, then record the run as a tagged commit');
  const after = await printDone(io, opts, outcome, [(await import('../../core/run-summary.js')).runSummary(outcome)]);
  if (!outcome.finished) {
    throw runStopError(outcome.stopped ?? interruptedStop(), outcome.run, after.command ?? undefined);
  }
}
