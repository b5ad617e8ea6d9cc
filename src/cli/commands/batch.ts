import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { historyError, usageError } from '../../errors.js';
import { act, json } from '../command.js';
import { printJson, type CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  act(
    program
      .command('batch')
      .description('plan the next batch: new cases plus recheck cases, one commit')
      .option('--size <n>', 'override the size of this one batch')
      .option('--dry-run', 'print the plan without writing (also when no batch is due yet)')
      .addOption(json())
      .addHelpText('after', `\n--dry-run --json prints {batch, size, why, kind, new, recheck}.`),
    run,
  );
}

export interface BatchOptions {
  size?: string;
  dryRun?: boolean;
  json?: boolean;
  tuning?: string;
}

function parseSize(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw usageError('bad-size', `--size must be a whole number of at least 1 (got ${text})`, 'git tune batch --size 5');
  return n;
}

async function run(io: CommandIO, opts: BatchOptions): Promise<void> {
  const [{ planNextBatch, writePlan }, { nextFor }, { openTuning }] = await Promise.all([
    import('../../app/batch.js'), import('../../app/decide.js'), import('../../app/tuning.js'),
  ]);
  const size = parseSize(opts.size);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const step = nextFor(tuning);
  const plan = tuning.config && tuning.selection ? planNextBatch(tuning, size) : null;
  // batch's own --dry-run (older than the writer's): the plan, also when no batch is due yet.
  if (opts.dryRun) {
    if (!plan) throw historyError('no-batch', `no batch to plan: ${step.message}`, step.command ?? undefined);
    if (opts.json) printJson(io, { batch: plan.batch, size: plan.size, why: plan.why, kind: plan.kind, new: plan.new, recheck: plan.recheck });
    else {
      io.out(renderPlan(plan));
      if (step.kind !== 'batch') io.err(`(not due yet: ${step.message})`);
    }
    return;
  }
  if (step.kind !== 'batch' || !plan) {
    throw historyError('batch-not-due', `no batch is due: ${step.message}`, step.command ?? undefined);
  }
  const oid = await writePlan(tuning, plan, { env: io.env, now: io.now });
  if (opts.json) printJson(io, { ...plan, commit: oid });
  else await printDone(io, opts, {}, [renderPlan(plan)]);
}

function renderPlan(plan: { batch: number; size: number; why: string; kind: string; new: string[]; recheck: string[] }): string {
  return [
    `batch ${plan.batch}: ${plan.new.length} ${plan.kind} + ${plan.recheck.length} recheck`,
    `  why: ${plan.why}`,
    `  ${plan.kind}: ${plan.new.join(', ') || '(none)'}`,
    `  recheck: ${plan.recheck.join(', ') || '(none)'}`,
  ].join('\n');
}
