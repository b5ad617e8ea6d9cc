import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { Plan } from '../../app/plan.js';
import type { MemoryOutcome } from '../../app/memory.js';
import type { Tuning } from '../../app/tuning.js';
import { act, dryRunOpt, json } from '../command.js';
import type { CommandIO } from '../io.js';
import { printDone } from './next.js';

export function register(program: CommandUnknownOpts): void {
  const memory = program.command('memory').description('candidate memory and checkpoints: the last good memory every later run starts from, only ever replaced whole');
  act(
    memory
      .command('candidate')
      .description("build the candidate: last good memory + what the passing no-memory run's cases wrote (a commit)")
      .addOption(dryRunOpt())
      .addOption(json()),
    candidate,
  );
  act(
    memory
      .command('checkpoint')
      .description('make the candidate the last good memory, whole (a commit)')
      .addOption(dryRunOpt())
      .addOption(json()),
    checkpoint,
  );
}

interface MemoryOptions {
  json?: boolean;
  tuning?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function renderOutcome(outcome: MemoryOutcome, dir: string): string {
  const { diff } = outcome;
  const head = outcome.step === 'candidate'
    ? `candidate memory from ${outcome.run}${outcome.merge === 'command' ? ' (memory.merge command)' : ''}`
    : `checkpoint: batch ${outcome.batch}'s candidate is the last good memory`;
  const lines = [
    `${head}: ${dir}/ holds ${plural(diff.files, 'file')}, ${diff.bytes} bytes (${diff.added.length} added, ${diff.changed.length} changed, ${diff.deleted.length} deleted, ${diff.unchanged} unchanged)`,
    ...diff.added.map((c) => `  + ${c.path} (${c.bytes} bytes)`),
    ...diff.changed.map((c) => `  ~ ${c.path} (${c.bytes} bytes)`),
    ...diff.deleted.map((c) => `  - ${c.path} (${c.bytes} bytes)`),
  ];
  if (outcome.conflicts.length > 0) {
    lines.push(`${plural(outcome.conflicts.length, 'conflict')}, each kept (review them before the with-memory run):`);
    for (const c of outcome.conflicts) lines.push(`  ! ${c.message}`);
  }
  for (const i of outcome.ignored) lines.push(`  ignored: ${i}`);
  return lines.join('\n');
}

async function finish(io: CommandIO, opts: MemoryOptions, tuning: Tuning, outcome: MemoryOutcome): Promise<void> {
  const { memoryDir } = await import('../../app/memory.js');
  const dir = memoryDir(tuning, outcome.step === 'candidate' ? 'candidate' : 'last-good');
  const { diff, ...rest } = outcome;
  await printDone(io, opts, opts.json ? { ...rest, dir, ...diff } : {}, [renderOutcome(outcome, dir)]);
}

async function candidate(io: CommandIO, opts: MemoryOptions): Promise<void | Plan> {
  const [{ buildCandidate }, { openTuning }] = await Promise.all([import('../../app/memory.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const outcome = await buildCandidate(tuning, io);
  if (outcome instanceof Plan) return outcome;
  await finish(io, opts, tuning, outcome);
}

async function checkpoint(io: CommandIO, opts: MemoryOptions): Promise<void | Plan> {
  const [{ makeCheckpoint }, { openTuning }] = await Promise.all([import('../../app/memory.js'), import('../../app/tuning.js')]);
  const tuning = await openTuning(io.cwd, opts.tuning);
  const outcome = await makeCheckpoint(tuning, io);
  if (outcome instanceof Plan) return outcome;
  await finish(io, opts, tuning, outcome);
}
