import { promises as fs } from 'node:fs';
import path from 'node:path';
import { autoTuning, stopFile } from '../../app/auto.js';
import { openTuning } from '../../app/tuning.js';
import { usageError } from '../../errors.js';
import { printJson, type CommandIO } from '../io.js';
import { runCli } from '../program.js';

export interface AutoCommandOptions {
  until?: string;
  json?: boolean;
  plain?: boolean;
}

export async function run(io: CommandIO, opts: AutoCommandOptions): Promise<void> {
  if (opts.until !== undefined && opts.until !== 'final') {
    throw usageError('bad-until', `--until takes \`final\` (got ${opts.until})`, 'git tune auto --until final');
  }
  const result = await autoTuning(io.cwd, {
    until: opts.until === 'final' ? 'final' : undefined,
    env: io.env,
    say: (line) => io.err(line),
    cli: (args) => runCli(args),
  });
  if (opts.json) printJson(io, result);
  else io.out(`${result.tuning}: ${result.outcome}: ${result.message} (${result.steps.length} steps)`);
  process.exitCode = result.exitCode;
}

/** `git tune stop`: ask a running auto to stop at the next safe point. */
export async function stop(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const file = stopFile(tuning.repo.gitdir, tuning.name);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, `${io.now.toISOString()}\n`);
  if (opts.json) printJson(io, { tuning: tuning.name, requested: true });
  else io.out(`asked auto on ${tuning.name} to stop: running cases finish and are kept, then it exits`);
}
