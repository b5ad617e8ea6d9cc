import { nextFor } from '../../app/decide.js';
import { executeRun, interruptOnSignals, type RunOutcome } from '../../app/run.js';
import { openTuning } from '../../app/tuning.js';
import { EXIT, TuneError, usageError } from '../../errors.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

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

function summary(outcome: RunOutcome): string {
  const r = outcome.results;
  const right = r.filter((x) => x.right === true).length;
  const wrong = r.filter((x) => x.right === false).length;
  const unknown = r.filter((x) => x.right === null && x.status !== 'void').length;
  const voids = r.filter((x) => x.status === 'void').length;
  const tokens = r.reduce((s, x) => s + x.tokens, 0);
  const cost = r.reduce((s, x) => s + x.costUsd, 0);
  const head = outcome.finished
    ? `${outcome.run}: ${outcome.void ? `VOID (${outcome.void})` : 'finished'}`
    : `${outcome.run}: stopped (${outcome.stopped}) after ${r.length} cases`;
  return `${head}\n  ${right} right, ${wrong} wrong, ${unknown} for the judge, ${voids} void; ${tokens} tokens, $${cost.toFixed(4)}${outcome.commit ? `\n  commit ${outcome.commit.slice(0, 7)}, tag tune/…/${outcome.run}` : ''}`;
}

async function go(io: CommandIO, opts: RunCommandOptions, final: boolean): Promise<void> {
  const concurrency = parseConcurrency(opts.concurrency);
  const interrupted = { value: false };
  const release = interruptOnSignals(interrupted, io.err);
  let outcome: RunOutcome;
  try {
    outcome = await executeRun(io.cwd, opts.tuning, { final, concurrency, target: opts.target }, {
      env: io.env, now: io.now, clock: io.clock, err: io.err, isTTY: io.isTTY, interrupted,
    });
  } finally {
    release();
  }
  const after = nextFor(await openTuning(io.cwd, opts.tuning));
  if (opts.json) printJson(io, { ...outcome, next: after });
  else {
    io.out(summary(outcome));
    io.err(`\nnext: ${renderNext(after)}`);
  }
  if (!outcome.finished) {
    const sandbox = outcome.stopped?.startsWith('sandbox');
    throw new TuneError(sandbox ? 'sandbox-down' : outcome.stopped?.startsWith('budget') ? 'budget-spent' : 'interrupted',
      `${outcome.run} did not finish: ${outcome.stopped}`, {
        exitCode: sandbox ? EXIT.runner : outcome.stopped === 'interrupted' ? EXIT.interrupted : EXIT.history,
        hint: after.command ?? undefined,
      });
  }
}

export const run = (io: CommandIO, opts: RunCommandOptions) => go(io, opts, false);
export const final = (io: CommandIO, opts: RunCommandOptions) => go(io, opts, true);
