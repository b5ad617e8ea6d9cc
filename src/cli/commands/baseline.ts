import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import { usageError } from '../../errors.js';
import { act, dryRunOpt, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('baseline')
      .description("run the original prose (the tuning's init commit) on the selection and the held-out set, once; the final check compares with it")
      .option('--concurrency <n>', 'cases at once (default: config concurrency)')
      .option('--held-out-only', 'run the held-out set only (cheaper; the side-by-side then has no baseline for the selection)')
      .addOption(dryRunOpt())
      .addOption(json())
      .addHelpText('after', `
The init commit's tree is copied to a temporary folder outside the repository and the runner runs
there: your working tree, index and HEAD are never touched, and the copy is removed after, also
after a failure. The results are one commit (.tune/<name>/baseline/results.json, trailers
Tune-Selection-Score and Tune-Held-Out-Score). Run it again after changing the held-out set.
The final check fails when the held-out set gets more than heldOut.maxDrop cases fewer right
than the baseline did.

Example:
  git tune dataset import --held-out held-out.yaml && git tune baseline`),
    run,
  );
}

interface BaselineOptions {
  concurrency?: string;
  heldOutOnly?: boolean;
  json?: boolean;
  tuning?: string;
}

async function run(io: CommandIO, opts: BaselineOptions): Promise<void | Plan> {
  const concurrency = opts.concurrency === undefined ? undefined : Number(opts.concurrency);
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < 1)) {
    throw usageError('bad-concurrency', `--concurrency must be a whole number of at least 1 (got ${opts.concurrency})`, 'git tune baseline --concurrency 8');
  }
  const [{ runBaseline }, { interruptOnSignals }, { openTuning }] = await Promise.all([
    import('../../app/baseline.js'), import('../../app/run.js'), import('../../app/tuning.js'),
  ]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const interrupted = { value: false };
  const release = interruptOnSignals(interrupted, io.err);
  let outcome: Awaited<ReturnType<typeof runBaseline>>;
  try {
    outcome = await runBaseline(tuning, { concurrency, heldOutOnly: opts.heldOutOnly }, {
      env: io.env, now: io.now, clock: io.clock, err: io.err, isTTY: io.isTTY, interrupted, dryRun: io.dryRun,
    });
  } finally {
    release();
  }
  if (outcome instanceof Plan) return outcome;
  if (opts.json) {
    printJson(io, outcome);
    return;
  }
  const line = (name: string, s: { right: number; cases: number; tokens: number; costUsd: number }) =>
    `  ${name}: ${s.right}/${s.cases} right, ${s.tokens.toLocaleString('en-US')} tokens, $${s.costUsd.toFixed(4)}`;
  io.out([
    `baseline of ${outcome.init.slice(0, 7)} (the prose at the tuning's start), commit ${outcome.commit.slice(0, 7)}`,
    line('selection', outcome.selection),
    ...(outcome.heldOut ? [line('held-out', outcome.heldOut)] : ['  no held-out set: `git tune dataset import --held-out <file>` adds one']),
  ].join('\n'));
}
