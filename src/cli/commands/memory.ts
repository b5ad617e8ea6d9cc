import { nextFor } from '../../app/decide.js';
import { buildCandidate, makeCheckpoint, memoryDir, type MemoryOutcome } from '../../app/memory.js';
import { openTuning, type Tuning } from '../../app/tuning.js';
import { printJson, type CommandIO } from '../io.js';
import { renderNext } from './next.js';

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
  const after = nextFor(await openTuning(io.cwd, opts.tuning));
  const dir = memoryDir(tuning, outcome.step === 'candidate' ? 'candidate' : 'last-good');
  if (opts.json) {
    const { diff, ...rest } = outcome;
    printJson(io, { ...rest, dir, ...diff, next: after });
    return;
  }
  io.out(renderOutcome(outcome, dir));
  io.err(`\nnext: ${renderNext(after)}`);
}

export async function candidate(io: CommandIO, opts: MemoryOptions): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  await finish(io, opts, tuning, await buildCandidate(tuning, io));
}

export async function checkpoint(io: CommandIO, opts: MemoryOptions): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  await finish(io, opts, tuning, await makeCheckpoint(tuning, io));
}
