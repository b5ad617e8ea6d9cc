import { nextFor } from '../../app/decide.js';
import { openTuning } from '../../app/tuning.js';
import type { NextStep } from '../../core/next.js';
import { printJson, type CommandIO } from '../io.js';

export function renderNext(step: NextStep): string {
  const lines = [step.message];
  if (step.command) lines.push(`  ${step.command}`);
  for (const note of step.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}

export async function run(io: CommandIO, opts: { json?: boolean; tuning?: string }): Promise<void> {
  const tuning = await openTuning(io.cwd, opts.tuning);
  const step = nextFor(tuning);
  if (opts.json) printJson(io, step);
  else io.out(renderNext(step));
}
